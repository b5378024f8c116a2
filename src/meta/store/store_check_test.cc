// MetaStore::Check against random workloads, injected corruption, many
// threads, and kill -9 of a process in the middle of its transactions.
#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <random>
#include <set>
#include <thread>

#include "ec/cells.h"
#include "meta/store/sqlite/sqlite_db.h"
#include "meta/store/store_test_util.h"

namespace t0fs::meta {
namespace {

using testing::OpenOrDie;
using testing::RandomWorkload;
using testing::StoreTest;
using testing::T;
using testing::TempDir;

std::string Join(const std::vector<std::string>& lines) {
  std::string out;
  for (const std::string& l : lines) out += l + "\n";
  return out;
}

TEST_P(StoreTest, CheckIsCleanAfterARandomWorkload) {
  auto targets = testing::RegisterTargets(*store_, 1, 3);
  SessionId session = NewSession();
  RandomWorkload work(*store_, 7, session, targets);
  for (int step = 1; step <= 4000; ++step) {
    ASSERT_OK(work.Step());
    if (step % 500 == 0) {
      auto problems = CheckProblems();
      ASSERT_TRUE(problems.empty()) << "after step " << step << ":\n" << Join(problems);
    }
  }
  StoreCounts before = Counts();
  EXPECT_GT(before.files + before.directories, 10u);
  // Closing the session frees every file unlinked while open.
  ASSERT_OK(store_->CloseSession(session));
  auto problems = CheckProblems();
  EXPECT_TRUE(problems.empty()) << Join(problems);
  EXPECT_EQ(Counts().open_handles, 0u);
}

// `t0fs fsck --remove-orphans`: a chunk file in no layout goes to its
// node's garbage queue while meta has no row of its chunk (ids are never
// given out twice) or no replica of it on that node, once, and only for a
// volume of that node; a cell only while its chunk has no row.
TEST_P(StoreTest, OrphansWithoutAChunkRowAreQueuedForTheirNode) {
  auto n1 = testing::RegisterTargets(*store_, 1, 1);
  auto n2 = testing::RegisterTargets(*store_, 2, 1);
  InodeId f = MkFile(kRootInode, "f");
  auto layout = store_->Allocate(OpToken{}, f, {0}, {n1[0]});
  ASSERT_OK(layout);
  const ChunkId live = (*layout)[0].replicas[0].chunk;
  const ChunkId gone(live.value() + 1000);  // never in a layout, as one truncated away
  const ChunkId cell_of_live = ec::CellChunkId(live, 1);
  const ChunkId cell_of_gone = ec::CellChunkId(gone, 0);
  const uint64_t garbage_before = Counts().garbage_chunks;
  auto queued = store_->QueueOrphans(
      NodeId(1),
      {OrphanFile{live, n1[0].volume, 1}, OrphanFile{gone, n1[0].volume, 3},
       OrphanFile{cell_of_live, n1[0].volume, 1}, OrphanFile{cell_of_gone, n1[0].volume, 1}});
  ASSERT_OK(queued);
  EXPECT_EQ(*queued, 2u);  // the chunk meta has, and a cell of it, are left
  auto taken = store_->TakeGarbage(NodeId(1), 10);
  ASSERT_OK(taken);
  std::set<ChunkId> removed;
  for (const GarbageChunk& g : *taken) {
    EXPECT_EQ(g.volume, n1[0].volume);
    removed.insert(g.chunk);
  }
  EXPECT_EQ(removed, (std::set<ChunkId>{gone, cell_of_gone}));
  EXPECT_EQ((*taken)[0].chunk == gone ? (*taken)[0].version : (*taken)[1].version, 3u);
  // Already queued: not again.
  auto again = store_->QueueOrphans(NodeId(1), {OrphanFile{gone, n1[0].volume, 3}});
  ASSERT_OK(again);
  EXPECT_EQ(*again, 0u);
  // The same id on another node is that node's own orphan.
  auto other = store_->QueueOrphans(NodeId(2), {OrphanFile{gone, n2[0].volume, 3}});
  ASSERT_OK(other);
  EXPECT_EQ(*other, 1u);
  // A volume of another node: refused, nothing queued.
  const ChunkId third(live.value() + 2000);
  EXPECT_CODE(store_->QueueOrphans(NodeId(1), {OrphanFile{third, n1[0].volume, 1},
                                               OrphanFile{third, n2[0].volume, 1}}),
              kInvalidArgument);
  // A file of the live chunk on a node its layout does not name (a stale
  // writer made it again there): queued; a cell of it, not.
  auto elsewhere = store_->QueueOrphans(
      NodeId(2), {OrphanFile{live, n2[0].volume, 1}, OrphanFile{cell_of_live, n2[0].volume, 1}});
  ASSERT_OK(elsewhere);
  EXPECT_EQ(*elsewhere, 1u);
  // Placed there again by repair: the removal is withdrawn.
  ASSERT_OK(store_->AddPendingReplica(live, NodeId(2), n2[0].volume));
  auto taken2 = store_->TakeGarbage(NodeId(2), 10);
  ASSERT_OK(taken2);
  for (const GarbageChunk& g : *taken2) EXPECT_NE(g.chunk, live);
  EXPECT_EQ(Counts().garbage_chunks, garbage_before + 3);
  EXPECT_TRUE(CheckProblems().empty()) << Join(CheckProblems());
}

TEST_P(StoreTest, ConcurrentWorkloadsStayConsistent) {
  auto targets = testing::RegisterTargets(*store_, 1, 2);
  constexpr int kThreads = 4;
  std::vector<std::thread> threads;
  std::vector<Status> results(kThreads);
  for (int t = 0; t < kThreads; ++t) {
    SessionId session = NewSession();
    threads.emplace_back([&, t, session] {
      RandomWorkload work(*store_, 100 + static_cast<uint64_t>(t), session, targets);
      for (int step = 0; step < 600; ++step) {
        Status st = work.Step();
        if (!st.ok()) {
          results[t] = st;
          return;
        }
      }
    });
  }
  // Readers alongside the writers.
  std::thread reader([&] {
    for (int i = 0; i < 200; ++i) {
      bool eof = false;
      EXPECT_OK(store_->ReadDir(kRootInode, 0, 50, true, &eof));
      EXPECT_OK(store_->Counts());
    }
  });
  for (auto& th : threads) th.join();
  reader.join();
  for (const Status& st : results) EXPECT_TRUE(st.ok()) << st.ToString();
  auto problems = CheckProblems();
  EXPECT_TRUE(problems.empty()) << Join(problems);
}

TEST_P(StoreTest, ConcurrentCreatesAndRenamesIntoOneDirectory) {
  InodeId shared = MkDir(kRootInode, "shared");
  constexpr int kThreads = 4;
  constexpr int kFiles = 100;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::string prefix = "t" + std::to_string(t);
      auto own = Make(kRootInode, prefix, S_IFDIR | 0755);
      ASSERT_OK(own);
      for (int i = 0; i < kFiles; ++i) {
        std::string name = prefix + "-" + std::to_string(i);
        ASSERT_OK(Make(own->attr.ino, name, S_IFREG | 0644));
        ASSERT_OK(store_->Rename(OpToken{}, own->attr.ino, name, shared, name, 0, T(200)));
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(Names(shared).size(), static_cast<size_t>(kThreads * kFiles));
  EXPECT_EQ(Attr(kRootInode).nlink, 2u + 1 + kThreads);
  auto problems = CheckProblems();
  EXPECT_TRUE(problems.empty()) << Join(problems);
}

// ---- injected corruption ----

// A small clean tree in a file store: /d (ino 2), /d/sub (3), /d/f (4) with
// two chunks and an open handle. Corruption is injected with raw SQL.
class CorruptionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = dir_.File("meta.db");
    auto store = OpenOrDie(path_);
    ASSERT_NE(store, nullptr);
    auto targets = testing::RegisterTargets(*store, 1, 1);
    MakeNodeArgs d{kRootInode, "d", S_IFDIR | 0755, 0, 0, 0, true, "", 0};
    ASSERT_EQ(store->MakeNode(OpToken{}, d, T(1))->attr.ino, InodeId(2));
    MakeNodeArgs sub{InodeId(2), "sub", S_IFDIR | 0755, 0, 0, 0, true, "", 0};
    ASSERT_EQ(store->MakeNode(OpToken{}, sub, T(1))->attr.ino, InodeId(3));
    MakeNodeArgs f{InodeId(2), "f", S_IFREG | 0644, 0, 0, 0, true, "", 4096};
    ASSERT_EQ(store->MakeNode(OpToken{}, f, T(1))->attr.ino, InodeId(4));
    ASSERT_OK(store->Allocate(OpToken{}, InodeId(4), {0, 1}, targets));
    auto session = store->OpenSession("c", "h", T(1));
    ASSERT_OK(session);
    ASSERT_OK(store->Open(OpToken{}, *session, InodeId(4), O_RDWR, T(1)));
    ASSERT_OK(store->MakeNode(OpToken{*session, 0, 1},
                              MakeNodeArgs{InodeId(3), "x", S_IFIFO | 0600, 0, 0, 0, true, "", 0},
                              T(1)));
    auto problems = store->Check();
    ASSERT_OK(problems);
    ASSERT_TRUE(problems->empty()) << Join(*problems);
  }

