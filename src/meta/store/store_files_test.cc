// MetaStore: open handles, layouts (Allocate/Commit), sessions, replay,
// cluster records, the garbage queue and reports.
#include <fcntl.h>
#include <sys/stat.h>

#include <set>
#include <thread>

#include "ec/cells.h"
#include "meta/store/pg/pg_engine.h"
#include "meta/store/posix_store.h"
#include "meta/store/store_test_util.h"

namespace t0fs::meta {
namespace {

using testing::StoreTest;
using testing::T;
using testing::TempDir;

class FilesTest : public StoreTest {
 protected:
  void SetUp() override {
    StoreTest::SetUp();
    targets_ = testing::RegisterTargets(*store_, 1, 3);
    ASSERT_EQ(targets_.size(), 3u);
    session_ = NewSession();
  }
  Result<OpenResult> OpenFile(InodeId ino, uint32_t flags = O_RDWR) {
    return store_->Open(OpToken{}, session_, ino, flags, T(150));
  }

  std::vector<ReplicaTarget> targets_;
  SessionId session_;
};

// ---- Open / Release ----

TEST_P(FilesTest, OpenRegistersHandles) {
  InodeId f = MkFile(kRootInode, "f");
  auto h1 = OpenFile(f);
  ASSERT_OK(h1);
  EXPECT_TRUE(h1->handle.valid());
  EXPECT_EQ(h1->attr.ino, f);
  auto h2 = OpenFile(f, O_RDONLY);
  ASSERT_OK(h2);
  EXPECT_NE(h1->handle, h2->handle);
  EXPECT_EQ(Counts().open_handles, 2u);
  ASSERT_OK(store_->Release(OpToken{}, h1->handle));
  EXPECT_CODE(store_->Release(OpToken{}, h1->handle), kBadHandle);
  EXPECT_CODE(store_->Release(OpToken{}, HandleId(999)), kBadHandle);
  EXPECT_EQ(Counts().open_handles, 1u);
}

TEST_P(FilesTest, OpenErrors) {
  InodeId f = MkFile(kRootInode, "f");
  InodeId d = MkDir(kRootInode, "d");
  EXPECT_CODE(store_->Open(OpToken{}, SessionId(999), f, O_RDONLY, T(150)), kMetaNoSession);
  EXPECT_CODE(OpenFile(InodeId(999)), kNotFound);
  EXPECT_CODE(OpenFile(d, O_WRONLY), kIsDirectory);
  EXPECT_CODE(OpenFile(d, O_RDWR), kIsDirectory);
  EXPECT_OK(OpenFile(d, O_RDONLY | O_DIRECTORY));
}

TEST_P(FilesTest, OpenWithTruncate) {
  InodeId f = MkFile(kRootInode, "f");
  ASSERT_OK(store_->Allocate(OpToken{}, f, {0, 1}, targets_));
  CommitArgs c{f, HandleId(), 150, std::nullopt, {}};
  ASSERT_OK(store_->Commit(OpToken{}, c, false, T(120)));
  // Read-only O_TRUNC does nothing (the kernel refuses it anyway).
  auto ro = store_->Open(OpToken{}, session_, f, O_RDONLY | O_TRUNC, T(130));
  ASSERT_OK(ro);
  EXPECT_EQ(ro->attr.size, 150u);
  auto rw = store_->Open(OpToken{}, session_, f, O_WRONLY | O_TRUNC, T(140));
  ASSERT_OK(rw);
  EXPECT_EQ(rw->attr.size, 0u);
  EXPECT_EQ(rw->attr.mtime, T(140));
  EXPECT_EQ(rw->attr.ctime, T(140));
  EXPECT_TRUE(store_->GetLayout(f, 0, 10)->empty());
  EXPECT_EQ(Counts().garbage_chunks, 6u);
  EXPECT_TRUE(CheckProblems().empty());
}

// An open that reads moves the access time as Linux's relatime does: when
// it is not after the last change, or is a day old; a write-only open, an
// O_NOATIME open and a read within the day leave it. (keep-local's after=
// and pressure's order count from it.)
TEST_P(FilesTest, ReadOpensMoveTheAccessTimeAsRelatime) {
  InodeId f = MkFile(kRootInode, "f", T(100));
  const auto atime = [&] { return store_->GetAttr(f)->atime; };
  ASSERT_OK(store_->Open(OpToken{}, session_, f, O_WRONLY, T(110)));
  EXPECT_EQ(atime(), T(100));
  ASSERT_OK(store_->Open(OpToken{}, session_, f, O_RDONLY | O_NOATIME, T(120)));
  EXPECT_EQ(atime(), T(100));
  auto read = store_->Open(OpToken{}, session_, f, O_RDONLY, T(130));
  ASSERT_OK(read);
  EXPECT_EQ(read->attr.atime, T(130));
  EXPECT_EQ(atime(), T(130));
  EXPECT_EQ(store_->GetAttr(f)->ctime, T(100));  // not a change
  ASSERT_OK(store_->Open(OpToken{}, session_, f, O_RDWR, T(140 + 3600)));
  EXPECT_EQ(atime(), T(130));  // read again within the day
  ASSERT_OK(store_->Open(OpToken{}, session_, f, O_RDONLY, T(130 + 24 * 3600)));
  EXPECT_EQ(atime(), T(130 + 24 * 3600));
  // Changed after its last read: the next read open moves it.
  SetAttrArgs chmod;
  chmod.ino = f;
  chmod.mask = kSetMode;
  chmod.mode = 0600;
  ASSERT_OK(store_->SetAttr(OpToken{}, chmod, T(200000)));
  ASSERT_OK(store_->Open(OpToken{}, session_, f, O_RDONLY, T(200001)));
  EXPECT_EQ(atime(), T(200001));
}

// keep-newest=N on a directory: its N entries with the latest mtime, and
// for a directory among them every file below it. Recorded for that
// directory alone (not inherited by a recursive set), refused on a file,
// removed by 0.
TEST_P(FilesTest, KeepNewestKeepsTheNewestEntriesAndWhatIsBelowThem) {
  InodeId ck = MkDir(kRootInode, "ck", T(100));
  MkFile(ck, "a.pt", T(110));
  InodeId step1 = MkDir(ck, "step1", T(120));
  MkFile(step1, "s0", T(121));  // step1's mtime: 121
  InodeId step2 = MkDir(ck, "step2", T(130));
  InodeId shards = MkDir(step2, "shards", T(131));  // step2's mtime: 131
  InodeId s0 = MkFile(shards, "s0", T(132));
  InodeId s1 = MkFile(shards, "s1", T(133));
  InodeId b = MkFile(ck, "b.pt", T(140));
  Objective obj;
  obj.replicas = 1;
  obj.protect.kind = ProtectKind::kObject;
  obj.protect.keep_local = KeepLocal::kDrop;
  obj.keep_newest = 2;
  ASSERT_OK(store_->SetObjective(ck, obj, /*recursive=*/true));
  EXPECT_EQ(store_->GetObjective(ck)->keep_newest, 2u);
  EXPECT_EQ(store_->GetObjective(step2)->keep_newest, 0u);  // not inherited
  EXPECT_EQ(store_->GetObjective(b)->keep_newest, 0u);
  EXPECT_EQ(store_->GetObjective(b)->protect.keep_local, KeepLocal::kDrop);
  bool truncated = true;
  auto kept = store_->KeptNewest(100, &truncated);
  ASSERT_OK(kept);
  EXPECT_FALSE(truncated);
  EXPECT_EQ(std::set<InodeId>(kept->begin(), kept->end()), (std::set<InodeId>{b, s0, s1}));
  kept = store_->KeptNewest(2, &truncated);
  ASSERT_OK(kept);
  EXPECT_TRUE(truncated);
  EXPECT_EQ(kept->size(), 2u);
  // Only a directory has entries to rank.
  EXPECT_CODE(store_->SetObjective(b, obj, false), kInvalidArgument);
  EXPECT_EQ(store_->GetObjective(b)->keep_newest, 0u);
  // 0 removes the rule.
  obj.keep_newest = 0;
  ASSERT_OK(store_->SetObjective(ck, obj, false));
  EXPECT_EQ(store_->GetObjective(ck)->keep_newest, 0u);
  kept = store_->KeptNewest(100, &truncated);
  ASSERT_OK(kept);
  EXPECT_TRUE(kept->empty());
}

TEST_P(FilesTest, UnlinkWhileOpenKeepsTheInodeUntilLastRelease) {
  InodeId f = MkFile(kRootInode, "f");
  ASSERT_OK(store_->Allocate(OpToken{}, f, {0, 1}, targets_));
  auto h1 = OpenFile(f);
  auto h2 = OpenFile(f, O_RDONLY);
  ASSERT_OK(h1);
  ASSERT_OK(h2);
  ASSERT_OK(store_->Unlink(OpToken{}, kRootInode, "f", T(200)));
  EXPECT_CODE(store_->Lookup(kRootInode, "f"), kNotFound);
  InodeAttr a = Attr(f);
  EXPECT_EQ(a.nlink, 0u);
  EXPECT_EQ(a.ctime, T(200));
  // The open file stays fully usable.
  CommitArgs c{f, h1->handle, 42, T(210), {}};
  ASSERT_OK(store_->Commit(OpToken{}, c, false, T(210)));
  EXPECT_EQ(store_->GetLayout(f, 0, 10)->size(), 2u);
  EXPECT_EQ(Counts().garbage_chunks, 0u);
  EXPECT_TRUE(CheckProblems().empty());

  ASSERT_OK(store_->Release(OpToken{}, h1->handle));
  EXPECT_OK(store_->GetAttr(f));
  ASSERT_OK(store_->Release(OpToken{}, h2->handle));
  EXPECT_CODE(store_->GetAttr(f), kNotFound);
  EXPECT_EQ(Counts().garbage_chunks, 6u);
  EXPECT_EQ(Counts().chunks, 0u);
  EXPECT_TRUE(CheckProblems().empty());
}

// On PostgreSQL a mkdir and a rename read everything they need in one
// round trip, then commit: two in all (their reads are prefetched with the
// replay slot's, engine.h); so does a create with its open and chunk 0
// (the reserved chunk id it names is inserted without waiting for the
// answer; a taken one costs a retry, below); an unlink and an rmdir two
// as well (PrefetchRemoval). The
// counts are the engine's own: this pins the cost that bounds metadata
// rates, and for a rename and an rmdir the statements sent (each inode row
// once however often the operation wrote it).
TEST_P(FilesTest, NamespaceChangesOnPostgresTakeTwoOrThreeRoundTrips) {
  if (GetParam() != "postgres") GTEST_SKIP() << "counts PostgreSQL round trips";
  auto* posix = dynamic_cast<PosixStore*>(store_.get());
  ASSERT_NE(posix, nullptr);
  auto* pg = dynamic_cast<PgEngine*>(&posix->engine());
  ASSERT_NE(pg, nullptr);
  MakeNodeArgs a{kRootInode, "warm", S_IFREG | 0644, 0, 0, 0, true, "", 4096};
  a.open_session = session_;
  a.open_flags = O_WRONLY | O_CREAT;
  a.first_chunk = {targets_[0]};
  // The slot's row and the id blocks (a removal's garbage rows too).
  auto warm = store_->MakeNode(OpToken{session_, 3, 1}, a, T(100));
  ASSERT_OK(warm);
  ASSERT_OK(store_->Commit(OpToken{}, CommitArgs{warm->attr.ino, warm->handle, 10, T(100), {}},
                           false, T(100)));
  ASSERT_OK(store_->Release(OpToken{}, warm->handle));
  ASSERT_OK(store_->Unlink(OpToken{}, kRootInode, "warm", T(100), nullptr));
  uint64_t statements = 0;  // of the last op costed
  auto cost = [&](const std::function<Status()>& op) -> uint64_t {
    const uint64_t before = pg->round_trips();
    const uint64_t sent = pg->statements();
    Status st = op();
    EXPECT_OK(st);
    statements = pg->statements() - sent;
    return pg->round_trips() - before;
  };
  a.name = "f";
  a.first_chunk_id = ChunkId(1u << 20);
  HandleId handle;
  EXPECT_EQ(cost([&] {
              auto made = store_->MakeNode(OpToken{session_, 3, 2}, a, T(101));
              if (made.ok()) handle = made->handle;
              return made.status();
            }),
            2u);
  EXPECT_EQ(store_->GetLayout(Find(kRootInode, "f"), 0, 1)->at(0).replicas.at(0).chunk,
            ChunkId(1u << 20));
  MakeNodeArgs d{kRootInode, "d", S_IFDIR | 0755, 0, 0, 0, true, "", 0};
  EXPECT_EQ(cost([&] {
              return store_->MakeNode(OpToken{session_, 3, 3}, d, T(102)).status();
            }),
            2u);
  EXPECT_EQ(
      cost([&] {
        return store_->Rename(OpToken{session_, 3, 4}, kRootInode, "f", kRootInode, "g", 0, T(103));
      }),
      2u);
  // BEGIN, the replay slot, both names, the entries' delete and put, the
  // directory's row once (the new entry's seq and the mtime), the file's
  // ctime, the slot's record, COMMIT.
  EXPECT_EQ(statements, 10u);
  EXPECT_EQ(Find(kRootInode, "f"), InodeId());
  EXPECT_NE(Find(kRootInode, "g"), InodeId());
  // A retry of the rename is answered from its slot: one round trip.
  EXPECT_EQ(
      cost([&] {
        return store_->Rename(OpToken{session_, 3, 4}, kRootInode, "f", kRootInode, "g", 0, T(104));
      }),
      1u);
  // An unlink reads the entry, the file's handles and its chunks in one
  // round trip (PrefetchRemoval), an rmdir the entry, the directory's
  // handles and whether it is empty; both then commit.
  ASSERT_OK(store_->MakeNode(
      OpToken{}, MakeNodeArgs{d.parent, "e", S_IFDIR | 0755, 0, 0, 0, true, "", 0}, T(104)));
  ASSERT_OK(store_->MakeNode(
      OpToken{}, MakeNodeArgs{Find(kRootInode, "e"), "x", S_IFDIR | 0755, 0, 0, 0, true, "", 0},
      T(104)));
  const InodeId g = Find(kRootInode, "g");
  ASSERT_OK(store_->Commit(OpToken{}, CommitArgs{g, handle, 10, T(104), {}}, false, T(104)));
  ASSERT_OK(store_->Release(OpToken{}, handle));
  ASSERT_EQ(Counts().garbage_chunks, 1u);  // warm's
  EXPECT_EQ(cost([&] {
              return store_->Unlink(OpToken{session_, 3, 5}, kRootInode, "g", T(105), nullptr);
            }),
            2u);
  EXPECT_EQ(Counts().garbage_chunks, 2u);  // g's chunk 0 too, listed by the prefetch
  EXPECT_EQ(cost([&] {
              return store_->Rmdir(OpToken{session_, 3, 6}, kRootInode, "d", T(106), nullptr);
            }),
            2u);
  // BEGIN, the slot, the entry, handles, first entry, the entry's delete,
  // the parent's row once (mtime and link count), the directory's row
  // deleted with its xattrs in one statement (not written first), the
  // slot's record, COMMIT.
  EXPECT_EQ(statements, 10u);
  // Not empty: the prefetched first entry says so.
  EXPECT_EQ(store_->Rmdir(OpToken{session_, 3, 7}, kRootInode, "e", T(107), nullptr).code(),
            StatusCode::kNotEmpty);
  // A release reads the handle, its inode, the inode's handles and a
  // writer's chunks past the end with the replay slot, then commits; so
  // does a batch of them (the last writer's close of an empty file drops
  // its chunk 0).
  std::vector<HandleId> opened;
  for (int i = 0; i < 3; ++i) {
    a.name = fmt::format("r{}", i);
    a.first_chunk_id = ChunkId();
    auto made = store_->MakeNode(OpToken{}, a, T(108));
    ASSERT_OK(made);
    opened.push_back(made->handle);
  }
  auto reader = store_->Open(OpToken{}, session_, Find(kRootInode, "r0"), O_RDONLY, T(108));
  ASSERT_OK(reader);
  const uint64_t garbage = Counts().garbage_chunks;
  EXPECT_EQ(cost([&] { return store_->Release(OpToken{session_, 3, 8}, opened[0]); }), 2u);
  EXPECT_EQ(cost([&] {
              return store_->ReleaseMany(OpToken{session_, 3, 9},
                                         {opened[1], reader->handle, opened[2], HandleId(999999)});
            }),
            2u);
  EXPECT_EQ(Counts().garbage_chunks, garbage + 3);
  // A create naming a taken id: one failed attempt (two round trips), then
  // the retry asks for the id (three) and takes another; the next create
  // naming it asks at once. (g's unlink freed the id: "taken" gets it.)
  a.first_chunk_id = ChunkId(1u << 20);
  auto create = [&](const char* name, uint64_t seq, ChunkId* chunk) {
    return cost([&] {
      a.name = name;
      auto made = store_->MakeNode(OpToken{session_, 3, seq}, a, T(109));
      if (made.ok()) *chunk = made->layout.at(0).replicas.at(0).chunk;
      return made.status();
    });
  };
  ChunkId first, second, third;
  EXPECT_EQ(create("taken", 20, &first), 2u);
  EXPECT_EQ(first, ChunkId(1u << 20));
  EXPECT_EQ(create("taken2", 21, &second), 5u);
  EXPECT_NE(second, first);
  EXPECT_EQ(create("taken3", 22, &third), 3u);
  EXPECT_NE(third, first);
  EXPECT_NE(third, second);
}

TEST_P(FilesTest, CreateOpensInItsTransaction) {
  MakeNodeArgs a{kRootInode, "f", S_IFREG | 0644, 0, 0, 0, true, "", 4096};
  a.open_session = session_;
  a.open_flags = O_WRONLY | O_CREAT;
  a.first_chunk = {targets_[0]};
  OpToken tok{session_, 3, 1};
  auto made = store_->MakeNode(tok, a, T(100));
  ASSERT_OK(made);
  EXPECT_TRUE(made->created);
  EXPECT_TRUE(made->handle.valid());
  EXPECT_EQ(made->parent.ino, kRootInode);
  EXPECT_EQ(made->parent.mtime, T(100));
  ASSERT_EQ(made->layout.size(), 1u);  // chunk 0, on the writer's target
  EXPECT_EQ(made->layout[0].index, 0u);
  ASSERT_EQ(made->layout[0].replicas.size(), 1u);
  EXPECT_EQ(made->layout[0].replicas[0].node, targets_[0].node);
  EXPECT_EQ(made->layout, *store_->GetLayout(made->attr.ino, 0, 1));  // what it stored
  EXPECT_EQ(Counts().open_handles, 1u);
  // A retry returns the same handle and layout, and runs nothing again.
  auto again = store_->MakeNode(tok, a, T(200));
  ASSERT_OK(again);
  EXPECT_EQ(again->handle, made->handle);
  EXPECT_EQ(again->layout.size(), 1u);
  EXPECT_EQ(Counts().open_handles, 1u);
  EXPECT_EQ(Counts().chunks, 1u);

  // An existing file (non-exclusive): opened with its layout as it is; no
  // new chunk, and O_TRUNC is the caller's.
  ASSERT_OK(store_->Commit(OpToken{}, CommitArgs{made->attr.ino, made->handle, 10, T(110), {}}, false, T(110)));
  MakeNodeArgs b = a;
  b.exclusive = false;
  b.open_flags = O_RDWR | O_CREAT | O_TRUNC;
  b.first_chunk = {targets_[1]};
  auto found = store_->MakeNode(OpToken{}, b, T(300));
  ASSERT_OK(found);
  EXPECT_FALSE(found->created);
  EXPECT_EQ(found->attr.size, 10u);
  EXPECT_NE(found->handle, made->handle);
  ASSERT_EQ(found->layout.size(), 1u);
  EXPECT_EQ(found->layout[0].replicas[0].node, targets_[0].node);
  EXPECT_EQ(Counts().chunks, 1u);

  // Only regular files are opened; the session must be open.
  MakeNodeArgs d{kRootInode, "d", S_IFDIR | 0755, 0, 0, 0, true, "", 0};
  d.open_session = session_;
  EXPECT_CODE(store_->MakeNode(OpToken{}, d, T(400)), kInvalidArgument);
  MakeNodeArgs g{kRootInode, "g", S_IFREG | 0644, 0, 0, 0, true, "", 4096};
  g.open_session = SessionId(999);
  EXPECT_CODE(store_->MakeNode(OpToken{}, g, T(400)), kMetaNoSession);
  EXPECT_CODE(store_->Lookup(kRootInode, "g"), kNotFound);  // nothing left of it
  EXPECT_TRUE(CheckProblems().empty());
}

// The service's policy and placement run inside the create's transaction:
// the chunk size from the directory, chunk 0 from the new file's attributes;
// targets that are no volume of a node leave the file without a chunk.
TEST_P(FilesTest, CreateDecidesChunkSizeAndChunkZeroInItsTransaction) {
  MakeNodeArgs a{kRootInode, "f", S_IFREG | 0644, 0, 0, 0, true, "", 0};
  a.open_session = session_;
  a.open_flags = O_WRONLY | O_CREAT;
  InodeId dir_seen;
  a.file_chunk_size = [&](const InodeAttr& dir) {
    dir_seen = dir.ino;
    return uint64_t{8192};
  };
  uint64_t file_chunk_size = 0;
  a.place_first_chunk = [&](const InodeAttr& file) {
    file_chunk_size = file.chunk_size;
    return std::vector<ReplicaTarget>{targets_[1]};
  };
  auto made = store_->MakeNode(OpToken{}, a, T(100));
  ASSERT_OK(made);
  EXPECT_EQ(dir_seen, kRootInode);
  EXPECT_EQ(made->attr.chunk_size, 8192u);
  EXPECT_EQ(file_chunk_size, 8192u);
  ASSERT_EQ(made->layout.size(), 1u);
  EXPECT_EQ(made->layout[0].replicas[0].node, targets_[1].node);

  MakeNodeArgs b = a;
  b.name = "g";
  b.place_first_chunk = [](const InodeAttr&) { return std::vector<ReplicaTarget>{{NodeId(999), VolumeId(999)}}; };
  auto bare = store_->MakeNode(OpToken{}, b, T(200));
  ASSERT_OK(bare);
  EXPECT_TRUE(bare->handle.valid());
  EXPECT_TRUE(bare->layout.empty());
  EXPECT_EQ(Counts().chunks, 1u);
  EXPECT_TRUE(CheckProblems().empty());
}

// Chunk ids reserved ahead (the client's chunk pool) are new and distinct;
// a create names one for its chunk 0. An id another chunk has is not taken
// (a new one is). (That a client names only ids it was given is checked by
// the service: MetaService::ReservedChunk.)
TEST_P(FilesTest, CreateTakesAReservedChunkId) {
  auto ids = store_->ReserveChunkIds(4);
  ASSERT_OK(ids);
  ASSERT_EQ(ids->size(), 4u);
  std::set<ChunkId> distinct(ids->begin(), ids->end());
  EXPECT_EQ(distinct.size(), 4u);
  EXPECT_CODE(store_->ReserveChunkIds(0), kInvalidArgument);
  EXPECT_CODE(store_->ReserveChunkIds(100000), kInvalidArgument);

  auto create = [&](std::string name, ChunkId wanted) {
    MakeNodeArgs a{kRootInode, std::move(name), S_IFREG | 0644, 0, 0, 0, true, "", 4096};
    a.open_session = session_;
    a.open_flags = O_WRONLY | O_CREAT;
    a.first_chunk = {targets_[0]};
    a.first_chunk_id = wanted;
    return store_->MakeNode(OpToken{}, a, T(100));
  };
  auto made = create("f", (*ids)[2]);
  ASSERT_OK(made);
  ASSERT_EQ(made->layout.size(), 1u);
  EXPECT_EQ(made->layout[0].replicas[0].chunk, (*ids)[2]);

  auto taken = create("g", (*ids)[2]);  // f's chunk has it
  ASSERT_OK(taken);
  ASSERT_EQ(taken->layout.size(), 1u);
  const ChunkId other = taken->layout[0].replicas[0].chunk;
  EXPECT_NE(other, (*ids)[2]);
  EXPECT_FALSE(distinct.count(other));

  auto first = create("h", (*ids)[0]);  // reserved ids are taken in any order
  ASSERT_OK(first);
  EXPECT_EQ(first->layout[0].replicas[0].chunk, (*ids)[0]);
  auto after = store_->ReserveChunkIds(1);
  ASSERT_OK(after);
  EXPECT_FALSE(distinct.count((*after)[0]));
  EXPECT_NE((*after)[0], other);
  EXPECT_EQ(Counts().chunks, 3u);
  EXPECT_TRUE(CheckProblems().empty());
}

TEST_P(FilesTest, ReleaseManyClosesEveryHandleInOneGo) {
  InodeId f = MkFile(kRootInode, "f");
  InodeId g = MkFile(kRootInode, "g");
  ASSERT_OK(store_->Allocate(OpToken{}, f, {0}, targets_));
  auto h1 = OpenFile(f);
  auto h2 = OpenFile(g, O_RDONLY);
  ASSERT_OK(h1);
  ASSERT_OK(h2);
  ASSERT_OK(store_->Unlink(OpToken{}, kRootInode, "f", T(200)));
  // An unknown handle in a batch is skipped; the others are closed, and the
  // unlinked file goes with its last handle.
  ASSERT_OK(store_->ReleaseMany(OpToken{}, {h1->handle, HandleId(999), h2->handle}));
  EXPECT_EQ(Counts().open_handles, 0u);
  EXPECT_CODE(store_->GetAttr(f), kNotFound);
  EXPECT_EQ(Counts().garbage_chunks, 3u);
  EXPECT_OK(store_->GetAttr(g));
  EXPECT_TRUE(CheckProblems().empty());
}

// A batch longer than a read-ahead group (PosixStore::ReleaseMany reads 32
// handles ahead at a time): writers and readers of the same files in
// different groups, unlinked files among them.
TEST_P(FilesTest, ReleaseManyOfSeveralReadAheadGroups) {
  constexpr int kFiles = 20;
  std::vector<HandleId> writers, readers;
  for (int i = 0; i < kFiles; ++i) {
    const std::string name = fmt::format("f{}", i);
    InodeId f = MkFile(kRootInode, name);
    auto writer = OpenFile(f, O_RDWR);
    auto reader = OpenFile(f, O_RDONLY);
    ASSERT_OK(writer);
    ASSERT_OK(reader);
    ASSERT_OK(store_->Allocate(OpToken{}, f, {0, 1}, targets_));  // never written
    writers.push_back(writer->handle);
    readers.push_back(reader->handle);
    if (i % 2 == 0) {
      ASSERT_OK(store_->Unlink(OpToken{}, kRootInode, name, T(200)));
    }
  }
  std::vector<HandleId> batch = writers;
  batch.push_back(HandleId(999999));
  batch.insert(batch.end(), readers.begin(), readers.end());
  ASSERT_OK(store_->ReleaseMany(OpToken{session_, 4, 1}, batch));
  EXPECT_EQ(Counts().open_handles, 0u);
  EXPECT_EQ(Counts().chunks, 0u);  // the unwritten chunks left with the last writer
  EXPECT_EQ(Counts().garbage_chunks, kFiles * 2 * targets_.size());
  for (int i = 0; i < kFiles; ++i) {
    EXPECT_EQ(Find(kRootInode, fmt::format("f{}", i)).valid(), i % 2 == 1) << i;
  }
  EXPECT_TRUE(CheckProblems().empty());
}

// Chunks allocated ahead past the end and never written leave the layout
// when the last writer closes, not when a reader closes meanwhile; a
// reader's close of an unlinked file frees it.
TEST_P(FilesTest, UnwrittenTailLeavesWithTheLastWriter) {
  InodeId f = MkFile(kRootInode, "f");
  auto writer = OpenFile(f, O_RDWR);
  ASSERT_OK(writer);
  auto l = store_->Allocate(OpToken{}, f, {0, 1, 2}, targets_);
  ASSERT_OK(l);
  const ChunkId c0 = (*l)[0].replicas[0].chunk;
  ASSERT_OK(store_->Commit(OpToken{}, CommitArgs{f, writer->handle, 100, T(200), {{c0, 1}}}, false, T(200)));
  auto reader = OpenFile(f, O_RDONLY);
  ASSERT_OK(reader);
  ASSERT_OK(store_->Release(OpToken{}, reader->handle));
  EXPECT_EQ(store_->GetLayout(f, 0, 3)->size(), 3u);  // the writer may still write them
  ASSERT_OK(store_->Release(OpToken{}, writer->handle));
  auto left = store_->GetLayout(f, 0, 3);
  ASSERT_OK(left);
  ASSERT_EQ(left->size(), 1u);
  EXPECT_EQ((*left)[0].index, 0u);
  EXPECT_EQ(Counts().garbage_chunks, 2 * targets_.size());

  auto last = OpenFile(f, O_RDONLY);
  ASSERT_OK(last);
  ASSERT_OK(store_->Unlink(OpToken{}, kRootInode, "f", T(300)));
  EXPECT_OK(store_->GetAttr(f));  // open: kept
  ASSERT_OK(store_->Release(OpToken{}, last->handle));
  EXPECT_CODE(store_->GetAttr(f), kNotFound);
  EXPECT_TRUE(CheckProblems().empty());
}

// ---- sessions ----

TEST_P(FilesTest, SessionLifecycle) {
  SessionId s = NewSession();
  EXPECT_GT(s.value(), session_.value());
  ASSERT_OK(store_->RenewSession(s, T(200)));
  EXPECT_CODE(store_->RenewSession(SessionId(999), T(200)), kMetaNoSession);
  EXPECT_EQ(Counts().sessions, 2u);
  ASSERT_OK(store_->CloseSession(s));
  EXPECT_CODE(store_->CloseSession(s), kMetaNoSession);
  EXPECT_CODE(store_->RenewSession(s, T(201)), kMetaNoSession);
  SessionId again = NewSession();
  EXPECT_GT(again.value(), s.value());  // never reused
}

TEST_P(FilesTest, CloseSessionReleasesHandlesAndFreesOrphans) {
  InodeId f = MkFile(kRootInode, "f");
  InodeId g = MkFile(kRootInode, "g");
  ASSERT_OK(store_->Allocate(OpToken{}, f, {0}, targets_));
  SessionId other = NewSession();
  ASSERT_OK(OpenFile(f));
  ASSERT_OK(OpenFile(g));
  ASSERT_OK(store_->Open(OpToken{}, other, f, O_RDONLY, T(150)));
  ASSERT_OK(store_->Unlink(OpToken{}, kRootInode, "f", T(200)));
  ASSERT_OK(store_->CloseSession(session_));
  EXPECT_OK(store_->GetAttr(f));  // still open by `other`
  EXPECT_OK(store_->GetAttr(g));  // linked
  EXPECT_EQ(Counts().open_handles, 1u);
  ASSERT_OK(store_->CloseSession(other));
  EXPECT_CODE(store_->GetAttr(f), kNotFound);
  EXPECT_EQ(Counts().garbage_chunks, 3u);
  EXPECT_EQ(Counts().open_handles, 0u);
  EXPECT_TRUE(CheckProblems().empty());
}

TEST_P(FilesTest, ExpireSessionsClosesStaleOnes) {
  InodeId f = MkFile(kRootInode, "f");
  auto stale1 = store_->OpenSession("a", "h", T(10));
  auto stale2 = store_->OpenSession("b", "h", T(20, 5));
  auto fresh = store_->OpenSession("c", "h", T(10));
  ASSERT_OK(stale1);
  ASSERT_OK(stale2);
  ASSERT_OK(fresh);
  ASSERT_OK(store_->RenewSession(*fresh, T(40)));
  ASSERT_OK(store_->RenewSession(session_, T(40)));
  ASSERT_OK(store_->Open(OpToken{}, *stale2, f, O_RDWR, T(20)));
  ASSERT_OK(store_->Unlink(OpToken{}, kRootInode, "f", T(25)));
  auto n = store_->ExpireSessions(T(20, 6));
  ASSERT_OK(n);
  EXPECT_EQ(*n, 2u);
  EXPECT_CODE(store_->RenewSession(*stale1, T(50)), kMetaNoSession);
  EXPECT_CODE(store_->RenewSession(*stale2, T(50)), kMetaNoSession);
  EXPECT_OK(store_->RenewSession(*fresh, T(50)));
  EXPECT_CODE(store_->GetAttr(f), kNotFound);  // the orphan went with its session
  EXPECT_EQ(*store_->ExpireSessions(T(20, 6)), 0u);
  EXPECT_TRUE(CheckProblems().empty());
}

// ---- Allocate / GetLayout / Commit ----

TEST_P(FilesTest, AllocateCreatesChunksOnce) {
  InodeId f = MkFile(kRootInode, "f");
  std::vector<ReplicaTarget> two(targets_.begin(), targets_.begin() + 2);
  auto first = store_->Allocate(OpToken{}, f, {3, 1, 3}, two);
  ASSERT_OK(first);
  ASSERT_EQ(first->size(), 2u);
  EXPECT_EQ((*first)[0].index, 1u);
  EXPECT_EQ((*first)[1].index, 3u);
  for (const ChunkLayout& l : *first) {
    ASSERT_EQ(l.replicas.size(), 2u);
    for (size_t i = 0; i < 2; ++i) {
      EXPECT_EQ(l.replicas[i].node, two[i].node);
      EXPECT_EQ(l.replicas[i].volume, two[i].volume);
      EXPECT_EQ(l.replicas[i].version, 0u);
      EXPECT_EQ(l.replicas[i].state, ReplicaState::kHealthy);
      EXPECT_EQ(l.replicas[i].chunk, l.replicas[0].chunk);
    }
  }
  EXPECT_LT((*first)[0].replicas[0].chunk, (*first)[1].replicas[0].chunk);
  // Already allocated indices come back unchanged, whatever the targets.
  std::vector<ReplicaTarget> other = {targets_[2]};
  auto second = store_->Allocate(OpToken{}, f, {0, 1, 2, 3}, other);
  ASSERT_OK(second);
  ASSERT_EQ(second->size(), 4u);
  EXPECT_EQ((*second)[1].replicas[0].chunk, (*first)[0].replicas[0].chunk);
  EXPECT_EQ((*second)[1].replicas.size(), 2u);
  EXPECT_EQ((*second)[0].replicas.size(), 1u);
  EXPECT_EQ((*second)[0].replicas[0].volume, targets_[2].volume);
  EXPECT_EQ(Counts().chunks, 4u);
  // The answers are what was stored, found and added alike.
  EXPECT_EQ(*first, (std::vector<ChunkLayout>{(*store_->GetLayout(f, 1, 1))[0], (*store_->GetLayout(f, 3, 1))[0]}));
  EXPECT_EQ(*second, *store_->GetLayout(f, 0, 4));

  auto range = store_->GetLayout(f, 1, 2);
  ASSERT_OK(range);
  ASSERT_EQ(range->size(), 2u);
  EXPECT_EQ((*range)[0].index, 1u);
  EXPECT_EQ((*range)[1].index, 2u);
  EXPECT_TRUE(store_->GetLayout(f, 10, 5)->empty());
  EXPECT_EQ(store_->GetLayout(f, 0, ~uint64_t{0})->size(), 4u);
  EXPECT_TRUE(CheckProblems().empty());
}

TEST_P(FilesTest, AllocateErrors) {
  InodeId f = MkFile(kRootInode, "f");
  InodeId d = MkDir(kRootInode, "d");
  EXPECT_CODE(store_->Allocate(OpToken{}, InodeId(999), {0}, targets_), kNotFound);
  EXPECT_CODE(store_->Allocate(OpToken{}, d, {0}, targets_), kIsDirectory);
  EXPECT_CODE(store_->Allocate(OpToken{}, f, {0}, {}), kInvalidArgument);
  EXPECT_CODE(store_->Allocate(OpToken{}, f, {0}, {{NodeId(77), VolumeId(1)}}), kMetaNoNode);
  auto other = testing::RegisterTargets(*store_, 2, 1);
  EXPECT_CODE(store_->Allocate(OpToken{}, f, {0}, {{NodeId(1), other[0].volume}}),
              kInvalidArgument);
  EXPECT_CODE(store_->Allocate(OpToken{}, f, {0}, {targets_[0], targets_[0]}), kInvalidArgument);
  EXPECT_CODE(store_->Allocate(OpToken{}, f, {uint64_t{1} << 62}, targets_), kFileTooBig);
  EXPECT_EQ(Counts().chunks, 0u);
}

TEST_P(FilesTest, ChunkIdsAreNeverReused) {
  InodeId f = MkFile(kRootInode, "f");
  auto a = store_->Allocate(OpToken{}, f, {0}, targets_);
  ASSERT_OK(a);
  ChunkId first = (*a)[0].replicas[0].chunk;
  ASSERT_OK(store_->Unlink(OpToken{}, kRootInode, "f", T(200)));
  InodeId g = MkFile(kRootInode, "g");
  auto b = store_->Allocate(OpToken{}, g, {0}, targets_);
  ASSERT_OK(b);
  EXPECT_GT((*b)[0].replicas[0].chunk, first);
}

TEST_P(FilesTest, ConcurrentAllocateOfOneIndexYieldsOneChunk) {
  InodeId f = MkFile(kRootInode, "f");
  constexpr int kThreads = 8;
  std::vector<std::vector<ChunkLayout>> got(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::vector<ReplicaTarget> one = {targets_[static_cast<size_t>(t) % targets_.size()]};
      for (uint64_t round = 0; round < 20; ++round) {
        auto r = store_->Allocate(OpToken{}, f, {round, round + 1}, one);
        if (r.ok()) got[t].insert(got[t].end(), r->begin(), r->end());
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(Counts().chunks, 21u);
  auto final_layout = store_->GetLayout(f, 0, 100);
  ASSERT_OK(final_layout);
  ASSERT_EQ(final_layout->size(), 21u);
  for (int t = 0; t < kThreads; ++t) {
    ASSERT_EQ(got[t].size(), 40u);
    for (const ChunkLayout& l : got[t]) {
      const ChunkLayout& winner = (*final_layout)[l.index];
      ASSERT_EQ(l.replicas.size(), 1u);
      EXPECT_EQ(l.replicas[0].chunk, winner.replicas[0].chunk);
      EXPECT_EQ(l.replicas[0].volume, winner.replicas[0].volume);
    }
  }
  EXPECT_TRUE(CheckProblems().empty());
}

TEST_P(FilesTest, CommitSizeOnlyGrowsAndVersionsTakeTheMaximum) {
  InodeId f = MkFile(kRootInode, "f");
  auto l = store_->Allocate(OpToken{}, f, {0, 1}, targets_);
  ASSERT_OK(l);
  ChunkId c0 = (*l)[0].replicas[0].chunk;
  ChunkId c1 = (*l)[1].replicas[0].chunk;
  CommitArgs c{f, HandleId(), 180, T(300), {{c0, 5}, {c1, 2}}};
  auto r = store_->Commit(OpToken{}, c, false, T(301));
  ASSERT_OK(r);
  EXPECT_EQ(r->size, 180u);
  EXPECT_EQ(r->mtime, T(300));
  EXPECT_EQ(r->ctime, T(301));
  c = CommitArgs{f, HandleId(), 120, std::nullopt, {{c0, 3}, {c1, 4}}};
  r = store_->Commit(OpToken{}, c, true, T(400));
  ASSERT_OK(r);
  EXPECT_EQ(r->size, 180u);     // a smaller size does not shrink the file
  EXPECT_EQ(r->mtime, T(300));  // no mtime given: unchanged
  EXPECT_EQ(r->ctime, T(301));
  auto layout = store_->GetLayout(f, 0, 2);
  ASSERT_OK(layout);
  for (const Replica& rep : (*layout)[0].replicas) EXPECT_EQ(rep.version, 5u);
  for (const Replica& rep : (*layout)[1].replicas) EXPECT_EQ(rep.version, 4u);
}

TEST_P(FilesTest, CommitErrors) {
  InodeId f = MkFile(kRootInode, "f");
  InodeId g = MkFile(kRootInode, "g");
  InodeId d = MkDir(kRootInode, "d");
  EXPECT_CODE(store_->Commit(OpToken{}, CommitArgs{InodeId(999), {}, 1, {}, {}}, false, T(1)),
              kNotFound);
  EXPECT_CODE(store_->Commit(OpToken{}, CommitArgs{d, {}, 1, {}, {}}, false, T(1)),
              kInvalidArgument);
  auto hg = OpenFile(g);
  ASSERT_OK(hg);
  EXPECT_CODE(store_->Commit(OpToken{}, CommitArgs{f, hg->handle, 1, {}, {}}, false, T(1)),
              kBadHandle);
  // A chunk of another file is ignored, not updated.
  auto lg = store_->Allocate(OpToken{}, g, {0}, targets_);
  ASSERT_OK(lg);
  ASSERT_OK(store_->Commit(OpToken{}, CommitArgs{f, {}, 1, {}, {{(*lg)[0].replicas[0].chunk, 9}}},
                           false, T(1)));
  EXPECT_EQ((*store_->GetLayout(g, 0, 1))[0].replicas[0].version, 0u);
}

TEST_P(FilesTest, AStaleReportCountsOnlyAtTheVersionMetaRecords) {
  InodeId f = MkFile(kRootInode, "f");
  auto l = store_->Allocate(OpToken{}, f, {0}, targets_);
  ASSERT_OK(l);
  const Replica first = (*l)[0].replicas[0];
  ASSERT_OK(store_->Commit(OpToken{}, CommitArgs{f, {}, 10, {}, {{first.chunk, 2}}}, false, T(1)));
  auto state = [&] {
    auto layout = store_->GetLayout(f, 0, 1);
    if (!layout.ok() || layout->empty()) return ReplicaState::kPending;
    for (const Replica& r : (*layout)[0].replicas) {
      if (r.node == first.node) return r.state;
    }
    return ReplicaState::kPending;
  };
  // A layout newer than meta's (a version not committed here): not evidence.
  EXPECT_CODE(store_->ReportReplicaStale(first.chunk, first.node, 3), kStale);
  EXPECT_EQ(state(), ReplicaState::kHealthy);
  // At meta's version (or an older layout's, the node being older still): stale.
  ASSERT_OK(store_->ReportReplicaStale(first.chunk, first.node, 2));
  EXPECT_EQ(state(), ReplicaState::kStale);
  ASSERT_OK(store_->ReportReplicaStale(first.chunk, first.node, 1));  // already: fine
  // A chunk that left the layout, or a node without a replica of it.
  EXPECT_CODE(store_->ReportReplicaStale(ChunkId(999999), first.node, 1), kNotFound);
  EXPECT_CODE(store_->ReportReplicaStale(first.chunk, NodeId(77), 1), kNotFound);
}

TEST(SqliteStoreDurable, DurableCommitOnFileStore) {
  TempDir dir;
  std::string path = dir.File("meta.db");
  InodeId f;
  {
    auto store = testing::OpenOrDie(path);
    ASSERT_NE(store, nullptr);
    MakeNodeArgs a{kRootInode, "f", S_IFREG | 0644, 0, 0, 0, true, "", 4096};
    auto r = store->MakeNode(OpToken{}, a, T(1));
    ASSERT_OK(r);
    f = r->attr.ino;
    ASSERT_OK(store->Commit(OpToken{}, CommitArgs{f, {}, 777, T(2), {}}, true, T(2)));
    ASSERT_OK(store->Commit(OpToken{}, CommitArgs{f, {}, 778, T(3), {}}, false, T(3)));
  }
  auto store = testing::OpenOrDie(path);
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(store->GetAttr(f)->size, 778u);
}

// ---- replay ----

TEST_P(FilesTest, ReplayedMakeNodeReturnsTheRecordedOutcome) {
  OpToken tok{session_, 1, 10};
  MakeNodeArgs a{kRootInode, "f", S_IFREG | 0644, 0, 0, 0, true, "", 100};
  auto first = store_->MakeNode(tok, a, T(200));
  ASSERT_OK(first);
  auto again = store_->MakeNode(tok, a, T(300));  // a retry: not kExists
  ASSERT_OK(again);
  EXPECT_EQ(again->attr.ino, first->attr.ino);
  EXPECT_TRUE(again->created);
  EXPECT_EQ(Counts().files, 1u);
  EXPECT_EQ(Attr(kRootInode).mtime, T(200));  // not executed twice
  // A new seq on the slot executes.
  auto next = store_->MakeNode(OpToken{session_, 1, 11}, a, T(400));
  EXPECT_CODE(next, kExists);
}

TEST_P(FilesTest, ReplayedFailureStaysAFailure) {
  MkFile(kRootInode, "f");
  OpToken tok{session_, 2, 1};
  MakeNodeArgs a{kRootInode, "f", S_IFREG | 0644, 0, 0, 0, true, "", 100};
  auto first = store_->MakeNode(tok, a, T(200));
  ASSERT_EQ(first.status().code(), StatusCode::kExists);
  ASSERT_OK(store_->Unlink(OpToken{}, kRootInode, "f", T(300)));
  auto again = store_->MakeNode(tok, a, T(400));  // would now succeed if run
  EXPECT_EQ(again.status().code(), StatusCode::kExists);
  EXPECT_EQ(again.status().message(), first.status().message());
  EXPECT_EQ(Find(kRootInode, "f"), InodeId());
}

TEST_P(FilesTest, ReplayedUnlinkAndRenameDoNotFail) {
  MkFile(kRootInode, "f");
  MkFile(kRootInode, "g");
  OpToken t1{session_, 0, 1};
  ASSERT_OK(store_->Unlink(t1, kRootInode, "f", T(200)));
  EXPECT_OK(store_->Unlink(t1, kRootInode, "f", T(201)));
  OpToken t2{session_, 0, 2};
  ASSERT_OK(store_->Rename(t2, kRootInode, "g", kRootInode, "h", 0, T(202)));
  EXPECT_OK(store_->Rename(t2, kRootInode, "g", kRootInode, "h", 0, T(203)));
  EXPECT_CODE(store_->Unlink(OpToken{session_, 0, 3}, kRootInode, "f", T(204)), kNotFound);
}

TEST_P(FilesTest, ReplayedOpenReturnsTheSameHandle) {
  InodeId f = MkFile(kRootInode, "f");
  OpToken tok{session_, 4, 1};
  auto h = store_->Open(tok, session_, f, O_RDWR, T(200));
  ASSERT_OK(h);
  auto again = store_->Open(tok, session_, f, O_RDWR, T(201));
  ASSERT_OK(again);
  EXPECT_EQ(again->handle, h->handle);
  EXPECT_EQ(again->attr.ino, f);
  EXPECT_EQ(Counts().open_handles, 1u);
  OpToken rel{session_, 4, 2};
  ASSERT_OK(store_->Release(rel, h->handle));
  EXPECT_OK(store_->Release(rel, h->handle));  // not kBadHandle
}

TEST_P(FilesTest, ReplayedAllocateCommitSetAttrLink) {
  InodeId f = MkFile(kRootInode, "f");
  OpToken ta{session_, 5, 1};
  auto l1 = store_->Allocate(ta, f, {0, 1}, targets_);
  ASSERT_OK(l1);
  auto l2 = store_->Allocate(ta, f, {0, 1}, targets_);
  ASSERT_OK(l2);
  ASSERT_EQ(l2->size(), 2u);
  EXPECT_EQ((*l2)[1].replicas[0].chunk, (*l1)[1].replicas[0].chunk);
  EXPECT_EQ(Counts().chunks, 2u);

  OpToken tc{session_, 5, 2};
  ASSERT_OK(store_->Commit(tc, CommitArgs{f, {}, 50, T(300), {}}, false, T(300)));
  ASSERT_OK(store_->Commit(OpToken{}, CommitArgs{f, {}, 60, T(310), {}}, false, T(310)));
  auto replayed = store_->Commit(tc, CommitArgs{f, {}, 50, T(300), {}}, false, T(320));
  ASSERT_OK(replayed);
  EXPECT_EQ(replayed->size, 60u);  // current attributes, not re-executed
  EXPECT_EQ(replayed->mtime, T(310));

  OpToken ts{session_, 5, 3};
  SetAttrArgs sa;
  sa.ino = f;
  sa.mask = kSetSize;
  sa.size = 0;
  ASSERT_OK(store_->SetAttr(ts, sa, T(400)));
  ASSERT_OK(store_->Allocate(OpToken{}, f, {0}, targets_));
  ASSERT_OK(store_->SetAttr(ts, sa, T(401)));  // the new chunk survives the retry
  EXPECT_EQ(store_->GetLayout(f, 0, 1)->size(), 1u);

  OpToken tl{session_, 5, 4};
  ASSERT_OK(store_->Link(tl, f, kRootInode, "g", T(500)));
  auto again = store_->Link(tl, f, kRootInode, "g", T(501));
  ASSERT_OK(again);
  EXPECT_EQ(again->nlink, 2u);
}

TEST_P(FilesTest, ReplaySlotsAreIndependentAndCleanedWithTheSession) {
  OpToken a{session_, 1, 7};
  OpToken b{session_, 2, 7};
  MakeNodeArgs x{kRootInode, "x", S_IFDIR | 0755, 0, 0, 0, true, "", 0};
  MakeNodeArgs y{kRootInode, "y", S_IFDIR | 0755, 0, 0, 0, true, "", 0};
  ASSERT_OK(store_->MakeNode(a, x, T(200)));
  ASSERT_OK(store_->MakeNode(b, y, T(200)));  // same seq, other slot: executes
  EXPECT_NE(Find(kRootInode, "y"), InodeId());
  EXPECT_CODE(store_->MakeNode(OpToken{SessionId(999), 1, 1}, x, T(200)), kMetaNoSession);
  ASSERT_OK(store_->CloseSession(session_));
  EXPECT_TRUE(CheckProblems().empty());  // no replay rows of unknown sessions remain
}

// ---- cluster ----

TEST_P(StoreTest, RegisterNodeAndVolumes) {
  NodeRecord n;
  n.host_id = "h1";
  n.hostname = "one";
  n.address = "10.0.0.1:7700";
  n.local_socket = "/run/t0fs/data.sock";
  n.volumes = {VolumeRecord{VolumeId(), NodeId(), "uuid-a", "/a", 100, 50, 3},
               VolumeRecord{VolumeId(), NodeId(), "uuid-b", "/b", 200, 150, 0}};
  auto r = store_->RegisterNode(n);
  ASSERT_OK(r);
  EXPECT_TRUE(r->node.valid());
  EXPECT_EQ(r->address, "10.0.0.1:7700");
  EXPECT_EQ(r->local_socket, "/run/t0fs/data.sock");
  EXPECT_EQ(r->last_heartbeat, Timespec{});  // not heard from yet
  ASSERT_EQ(r->volumes.size(), 2u);
  VolumeId va = r->volumes[0].volume;
  EXPECT_EQ(r->volumes[0].uuid, "uuid-a");
  EXPECT_EQ(r->volumes[0].total_bytes, 100u);
  EXPECT_EQ(r->volumes[0].node, r->node);
  ASSERT_OK(store_->UpdateVolumes(r->node, {}, T(10)));

  // Re-registering: same id, volumes matched by uuid, a new one added, the
  // last heartbeat kept.
  n.node = r->node;
  n.address = "10.0.0.1:7800";
  n.volumes = {VolumeRecord{VolumeId(), NodeId(), "uuid-c", "/c", 1, 1, 1},
               VolumeRecord{VolumeId(), NodeId(), "uuid-a", "/a2", 101, 51, 4}};
  auto r2 = store_->RegisterNode(n);
  ASSERT_OK(r2);
  EXPECT_EQ(r2->node, r->node);
  EXPECT_EQ(r2->address, "10.0.0.1:7800");
  EXPECT_EQ(r2->last_heartbeat, T(10));
  ASSERT_EQ(r2->volumes.size(), 3u);
  EXPECT_EQ(r2->volumes[0].volume, va);
  EXPECT_EQ(r2->volumes[0].path, "/a2");
  EXPECT_EQ(r2->volumes[0].free_bytes, 51u);
  EXPECT_GT(r2->volumes[2].volume, r2->volumes[1].volume);

  // A volume of node 1 cannot show up on another node.
  NodeRecord thief;
  thief.host_id = "h2";
  thief.volumes = {VolumeRecord{VolumeId(), NodeId(), "uuid-b", "/b", 1, 1, 1}};
  auto bad = store_->RegisterNode(thief);
  ASSERT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("uuid-b"), std::string::npos);
  EXPECT_EQ(store_->ListNodes()->size(), 1u);  // the failed registration left nothing

  // An explicit id is kept, and later assigned ids go past it.
  NodeRecord explicit_node;
  explicit_node.node = NodeId(50);
  explicit_node.host_id = "h50";
  ASSERT_EQ(store_->RegisterNode(explicit_node)->node, NodeId(50));
  NodeRecord fresh;
  fresh.host_id = "h51";
  EXPECT_GT(store_->RegisterNode(fresh)->node, NodeId(50));

  auto nodes = store_->ListNodes();
  ASSERT_OK(nodes);
  ASSERT_EQ(nodes->size(), 3u);
  EXPECT_EQ((*nodes)[0].volumes.size(), 3u);
  EXPECT_EQ((*nodes)[1].node, NodeId(50));
}

TEST_P(StoreTest, UpdateVolumes) {
  auto targets = testing::RegisterTargets(*store_, 3, 2);
  ASSERT_EQ(targets.size(), 2u);
  VolumeRecord by_id{targets[0].volume, NodeId(3), "", "", 1000, 10, 7};
  VolumeRecord by_uuid{VolumeId(), NodeId(3), "n3-v1", "", 2000, 20, 8};
  ASSERT_OK(store_->UpdateVolumes(NodeId(3), {by_id, by_uuid}, T(99)));
  auto nodes = store_->ListNodes();
  ASSERT_OK(nodes);
  const NodeRecord& n = (*nodes)[0];
  EXPECT_EQ(n.last_heartbeat, T(99));
  EXPECT_EQ(n.volumes[0].free_bytes, 10u);
  EXPECT_EQ(n.volumes[0].chunks, 7u);
  EXPECT_EQ(n.volumes[1].total_bytes, 2000u);
  EXPECT_EQ(n.volumes[1].path, "/data/n3-v1");
  EXPECT_CODE(store_->UpdateVolumes(NodeId(4), {}, T(100)), kMetaNoNode);
  VolumeRecord unknown{VolumeId(), NodeId(3), "nope", "", 1, 1, 1};
  EXPECT_CODE(store_->UpdateVolumes(NodeId(3), {unknown}, T(100)), kInvalidArgument);
  auto other = testing::RegisterTargets(*store_, 4, 1);
  VolumeRecord foreign{other[0].volume, NodeId(4), "", "", 1, 1, 1};
  EXPECT_CODE(store_->UpdateVolumes(NodeId(3), {foreign}, T(100)), kInvalidArgument);
}

// ---- garbage and reports ----

TEST_P(StoreTest, GarbageQueuePerNode) {
  auto n1 = testing::RegisterTargets(*store_, 1, 1);
  auto n2 = testing::RegisterTargets(*store_, 2, 1);
  std::vector<ReplicaTarget> both = {n1[0], n2[0]};
  InodeId f = MkFile(kRootInode, "f");
  ASSERT_OK(store_->Allocate(OpToken{}, f, {0, 1, 2}, both));
  ASSERT_OK(store_->Unlink(OpToken{}, kRootInode, "f", T(200)));
  EXPECT_EQ(Counts().garbage_chunks, 6u);

  auto page = store_->TakeGarbage(NodeId(1), 2);
  ASSERT_OK(page);
  ASSERT_EQ(page->size(), 2u);
  for (const GarbageChunk& g : *page) {
    EXPECT_EQ(g.node, NodeId(1));
    EXPECT_EQ(g.volume, n1[0].volume);
  }
  EXPECT_LT((*page)[0].chunk, (*page)[1].chunk);
  auto same = store_->TakeGarbage(NodeId(1), 2);  // not acknowledged: handed out again
  ASSERT_OK(same);
  EXPECT_EQ((*same)[0].id, (*page)[0].id);
  ASSERT_OK(store_->AckGarbage({(*page)[0].id, (*page)[1].id}));
  ASSERT_OK(store_->AckGarbage({(*page)[0].id}));  // idempotent
  auto rest = store_->TakeGarbage(NodeId(1), 10);
  ASSERT_OK(rest);
  ASSERT_EQ(rest->size(), 1u);
  EXPECT_EQ(store_->TakeGarbage(NodeId(2), 10)->size(), 3u);
  EXPECT_TRUE(store_->TakeGarbage(NodeId(9), 10)->empty());
  EXPECT_EQ(Counts().garbage_chunks, 4u);
}

// An encode's cells replace those of the recorded stripe cell by cell; a
// cell file no longer recorded (moved, of a failed command, of a removed
// chunk) is queued as garbage of its node under its cell id.
TEST_P(StoreTest, ErasureCodedCellsAreRecordedAndCollected) {
  std::vector<ReplicaTarget> n;
  for (uint32_t i = 1; i <= 4; ++i) n.push_back(testing::RegisterTargets(*store_, i, 1)[0]);
  InodeId f = MkFile(kRootInode, "f");
  ASSERT_OK(store_->Allocate(OpToken{}, f, {0}, {n[0]}));
  bool eof = false;
  auto scanned = store_->ScanReplicas(ChunkId(), 10, &eof);
  ASSERT_OK(scanned);
  ASSERT_EQ(scanned->size(), 1u);
  const ChunkId chunk = scanned->front().chunk;
  EXPECT_EQ(scanned->front().ec, "");
  auto place = [&](size_t i) { return ec::CellPlace{n[i].node, n[i].volume}; };
  const ec::CellPlace none{};
  auto recorded = [&]() -> std::string {
    auto page = store_->ScanReplicas(ChunkId(), 10, &eof);
    return page.ok() && page->size() == 1 ? page->front().ec : "?";
  };
  // garbage(NODE): the cell ids and versions queued for node NODE (acknowledged).
  auto garbage = [&](size_t i) {
    std::vector<std::pair<ChunkId, uint64_t>> out;
    auto page = store_->TakeGarbage(n[i].node, 100);
    EXPECT_OK(page);
    std::vector<uint64_t> ids;
    for (const GarbageChunk& g : *page) {
      out.emplace_back(g.chunk, g.version);
      ids.push_back(g.id);
    }
    EXPECT_OK(store_->AckGarbage(ids));
    return out;
  };
  using Cells = std::vector<std::pair<ChunkId, uint64_t>>;

  ec::EcStripe made{2, 1, 4096, 3, 10000, {place(1), place(2), place(3)}};
  ASSERT_OK(store_->RecordEcCells(chunk, made, true));
  EXPECT_EQ(recorded(), ec::FormatStripe(made));
  for (size_t i = 0; i < 4; ++i) EXPECT_TRUE(garbage(i).empty()) << i;

  // Cell 1 made again on node 1: its file on node 3 is garbage.
  ASSERT_OK(store_->RecordEcCells(chunk, ec::EcStripe{2, 1, 4096, 3, 10000, {none, place(0), none}},
                                  true));
  EXPECT_EQ(recorded(),
            ec::FormatStripe(ec::EcStripe{2, 1, 4096, 3, 10000, {place(1), place(0), place(3)}}));
  EXPECT_EQ(garbage(2), (Cells{{ec::CellChunkId(chunk, 1), 3}}));

  // A new version on nodes 2, 3, 4: cells 0 and 2 are overwritten in place,
  // cell 1 on node 1 is garbage.
  ec::EcStripe v4{2, 1, 4096, 4, 9000, {place(1), place(2), place(3)}};
  ASSERT_OK(store_->RecordEcCells(chunk, v4, true));
  EXPECT_EQ(recorded(), ec::FormatStripe(v4));
  EXPECT_EQ(garbage(0), (Cells{{ec::CellChunkId(chunk, 1), 3}}));
  for (size_t i = 1; i < 4; ++i) EXPECT_TRUE(garbage(i).empty()) << i;

  // A failed encode: what it wrote is garbage, except files the recorded
  // stripe holds; the record stays.
  ASSERT_OK(store_->RecordEcCells(chunk, ec::EcStripe{2, 1, 4096, 5, 0, {place(0), place(2), none}},
                                  false));
  EXPECT_EQ(recorded(), ec::FormatStripe(v4));
  EXPECT_EQ(garbage(0), (Cells{{ec::CellChunkId(chunk, 0), 5}}));
  EXPECT_TRUE(garbage(2).empty());

  // An encode about to write cell 1 on node 3 again withdraws the queued
  // removal of that file there (it would delete the new cell).
  ASSERT_OK(store_->DropEcCell(chunk, 1, n[2].node, 0));  // its removal queued on node 3
  ASSERT_OK(
      store_->WithdrawEcGarbage(chunk, ec::EcStripe{2, 1, 4096, 4, 0, {none, place(2), none}}));
  EXPECT_TRUE(garbage(2).empty());
  ASSERT_OK(store_->RecordEcCells(chunk, ec::EcStripe{2, 1, 4096, 4, 9000, {none, place(2), none}},
                                  true));
  EXPECT_EQ(recorded(), ec::FormatStripe(v4));

  // A cell found bad on its node leaves the record and is garbage; a
  // report naming another node, or a parity check of an older version,
  // changes nothing.
  ASSERT_OK(store_->DropEcCell(chunk, 1, n[0].node, 0));
  EXPECT_EQ(recorded(), ec::FormatStripe(v4));
  ASSERT_OK(store_->DropEcCell(chunk, 1, n[2].node, 3));
  EXPECT_EQ(recorded(), ec::FormatStripe(v4));
  ASSERT_OK(store_->DropEcCell(chunk, 1, n[2].node, 0));
  EXPECT_EQ(recorded(),
            ec::FormatStripe(ec::EcStripe{2, 1, 4096, 4, 9000, {place(1), none, place(3)}}));
  EXPECT_EQ(garbage(2), (Cells{{ec::CellChunkId(chunk, 1), 4}}));
  ASSERT_OK(store_->RecordEcCells(chunk, ec::EcStripe{2, 1, 4096, 4, 9000, {none, place(2), none}},
                                  true));
  EXPECT_EQ(recorded(), ec::FormatStripe(v4));

  // The file removed: its replica and every recorded cell are garbage; an
  // encode that ends after that leaves only garbage.
  ASSERT_OK(store_->Unlink(OpToken{}, kRootInode, "f", T(200)));
  EXPECT_EQ(garbage(0), (Cells{{chunk, 0}}));
  EXPECT_EQ(garbage(1), (Cells{{ec::CellChunkId(chunk, 0), 4}}));
  EXPECT_EQ(garbage(2), (Cells{{ec::CellChunkId(chunk, 1), 4}}));
  EXPECT_EQ(garbage(3), (Cells{{ec::CellChunkId(chunk, 2), 4}}));
  ASSERT_OK(store_->RecordEcCells(chunk, v4, true));
  EXPECT_EQ(garbage(3), (Cells{{ec::CellChunkId(chunk, 2), 4}}));
}

// Cells no goal asks for any more are cleared and collected.
TEST_P(StoreTest, ClearedCellsAreCollected) {
  auto n1 = testing::RegisterTargets(*store_, 1, 1);
  auto n2 = testing::RegisterTargets(*store_, 2, 1);
  InodeId f = MkFile(kRootInode, "f");
  ASSERT_OK(store_->Allocate(OpToken{}, f, {0}, {n1[0]}));
  bool eof = false;
  auto scanned = store_->ScanReplicas(ChunkId(), 10, &eof);
  ASSERT_OK(scanned);
  ASSERT_EQ(scanned->size(), 1u);
  const ChunkId chunk = scanned->front().chunk;
  const ec::EcStripe stripe{1, 1,   4096,
                            2, 100, {{n1[0].node, n1[0].volume}, {n2[0].node, n2[0].volume}}};
  ASSERT_OK(store_->RecordEcCells(chunk, stripe, true));
  ASSERT_OK(store_->ClearEcCells(chunk));
  scanned = store_->ScanReplicas(ChunkId(), 10, &eof);
  ASSERT_OK(scanned);
  EXPECT_EQ(scanned->front().ec, "");
  auto on1 = store_->TakeGarbage(NodeId(1), 10);
  auto on2 = store_->TakeGarbage(NodeId(2), 10);
  ASSERT_OK(on1);
  ASSERT_OK(on2);
  ASSERT_EQ(on1->size(), 1u);
  ASSERT_EQ(on2->size(), 1u);
  EXPECT_EQ(on1->front().chunk, ec::CellChunkId(chunk, 0));
  EXPECT_EQ(on2->front().chunk, ec::CellChunkId(chunk, 1));
  EXPECT_EQ(on2->front().version, 2u);
  ASSERT_OK(store_->ClearEcCells(chunk));  // nothing left: nothing queued
  EXPECT_EQ(store_->TakeGarbage(NodeId(2), 10)->size(), 1u);
}

// A copy ordered to a node that still has a removal of the chunk queued
// (it held a replica that was dropped) withdraws that removal: the node
// must not delete the new copy.
TEST_P(StoreTest, NewReplicaWithdrawsItsNodesQueuedRemoval) {
  auto n1 = testing::RegisterTargets(*store_, 1, 1);
  auto n2 = testing::RegisterTargets(*store_, 2, 1);
  InodeId f = MkFile(kRootInode, "f");
  ASSERT_OK(store_->Allocate(OpToken{}, f, {0}, {n1[0], n2[0]}));
  bool eof = false;
  auto scanned = store_->ScanReplicas(ChunkId(), 10, &eof);
  ASSERT_OK(scanned);
  ASSERT_EQ(scanned->size(), 1u);
  const ChunkId chunk = scanned->front().chunk;
  ASSERT_OK(store_->DropReplica(chunk, NodeId(2)));
  EXPECT_EQ(store_->TakeGarbage(NodeId(2), 10)->size(), 1u);
  ASSERT_OK(store_->AddPendingReplica(chunk, NodeId(2), n2[0].volume));
  EXPECT_TRUE(store_->TakeGarbage(NodeId(2), 10)->empty());
}

TEST_P(StoreTest, ListChunksPagesOverLayoutsAndGarbage) {
  auto targets = testing::RegisterTargets(*store_, 1, 2);
  InodeId f = MkFile(kRootInode, "f");
  InodeId g = MkFile(kRootInode, "g");
  ASSERT_OK(store_->Allocate(OpToken{}, f, {0, 1, 2}, targets));
  ASSERT_OK(store_->Allocate(OpToken{}, g, {0, 1}, targets));
  SetAttrArgs a;
  a.ino = f;
  a.mask = kSetSize;
  a.size = 0;  // chunks of f → garbage
  ASSERT_OK(store_->SetAttr(OpToken{}, a, T(300)));

  std::vector<ChunkRecord> all;
  ChunkId after;
  bool eof = false;
  int pages = 0;
  while (!eof) {
    auto page = store_->ListChunks(after, 3, &eof);
    ASSERT_OK(page);
    ASSERT_LE(page->size(), 3u);
    ASSERT_TRUE(!page->empty() || eof);
    if (!page->empty()) after = page->back().chunk;
    all.insert(all.end(), page->begin(), page->end());
    ASSERT_LT(++pages, 20);
  }
  ASSERT_EQ(all.size(), 10u);  // 5 chunks x 2 replicas, none split or lost
  for (size_t i = 0; i + 1 < all.size(); ++i) EXPECT_LE(all[i].chunk, all[i + 1].chunk);
  size_t garbage = 0;
  for (const ChunkRecord& r : all) {
    EXPECT_EQ(r.chunk, r.replica.chunk);
    if (r.garbage) {
      ++garbage;
      EXPECT_EQ(r.ino, f);
    } else {
      EXPECT_EQ(r.ino, g);
    }
  }
  EXPECT_EQ(garbage, 6u);
  EXPECT_EQ(all[0].index, 0u);
  EXPECT_EQ(all[0].replica.volume, targets[0].volume);
  EXPECT_EQ(all[1].replica.volume, targets[1].volume);
  EXPECT_CODE(store_->ListChunks(ChunkId(), 0, &eof), kInvalidArgument);
}

TEST_P(StoreTest, CountsEverything) {
  auto targets = testing::RegisterTargets(*store_, 1, 1);
  InodeId d = MkDir(kRootInode, "d");
  InodeId f = MkFile(d, "f");
  MkFile(d, "g");
  MakeNodeArgs l{kRootInode, "l", S_IFLNK | 0777, 0, 0, 0, true, "t", 0};
  ASSERT_OK(store_->MakeNode(OpToken{}, l, T(1)));
  ASSERT_OK(store_->Allocate(OpToken{}, f, {0, 1}, targets));
  ASSERT_OK(store_->Commit(OpToken{}, CommitArgs{f, {}, 150, {}, {}}, false, T(2)));
  SessionId s = NewSession();
  ASSERT_OK(store_->Open(OpToken{}, s, f, O_RDONLY, T(3)));
  StoreCounts c = Counts();
  EXPECT_EQ(c.files, 3u);
  EXPECT_EQ(c.directories, 2u);
  EXPECT_EQ(c.chunks, 2u);
  EXPECT_EQ(c.logical_bytes, 150u);
  EXPECT_EQ(c.sessions, 1u);
  EXPECT_EQ(c.open_handles, 1u);
  EXPECT_EQ(c.garbage_chunks, 0u);
}

T0FS_STORE_TEST_SUITE(FilesTest);

}  // namespace
}  // namespace t0fs::meta