  // Injects `sql` and returns what Check reports.
  std::vector<std::string> Inject(const std::string& sql) {
    {
      auto raw = sqlite::Db::Open(path_, std::chrono::milliseconds(1000));
      EXPECT_OK(raw);
      if (!raw.ok()) return {};
      EXPECT_OK(raw->Exec(sql));
    }
    auto store = OpenOrDie(path_);
    if (store == nullptr) return {};
    auto problems = store->Check();
    EXPECT_OK(problems);
    return problems.ok() ? *problems : std::vector<std::string>{};
  }

  void ExpectReported(const std::string& sql, const std::string& needle) {
    std::vector<std::string> problems = Inject(sql);
    bool found = false;
    for (const std::string& p : problems) found = found || p.find(needle) != std::string::npos;
    EXPECT_TRUE(found) << "looking for '" << needle << "' after " << sql << "\n" << Join(problems);
  }

  TempDir dir_;
  std::string path_;
};

TEST_F(CorruptionTest, EntryToMissingInode) {
  ExpectReported("INSERT INTO dentries (parent, name, ino) VALUES (1, X'7a', 999)",
                 "points to missing inode 999");
}
TEST_F(CorruptionTest, DeletedInode) {
  ExpectReported("DELETE FROM inodes WHERE ino = 4",
                 "'f' in directory 2 points to missing inode 4");
}
TEST_F(CorruptionTest, FileLinkCount) {
  ExpectReported("UPDATE inodes SET nlink = 5 WHERE ino = 4", "inode 4 has nlink 5 but 1 entries");
}
TEST_F(CorruptionTest, DirectoryLinkCount) {
  ExpectReported("UPDATE inodes SET nlink = 7 WHERE ino = 2", "directory 2 has nlink 7");
}
TEST_F(CorruptionTest, DirectoryWithTwoParents) {
  ExpectReported("INSERT INTO dentries (parent, name, ino) VALUES (1, X'7a', 3)",
                 "directory 3 has 2 parent entries");
}
TEST_F(CorruptionTest, Cycle) {
  // /d moves into its own child /d/sub: d and sub only reach each other.
  std::vector<std::string> problems = Inject("UPDATE dentries SET parent = 3 WHERE ino = 2");
  std::string all = Join(problems);
  EXPECT_NE(all.find("is part of a cycle"), std::string::npos) << all;
  EXPECT_NE(all.find("inode 2 (nlink 3) is unreachable from the root"), std::string::npos) << all;
  EXPECT_NE(all.find("inode 4 (nlink 1) is unreachable"), std::string::npos) << all;
}
TEST_F(CorruptionTest, DetachedDirectory) {
  ExpectReported("DELETE FROM dentries WHERE ino = 3", "inode 3 (nlink 2) is unreachable");
}
TEST_F(CorruptionTest, LeakedOrphan) {
  ExpectReported(
      "DELETE FROM dentries WHERE ino = 4; UPDATE inodes SET nlink = 0 WHERE ino = 4; "
      "DELETE FROM handles",
      "inode 4 is unlinked and not open but was not freed");
}
TEST_F(CorruptionTest, ChunkOfMissingInode) {
  ExpectReported("INSERT INTO chunks (ino, idx) VALUES (999, 0)", "belongs to inode 999");
}
TEST_F(CorruptionTest, ChunkWithoutReplicas) {
  ExpectReported("DELETE FROM replicas WHERE chunk_id = (SELECT MIN(id) FROM chunks)",
                 "has no replica");
}
TEST_F(CorruptionTest, ReplicaOfMissingChunk) {
  ExpectReported("INSERT INTO replicas VALUES (4242, 0, 1, 1, 0, 0)", "replicas of chunk 4242");
}
TEST_F(CorruptionTest, ReplicaOnUnknownVolume) {
  ExpectReported("UPDATE replicas SET volume = 999", "unknown volume 999");
}
TEST_F(CorruptionTest, ReplicaOnUnknownNode) {
  ExpectReported("UPDATE replicas SET node = 77", "of node 77");
}
TEST_F(CorruptionTest, ChunkIdUsedTwice) {
  ExpectReported(
      "INSERT INTO garbage (chunk_id, ino, idx, node, volume, version) "
      "SELECT chunk_id, 4, 0, node, volume, 0 FROM replicas LIMIT 1",
      "both in a layout and in the garbage queue");
}
TEST_F(CorruptionTest, ReplacedReplicaAwaitingRemovalIsNotAProblem) {
  // Repair moved chunk #0 of /d/f from node 9 (down) to its node: the old
  // copy waits in the garbage queue until node 9 takes it. Expected state.
  std::vector<std::string> problems = Inject(
      "INSERT INTO garbage (chunk_id, ino, idx, node, volume, version) "
      "SELECT chunk_id, 4, 0, 9, 9, 1 FROM replicas LIMIT 1");
  EXPECT_TRUE(problems.empty()) << Join(problems);
}
TEST_F(CorruptionTest, LiveReplicaQueuedForRemovalNamesTheNode) {
  ExpectReported(
      "INSERT INTO garbage (chunk_id, ino, idx, node, volume, version) "
      "SELECT chunk_id, 4, 0, node, volume, 0 FROM replicas WHERE chunk_id = "
      "(SELECT MIN(chunk_id) FROM replicas)",
      "on node 1 is both in a layout and in the garbage queue");
}
TEST_F(CorruptionTest, BelowObjectiveIsReportedAsSuch) {
  std::vector<std::string> problems = Inject("UPDATE inodes SET replicas = 2 WHERE ino = 4");
  ASSERT_EQ(problems.size(), 2u) << Join(problems);
  EXPECT_EQ(problems[0],
            std::string(MetaStore::kBelowObjective) +
                "file 4 /d/f chunk #0 has 1 healthy replica(s), its objective wants 2");
  EXPECT_EQ(problems[1].rfind(MetaStore::kBelowObjective, 0), 0u) << problems[1];
}
// Replicas on nodes the caller knows are down are healthy but not readable:
// a file held only there is named as unavailable; with a protection goal it
// was lost before it was protected. A goal not reached past its deadline
// (the file changed at T(1), long ago) is named too.
TEST_F(CorruptionTest, UnreadableAndOverdueFilesAreNamed) {
  auto store = OpenOrDie(path_);
  ASSERT_NE(store, nullptr);
  auto down = store->Check({NodeId(1)});
  ASSERT_OK(down);
  ASSERT_EQ(down->size(), 2u) << Join(*down);
  EXPECT_EQ((*down)[0],
            std::string(MetaStore::kBelowObjective) +
                "file 4 /d/f chunk #0 has 0 readable healthy replica(s), its objective wants 1 "
                "(node(s) 1 down; unavailable until one comes back)");

  const Protection protect{ProtectKind::kReplicas, 2, 0, 60, KeepLocal::kKeep};
  ASSERT_OK(
      store->SetObjective(InodeId(4), Objective{1, Placement::kLocal, {}, 0, protect}, false));
  auto lost = store->Check({NodeId(1)});
  ASSERT_OK(lost);
  ASSERT_EQ(lost->size(), 2u) << Join(*lost);
  EXPECT_NE(
      (*lost)[1].find(
          "file 4 /d/f chunk #1 has 0 readable healthy replica(s), its objective wants 1 (node(s) "
          "1 down; lost before it was protected: unavailable)"),
      std::string::npos)
      << (*lost)[1];
  auto overdue = store->Check();
  ASSERT_OK(overdue);
  ASSERT_EQ(overdue->size(), 2u) << Join(*overdue);
  EXPECT_EQ(
      (*overdue)[0].rfind(
          std::string(MetaStore::kBelowObjective) +
              "file 4 /d/f chunk #0 has 1 healthy replica(s), its protection wants 2; changed ",
          0),
      0u)
      << (*overdue)[0];
  EXPECT_NE((*overdue)[0].find("s ago, past its deadline of 60s"), std::string::npos)
      << (*overdue)[0];
}
TEST_F(CorruptionTest, StaleReplicasDoNotCount) {
  ExpectReported(
      "UPDATE replicas SET state = 1 WHERE chunk_id = (SELECT MIN(chunk_id) FROM replicas)",
      "file 4 /d/f chunk #0 has 0 healthy replica(s), its objective wants 1");
}
TEST_F(CorruptionTest, HandleOfUnknownSession) {
  ExpectReported("UPDATE handles SET session = 999", "unknown session 999");
}
TEST_F(CorruptionTest, XattrOfMissingInode) {
  ExpectReported("INSERT INTO xattrs VALUES (999, X'61', X'62')", "missing inode 999");
}
TEST_F(CorruptionTest, DirectorySize) {
  ExpectReported("UPDATE inodes SET size = 3 WHERE ino = 1", "directory 1 has size 3");
}
TEST_F(CorruptionTest, ReplayOfUnknownSession) {
  ExpectReported("UPDATE replay SET session = 31", "replay records of unknown session 31");
}

TEST_F(CorruptionTest, RmdirOfTheRootIsBusy) {
  Inject("INSERT INTO dentries (parent, name, ino) VALUES (2, X'726f6f74', 1)");
  auto store = OpenOrDie(path_);
  ASSERT_NE(store, nullptr);
  EXPECT_CODE(store->Rmdir(OpToken{}, InodeId(2), "root", T(5)), kBusy);
}

TEST_F(CorruptionTest, LinkCountLimits) {
  // Reaching kMaxLinks for real takes 65000 operations; set the count instead.
  Inject(fmt::format("UPDATE inodes SET nlink = {} WHERE ino IN (2, 4)", kMaxLinks));
  auto store = OpenOrDie(path_);
  ASSERT_NE(store, nullptr);
  EXPECT_CODE(store->Link(OpToken{}, InodeId(4), kRootInode, "again", T(5)), kTooManyLinks);
  MakeNodeArgs d{InodeId(2), "one-more", S_IFDIR | 0755, 0, 0, 0, true, "", 0};
  EXPECT_CODE(store->MakeNode(OpToken{}, d, T(5)), kTooManyLinks);
  EXPECT_CODE(store->Rename(OpToken{}, kRootInode, "d", InodeId(2), "x", 0, T(5)),
              kInvalidArgument);  // below itself comes first
  MakeNodeArgs e{kRootInode, "e", S_IFDIR | 0755, 0, 0, 0, true, "", 0};
  ASSERT_OK(store->MakeNode(OpToken{}, e, T(5)));
  EXPECT_CODE(store->Rename(OpToken{}, kRootInode, "e", InodeId(2), "e", 0, T(5)), kTooManyLinks);
}

// ---- crash safety ----

// A child process runs random mutations on a file store until it is killed
// with SIGKILL at a random moment; the parent then reopens the store, checks
// it and uses it. Several rounds, each killing a different point.
TEST(SqliteStoreCrash, SurvivesKillNineAtRandomMoments) {
  TempDir dir;
  const std::string path = dir.File("meta.db");
  {
    auto store = OpenOrDie(path);
    ASSERT_NE(store, nullptr);
    testing::RegisterTargets(*store, 1, 2);
  }
  std::mt19937_64 rng(20240601);
  constexpr int kRounds = 6;
  for (int round = 0; round < kRounds; ++round) {
    int ready[2];
    ASSERT_EQ(::pipe(ready), 0);
    pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      // Child: nothing here may return into gtest; every path ends in _exit.
      ::close(ready[0]);
      auto opened = OpenSqliteStore(path);
      if (!opened.ok()) ::_exit(2);
      auto store = std::move(*opened);
      auto nodes = store->ListNodes();
      if (!nodes.ok() || nodes->empty()) ::_exit(2);
      std::vector<ReplicaTarget> targets;
      for (const VolumeRecord& v : (*nodes)[0].volumes) targets.push_back({v.node, v.volume});
      auto session = store->OpenSession("crash", "child", T(1000 + round));
      if (!session.ok()) ::_exit(2);
      RandomWorkload work(*store, 1000 + static_cast<uint64_t>(round), *session, targets);
      for (int step = 0; step < 200; ++step) {
        if (!work.Step().ok()) ::_exit(3);
      }
      char one = 'r';
      if (::write(ready[1], &one, 1) != 1) ::_exit(2);
      for (;;) {
        if (!work.Step().ok()) ::_exit(3);
      }
    }
    ::close(ready[1]);
    char byte = 0;
    ssize_t got = ::read(ready[0], &byte, 1);
    ::close(ready[0]);
    if (got == 1) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1 + rng() % 60));
    }
    ::kill(pid, SIGKILL);
    int wstatus = 0;
    ASSERT_EQ(::waitpid(pid, &wstatus, 0), pid);
    ASSERT_EQ(got, 1) << "child failed before it was ready (status " << wstatus << ")";
    ASSERT_TRUE(WIFSIGNALED(wstatus)) << "child exited with " << WEXITSTATUS(wstatus)
                                      << " (3 = a database error in the workload)";

    auto store = OpenOrDie(path);
    ASSERT_NE(store, nullptr);
    auto problems = store->Check();
    ASSERT_OK(problems);
    ASSERT_TRUE(problems->empty()) << "round " << round << ":\n" << Join(*problems);
    // The store is usable after the crash.
    std::string name = "after-crash-" + std::to_string(round);
    MakeNodeArgs a{kRootInode, name, S_IFREG | 0644, 0, 0, 0, true, "", 4096};
    auto made = store->MakeNode(OpToken{}, a, T(5000));
    ASSERT_OK(made);
    ASSERT_OK(
        store->Rename(OpToken{}, kRootInode, name, kRootInode, name + "-renamed", 0, T(5001)));
    ASSERT_OK(store->Unlink(OpToken{}, kRootInode, name + "-renamed", T(5002)));
    // Committed before the next crash: must be there at the end.
    MakeNodeArgs keep{
        kRootInode, "keep-" + std::to_string(round), S_IFDIR | 0755, 0, 0, 0, true, "", 0};
    ASSERT_OK(store->MakeNode(OpToken{}, keep, T(5003)));
  }
  auto store = OpenOrDie(path);
  ASSERT_NE(store, nullptr);
  // The killed clients' sessions expire; their unlinked-but-open files go.
  auto expired = store->ExpireSessions(T(1 << 30));
  ASSERT_OK(expired);
  EXPECT_EQ(*expired, static_cast<size_t>(kRounds));
  auto problems = store->Check();
  ASSERT_OK(problems);
  EXPECT_TRUE(problems->empty()) << Join(*problems);
  EXPECT_EQ(store->Counts()->open_handles, 0u);
  for (int round = 0; round < kRounds; ++round) {
    EXPECT_OK(store->Lookup(kRootInode, "keep-" + std::to_string(round)));
  }
}

}  // namespace
}  // namespace t0fs::meta
