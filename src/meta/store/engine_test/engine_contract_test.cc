// The engine contract (engine.h), run against every engine: SQLite in
// memory and in a file always, PostgreSQL when T0FS_PG_URL names a database
// (tests/pg/engine.sh; skipped otherwise). Every row kind goes in and comes
// back bit for bit (byte strings with NUL included), scans keep the orders
// engine.h promises (also across the pages of a large scan), a transaction
// dropped without Commit applies nothing, counters never repeat an id (also
// across a reopen and after ReserveId), concurrent writers serialise, and a
// new store has no rows. Engine-specific tests (schema, migration, options)
// live beside each engine.
#include <fcntl.h>
#include <sys/stat.h>

#include <limits>
#include <map>
#include <thread>

#include "meta/store/engine_test/engine_homes.h"

namespace t0fs::meta {
namespace {

using testing::EngineHome;

std::unique_ptr<WriteTxn> BeginWriteTxn(Engine& engine, bool durable = false) {
  auto txn = engine.BeginWrite(WriteOptions{durable});
  EXPECT_OK(txn);
  return txn.ok() ? std::move(txn).value() : nullptr;
}

std::unique_ptr<ReadTxn> BeginReadTxn(Engine& engine) {
  auto txn = engine.BeginRead();
  EXPECT_OK(txn);
  return txn.ok() ? std::move(txn).value() : nullptr;
}

class EngineContract : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    home = testing::NewEngineHome(GetParam());
    if (home == nullptr) GTEST_SKIP() << "T0FS_PG_URL is not set (tests/pg/engine.sh sets it)";
    ASSERT_TRUE(Reopen());
  }
  void TearDown() override { engine.reset(); }  // before the home goes

  // A new engine on the home's store (the old one closed first).
  bool Reopen() {
    engine.reset();
    auto opened = home->Open();
    EXPECT_OK(opened);
    if (!opened.ok()) return false;
    engine = std::move(opened).value();
    return true;
  }

  std::unique_ptr<EngineHome> home;
  std::unique_ptr<Engine> engine;
};

INSTANTIATE_TEST_SUITE_P(Engines, EngineContract, ::testing::ValuesIn(testing::EngineKinds()),
                         [](const auto& info) { return info.param; });

// Chunks by id with their replica counts, in ListChunksOf's order.
using Chunks = std::vector<std::pair<uint64_t, size_t>>;

// ListChunksOf(ino, first, all) as Chunks.
Chunks ChunksOf(WriteTxn& txn, uint64_t ino, uint64_t first = 0) {
  Chunks out;
  auto got = txn.ListChunksOf(InodeId(ino), first, std::numeric_limits<uint64_t>::max());
  EXPECT_OK(got);
  if (got.ok()) {
    for (const ChunkWithReplicas& c : *got) out.emplace_back(c.chunk.id.value(), c.replicas.size());
  }
  return out;
}

// The ids of ListHandlesOf(ino), in its order.
std::vector<uint64_t> HandleIdsOf(WriteTxn& txn, uint64_t ino) {
  std::vector<uint64_t> ids;
  auto got = txn.ListHandlesOf(InodeId(ino));
  EXPECT_OK(got);
  if (got.ok()) {
    for (const HandleRow& h : *got) ids.push_back(h.id.value());
  }
  return ids;
}

InodeRow SampleInode(uint64_t ino, uint32_t mode) {
  InodeRow row;
  row.attr.ino = InodeId(ino);
  row.attr.mode = mode;
  row.attr.uid = 1001;
  row.attr.gid = 1002;
  row.attr.size = (1ull << 40) + 7;
  row.attr.nlink = 3;
  row.attr.rdev = 0x0801;
  row.attr.atime = Timespec{1700000000, 1};
  row.attr.mtime = Timespec{-5, 999999999};
  row.attr.ctime = Timespec{1700000002, 3};
  row.attr.chunk_size = 4u << 20;
  row.attr.generation = 9;
  row.attr.replicas = 2;
  row.attr.placement = Placement::kSpread;
  row.attr.placement_nodes = {NodeId(4), NodeId(17)};
  row.attr.protect = Protection{ProtectKind::kEc, 4, 2, 2592000, KeepLocal::kPressure};
  row.parent = S_ISDIR(mode) ? InodeId(1) : InodeId();
  row.entry_seq = S_ISDIR(mode) ? 41 : 0;
  return row;
}

void ExpectSameInode(const InodeRow& got, const InodeRow& want) {
  const InodeAttr& g = got.attr;
  const InodeAttr& w = want.attr;
  EXPECT_EQ(g.ino, w.ino);
  EXPECT_EQ(g.mode, w.mode);
  EXPECT_EQ(g.uid, w.uid);
  EXPECT_EQ(g.gid, w.gid);
  EXPECT_EQ(g.size, w.size);
  EXPECT_EQ(g.nlink, w.nlink);
  EXPECT_EQ(g.rdev, w.rdev);
  EXPECT_EQ(g.atime.sec, w.atime.sec);
  EXPECT_EQ(g.atime.nsec, w.atime.nsec);
  EXPECT_EQ(g.mtime.sec, w.mtime.sec);
  EXPECT_EQ(g.mtime.nsec, w.mtime.nsec);
  EXPECT_EQ(g.ctime.sec, w.ctime.sec);
  EXPECT_EQ(g.ctime.nsec, w.ctime.nsec);
  EXPECT_EQ(g.chunk_size, w.chunk_size);
  EXPECT_EQ(g.generation, w.generation);
  EXPECT_EQ(g.replicas, w.replicas);
  EXPECT_EQ(g.placement, w.placement);
  EXPECT_EQ(g.placement_nodes, w.placement_nodes);
  EXPECT_EQ(g.protect, w.protect);
  EXPECT_EQ(got.target, want.target);
  EXPECT_EQ(got.parent, want.parent);
  EXPECT_EQ(got.entry_seq, want.entry_seq);
}

TEST_P(EngineContract, InodeRowsRoundTrip) {
  InodeRow dir = SampleInode(10, S_IFDIR | 0755);
  InodeRow link = SampleInode(11, S_IFLNK | 0777);
  link.target = std::string("a\0b/\xff", 5);
  {
    auto txn = BeginWriteTxn(*engine);
    ASSERT_TRUE(txn);
    ASSERT_OK(txn->PutInode(dir));
    ASSERT_OK(txn->PutInode(link));
    // A transaction reads its own writes.
    auto got = txn->GetInode(InodeId(11));
    ASSERT_OK(got);
    ASSERT_TRUE(got->has_value());
    ExpectSameInode(**got, link);
    ASSERT_OK(txn->Commit());
  }
  auto txn = BeginReadTxn(*engine);
  ASSERT_TRUE(txn);
  auto got = txn->GetInode(InodeId(10));
  ASSERT_OK(got);
  ASSERT_TRUE(got->has_value());
  ExpectSameInode(**got, dir);
  auto missing = txn->GetInode(InodeId(12));
  ASSERT_OK(missing);
  EXPECT_FALSE(missing->has_value());
  std::vector<uint64_t> order;
  ASSERT_OK(txn->ScanInodes([&](const InodeRow& row) {
    order.push_back(row.attr.ino.value());
    return Status::Ok();
  }));
  EXPECT_EQ(order, (std::vector<uint64_t>{10, 11}));
}

TEST_P(EngineContract, PutReplacesAndDeleteRemoves) {
  auto txn = BeginWriteTxn(*engine);
  ASSERT_TRUE(txn);
  InodeRow row = SampleInode(20, S_IFREG | 0644);
  ASSERT_OK(txn->PutInode(row));
  row.attr.size = 5;
  row.attr.placement_nodes.clear();
  row.attr.protect = Protection{ProtectKind::kReplicas, 16, 0, 0, KeepLocal::kKeep};
  ASSERT_OK(txn->PutInode(row));
  auto replaced = txn->GetInode(InodeId(20));
  ASSERT_OK(replaced);
  ASSERT_TRUE(replaced->has_value());
  ExpectSameInode(**replaced, row);
  row.attr.protect = Protection{};  // back to none
  ASSERT_OK(txn->PutInode(row));
  auto got = txn->GetInode(InodeId(20));
  ASSERT_OK(got);
  ASSERT_TRUE(got->has_value());
  ExpectSameInode(**got, row);
  ASSERT_OK(txn->DeleteInode(InodeId(20)));
  got = txn->GetInode(InodeId(20));
  ASSERT_OK(got);
  EXPECT_FALSE(got->has_value());
}

// Protection goals (two integer columns, rows.h) come back as written after
// a commit (and a reopen of a persistent store) — read, scanned and joined
// to an entry — the default
// as kNone and a kind this build does not know as it was.
TEST_P(EngineContract, ProtectionGoalsRoundTrip) {
  const std::vector<Protection> goals = {
      Protection{},
      Protection{ProtectKind::kReplicas, 3, 0, 300, KeepLocal::kKeep},
      Protection{ProtectKind::kEc, 4, 2, 0, KeepLocal::kDrop},
      Protection{ProtectKind::kObject, 0, 0, UINT32_MAX, KeepLocal::kPressure},
      Protection{ProtectKind::kObject, 0, 0, 60, KeepLocal::kDrop, 86400},
      // after= in the top 32 bits, up to its highest bit (the column's sign).
      Protection{static_cast<ProtectKind>(255), 255, 255, 1, static_cast<KeepLocal>(255),
                 UINT32_MAX},
  };
  {
    auto txn = BeginWriteTxn(*engine);
    ASSERT_TRUE(txn);
    InodeRow dir = SampleInode(1, S_IFDIR | 0755);
    dir.attr.protect = Protection{};
    ASSERT_OK(txn->PutInode(dir));
    for (size_t goal_idx = 0; goal_idx < goals.size(); ++goal_idx) {
      InodeRow row = SampleInode(50 + goal_idx, S_IFREG | 0644);
      row.attr.protect = goals[goal_idx];
      ASSERT_OK(txn->PutInode(row));
      ASSERT_OK(txn->PutDentry(DentryRow{InodeId(1), "f" + std::to_string(goal_idx),
                                         InodeId(50 + goal_idx), goal_idx + 1}));
    }
    // A row written without setting the goal has none.
    InodeRow bare;
    bare.attr.ino = InodeId(60);
    bare.attr.mode = S_IFREG | 0600;
    ASSERT_OK(txn->PutInode(bare));
    ASSERT_OK(txn->Commit());
  }
  if (home->persistent()) {
    ASSERT_TRUE(Reopen());
  }
  auto txn = BeginReadTxn(*engine);
  ASSERT_TRUE(txn);
  for (size_t goal_idx = 0; goal_idx < goals.size(); ++goal_idx) {
    auto got = txn->GetInode(InodeId(50 + goal_idx));
    ASSERT_OK(got);
    ASSERT_TRUE(got->has_value());
    EXPECT_EQ((*got)->attr.protect, goals[goal_idx]) << "goal " << goal_idx;
  }
  auto bare = txn->GetInode(InodeId(60));
  ASSERT_OK(bare);
  ASSERT_TRUE(bare->has_value());
  EXPECT_EQ((*bare)->attr.protect.kind, ProtectKind::kNone);
  EXPECT_EQ((*bare)->attr.protect, Protection{});
  std::map<uint64_t, Protection> scanned;
  ASSERT_OK(txn->ScanInodes([&](const InodeRow& row) {
    scanned[row.attr.ino.value()] = row.attr.protect;
    return Status::Ok();
  }));
  for (size_t goal_idx = 0; goal_idx < goals.size(); ++goal_idx)
    EXPECT_EQ(scanned[50 + goal_idx], goals[goal_idx]) << "goal " << goal_idx;
  auto listed = txn->ListDir(InodeId(1), 0, 100, true);
  ASSERT_OK(listed);
  ASSERT_EQ(listed->size(), goals.size());
  for (size_t goal_idx = 0; goal_idx < goals.size(); ++goal_idx) {
    ASSERT_TRUE((*listed)[goal_idx].inode.has_value());
    EXPECT_EQ((*listed)[goal_idx].inode->attr.protect, goals[goal_idx]) << "goal " << goal_idx;
  }
}

TEST_P(EngineContract, DentriesListBySeqAndScanByName) {
  auto txn = BeginWriteTxn(*engine);
  ASSERT_TRUE(txn);
  ASSERT_OK(txn->PutInode(SampleInode(30, S_IFREG | 0644)));
  const std::string nul_name("x\0y", 3);
  ASSERT_OK(txn->PutDentry(DentryRow{InodeId(1), "b", InodeId(30), 1}));
  ASSERT_OK(txn->PutDentry(DentryRow{InodeId(1), "a", InodeId(31), 2}));  // no inode row
  ASSERT_OK(txn->PutDentry(DentryRow{InodeId(1), nul_name, InodeId(30), 3}));
  ASSERT_OK(txn->PutDentry(DentryRow{InodeId(2), "a", InodeId(30), 1}));

  auto all = txn->ListDir(InodeId(1), 0, 10, true);
  ASSERT_OK(all);
  ASSERT_EQ(all->size(), 3u);
  EXPECT_EQ((*all)[0].dentry.name, "b");
  ASSERT_TRUE((*all)[0].inode.has_value());
  EXPECT_EQ((*all)[0].inode->attr.ino, InodeId(30));
  EXPECT_EQ((*all)[1].dentry.name, "a");
  EXPECT_FALSE((*all)[1].inode.has_value());  // a damaged store: the inode is missing
  EXPECT_EQ((*all)[2].dentry.name, nul_name);
  EXPECT_EQ((*all)[2].dentry.seq, 3u);

  auto rest = txn->ListDir(InodeId(1), 1, 1, false);
  ASSERT_OK(rest);
  ASSERT_EQ(rest->size(), 1u);
  EXPECT_EQ((*rest)[0].dentry.name, "a");
  EXPECT_FALSE((*rest)[0].inode.has_value());

  auto one = txn->GetDentry(InodeId(1), nul_name);
  ASSERT_OK(one);
  ASSERT_TRUE(one->has_value());
  EXPECT_EQ((*one)->ino, InodeId(30));
  auto prefix = txn->GetDentry(InodeId(1), "x");
  ASSERT_OK(prefix);
  EXPECT_FALSE(prefix->has_value());

  // Repointing keeps the key; the row takes the new ino and seq.
  ASSERT_OK(txn->PutDentry(DentryRow{InodeId(1), "b", InodeId(32), 1}));
  std::vector<std::string> keys;
  ASSERT_OK(txn->ScanDentries([&](const DentryRow& d) {
    keys.push_back(std::to_string(d.parent.value()) + "/" + d.name + "=" +
                   std::to_string(d.ino.value()));
    return Status::Ok();
  }));
  EXPECT_EQ(keys,
            (std::vector<std::string>{"1/a=31", "1/b=32", "1/" + nul_name + "=30", "2/a=30"}));

  ASSERT_OK(txn->DeleteDentry(InodeId(1), "a"));
  auto after = txn->ListDir(InodeId(1), 0, 10, false);
  ASSERT_OK(after);
  EXPECT_EQ(after->size(), 2u);
}

// The inode `name` in `dir` names, as `txn` reads it; nullopt if none.
std::optional<uint64_t> EntryIno(WriteTxn& txn, uint64_t dir, const std::string& name) {
  auto got = txn.GetDentry(InodeId(dir), name);
  EXPECT_OK(got);
  if (!got.ok() || !got->has_value()) return std::nullopt;
  return (*got)->ino.value();
}

// PrefetchEntry (a hint: an engine may read a directory and one entry at
// once) changes no answer: the reads after it give what they give without
// it, also after the transaction wrote that entry.
TEST_P(EngineContract, PrefetchedEntriesAnswerLikeReads) {
  {
    auto txn = BeginWriteTxn(*engine);
    ASSERT_TRUE(txn);
    ASSERT_OK(txn->PutInode(SampleInode(40, S_IFDIR | 0755)));
    ASSERT_OK(txn->PutInode(SampleInode(41, S_IFREG | 0644)));
    ASSERT_OK(txn->PutDentry(DentryRow{InodeId(40), "f", InodeId(41), 1}));
    ASSERT_OK(txn->Commit());
  }
  {
    auto txn = BeginWriteTxn(*engine);
    ASSERT_TRUE(txn);
    ASSERT_OK(txn->PrefetchEntry(InodeId(40), "f"));
    auto dir = txn->GetInode(InodeId(40));
    ASSERT_OK(dir);
    ASSERT_TRUE(dir->has_value());
    ExpectSameInode(**dir, SampleInode(40, S_IFDIR | 0755));
    EXPECT_EQ(EntryIno(*txn, 40, "f"), 41u);
    auto file = txn->GetInode(InodeId(41));
    ASSERT_OK(file);
    ASSERT_TRUE(file->has_value());
    ExpectSameInode(**file, SampleInode(41, S_IFREG | 0644));
    ASSERT_OK(txn->PrefetchEntry(InodeId(40), "g"));  // the directory is known: reads nothing
    EXPECT_EQ(EntryIno(*txn, 40, "g"), std::nullopt);
  }
  {
    auto txn = BeginWriteTxn(*engine);
    ASSERT_TRUE(txn);
    ASSERT_OK(txn->PrefetchEntry(InodeId(40), "none"));
    EXPECT_EQ(EntryIno(*txn, 40, "none"), std::nullopt);
    ASSERT_OK(txn->PrefetchEntry(InodeId(99), "f"));  // no such directory
    auto dir = txn->GetInode(InodeId(99));
    ASSERT_OK(dir);
    EXPECT_FALSE(dir->has_value());
    EXPECT_EQ(EntryIno(*txn, 99, "f"), std::nullopt);
  }
  {  // written after the prefetch: the write is what is read
    auto txn = BeginWriteTxn(*engine);
    ASSERT_TRUE(txn);
    ASSERT_OK(txn->PrefetchEntry(InodeId(40), "f"));
    ASSERT_OK(txn->DeleteDentry(InodeId(40), "f"));
    EXPECT_EQ(EntryIno(*txn, 40, "f"), std::nullopt);
  }
  {
    auto txn = BeginWriteTxn(*engine);
    ASSERT_TRUE(txn);
    ASSERT_OK(txn->PrefetchEntry(InodeId(40), "g"));
    ASSERT_OK(txn->PutDentry(DentryRow{InodeId(40), "g", InodeId(41), 2}));
    EXPECT_EQ(EntryIno(*txn, 40, "g"), 41u);
    // Another entry than the prefetched one is read as usual.
    EXPECT_EQ(EntryIno(*txn, 40, "f"), 41u);
  }
}

// Prefetches sent together before any read (a mutation's: PostgreSQL reads
// them with the next read that waits) change no answer either: two entries
// of one directory and two volumes, present or missing, read in any order
// with other reads between; a row written after its prefetch was queued is
// read as written; a prefetch nobody read does not stop the commit.
TEST_P(EngineContract, PrefetchesTogetherAnswerLikeReads) {
  const VolumeRecord volume{VolumeId(4), NodeId(2), "uuid-4", "/v", 100, 50, 3};
  {
    auto txn = BeginWriteTxn(*engine);
    ASSERT_TRUE(txn);
    ASSERT_OK(txn->PutInode(SampleInode(40, S_IFDIR | 0755)));
    ASSERT_OK(txn->PutInode(SampleInode(41, S_IFREG | 0644)));
    ASSERT_OK(txn->PutDentry(DentryRow{InodeId(40), "f", InodeId(41), 1}));
    ASSERT_OK(txn->PutVolume(volume));
    ASSERT_OK(txn->PutChunk(ChunkRow{ChunkId(7), InodeId(41), 0}));
    ASSERT_OK(txn->PutReplica(
        ReplicaRow{ChunkId(7), 0, NodeId(2), VolumeId(4), 1, ReplicaState::kHealthy}));
    ASSERT_OK(txn->Commit());
  }
  auto prefetch_all = [](WriteTxn& txn) {
    EXPECT_OK(txn.PrefetchEntry(InodeId(40), "f"));
    EXPECT_OK(txn.PrefetchEntry(InodeId(40), "new"));
    EXPECT_OK(txn.PrefetchVolume(VolumeId(4)));
    EXPECT_OK(txn.PrefetchVolume(VolumeId(5)));
  };
  {  // read after another read (the replay slot's), in any order
    auto txn = BeginWriteTxn(*engine);
    ASSERT_TRUE(txn);
    prefetch_all(*txn);
    auto replay = txn->GetReplay(SessionId(9), 0);
    ASSERT_OK(replay);
    EXPECT_FALSE(replay->has_value());
    auto chunk = txn->GetChunk(ChunkId(7));
    ASSERT_OK(chunk);
    ASSERT_TRUE(chunk->has_value());
    EXPECT_EQ((*chunk)->chunk.ino, InodeId(41));
    ASSERT_EQ((*chunk)->replicas.size(), 1u);
    EXPECT_EQ((*chunk)->replicas[0].volume, VolumeId(4));
    auto other_chunk = txn->GetChunk(ChunkId(8));
    ASSERT_OK(other_chunk);
    EXPECT_FALSE(other_chunk->has_value());
    EXPECT_EQ(EntryIno(*txn, 40, "new"), std::nullopt);
    EXPECT_EQ(EntryIno(*txn, 40, "f"), 41u);
    auto vol = txn->GetVolume(VolumeId(4));
    ASSERT_OK(vol);
    ASSERT_TRUE(vol->has_value());
    EXPECT_EQ((*vol)->node, NodeId(2));
    EXPECT_EQ((*vol)->uuid, "uuid-4");
    auto missing = txn->GetVolume(VolumeId(5));
    ASSERT_OK(missing);
    EXPECT_FALSE(missing->has_value());
    auto file = txn->GetInode(InodeId(41));
    ASSERT_OK(file);
    ASSERT_TRUE(file->has_value());
    ExpectSameInode(**file, SampleInode(41, S_IFREG | 0644));
  }
  {  // written after the prefetches were queued: the writes are what is read
    auto txn = BeginWriteTxn(*engine);
    ASSERT_TRUE(txn);
    prefetch_all(*txn);
    InodeRow dir = SampleInode(40, S_IFDIR | 0755);
    dir.attr.size = 777;
    ASSERT_OK(txn->PutInode(dir));
    ASSERT_OK(txn->DeleteInode(InodeId(41)));
    ASSERT_OK(txn->PutDentry(DentryRow{InodeId(40), "new", InodeId(41), 2}));
    ASSERT_OK(txn->DeleteDentry(InodeId(40), "f"));
    VolumeRecord moved = volume;
    moved.node = NodeId(3);
    ASSERT_OK(txn->PutVolume(moved));
    ASSERT_OK(txn->DeleteChunk(ChunkId(7)));
    auto got_dir = txn->GetInode(InodeId(40));
    ASSERT_OK(got_dir);
    ASSERT_TRUE(got_dir->has_value());
    EXPECT_EQ((*got_dir)->attr.size, 777u);
    auto file = txn->GetInode(InodeId(41));
    ASSERT_OK(file);
    EXPECT_FALSE(file->has_value());
    EXPECT_EQ(EntryIno(*txn, 40, "new"), 41u);
    EXPECT_EQ(EntryIno(*txn, 40, "f"), std::nullopt);
    auto vol = txn->GetVolume(VolumeId(4));
    ASSERT_OK(vol);
    ASSERT_TRUE(vol->has_value());
    EXPECT_EQ((*vol)->node, NodeId(3));
    auto chunk = txn->GetChunk(ChunkId(7));
    ASSERT_OK(chunk);
    EXPECT_FALSE(chunk->has_value());
  }
  {  // prefetched, never read, committed
    auto txn = BeginWriteTxn(*engine);
    ASSERT_TRUE(txn);
    prefetch_all(*txn);
    ASSERT_OK(txn->PutReplica(
        ReplicaRow{ChunkId(7), 1, NodeId(3), VolumeId(6), 1, ReplicaState::kHealthy}));
    auto chunk = txn->GetChunk(ChunkId(7));
    ASSERT_OK(chunk);
    ASSERT_TRUE(chunk->has_value());
    EXPECT_EQ((*chunk)->replicas.size(), 2u);
    ASSERT_OK(txn->Commit());
  }
  auto txn = BeginReadTxn(*engine);
  ASSERT_TRUE(txn);
  auto chunk = txn->GetChunk(ChunkId(7));
  ASSERT_OK(chunk);
  ASSERT_TRUE(chunk->has_value());
  EXPECT_EQ((*chunk)->replicas.size(), 2u);
}

// PrefetchRemoval (a removal's reads of the inode an entry names: its
// handles, and its chunks or first entry) changes no answer either: read
// after another read or first, of a file, a directory, a missing entry;
// written between the prefetch and the read, before or after its rows came
// back; and another inode's rows are read as usual.
TEST_P(EngineContract, PrefetchedRemovalAnswersLikeReads) {
  {
    auto txn = BeginWriteTxn(*engine);
    ASSERT_TRUE(txn);
    ASSERT_OK(txn->PutInode(SampleInode(60, S_IFDIR | 0755)));
    ASSERT_OK(txn->PutInode(SampleInode(61, S_IFREG | 0644)));
    ASSERT_OK(txn->PutInode(SampleInode(62, S_IFDIR | 0755)));
    ASSERT_OK(txn->PutInode(SampleInode(63, S_IFREG | 0644)));
    ASSERT_OK(txn->PutDentry(DentryRow{InodeId(60), "f", InodeId(61), 1}));
    ASSERT_OK(txn->PutDentry(DentryRow{InodeId(60), "d", InodeId(62), 2}));
    ASSERT_OK(txn->PutDentry(DentryRow{InodeId(62), "x", InodeId(63), 5}));
    ASSERT_OK(txn->PutDentry(DentryRow{InodeId(62), "y", InodeId(63), 6}));
    ASSERT_OK(txn->PutHandle(HandleRow{HandleId(20), SessionId(3), InodeId(61), 0}));
    ASSERT_OK(txn->PutChunk(ChunkRow{ChunkId(30), InodeId(61), 0}));
    ASSERT_OK(txn->PutChunk(ChunkRow{ChunkId(31), InodeId(61), 1}));
    ASSERT_OK(txn->PutReplica(
        ReplicaRow{ChunkId(30), 0, NodeId(2), VolumeId(4), 1, ReplicaState::kHealthy}));
    ASSERT_OK(txn->PutReplica(
        ReplicaRow{ChunkId(30), 1, NodeId(3), VolumeId(5), 1, ReplicaState::kHealthy}));
    ASSERT_OK(txn->Commit());
  }
  auto first_of = [](WriteTxn& txn, uint64_t dir) -> std::optional<std::string> {
    auto got = txn.ListDir(InodeId(dir), 0, 1, false);
    EXPECT_OK(got);
    if (!got.ok() || got->empty()) return std::nullopt;
    return got->front().dentry.name;
  };
  {  // a file, read after the replay slot's read
    auto txn = BeginWriteTxn(*engine);
    ASSERT_TRUE(txn);
    ASSERT_OK(txn->PrefetchEntry(InodeId(60), "f"));
    ASSERT_OK(txn->PrefetchRemoval(InodeId(60), "f", false));
    ASSERT_OK(txn->GetReplay(SessionId(9), 0).status());
    EXPECT_EQ(EntryIno(*txn, 60, "f"), 61u);
    EXPECT_EQ(HandleIdsOf(*txn, 62), std::vector<uint64_t>());  // another inode: read as usual
    EXPECT_EQ(HandleIdsOf(*txn, 61), std::vector<uint64_t>{20});
    EXPECT_EQ(ChunksOf(*txn, 61), (Chunks{{30, 2}, {31, 0}}));
    EXPECT_EQ(HandleIdsOf(*txn, 61), std::vector<uint64_t>{20});  // read again
  }
  {  // a directory, read first
    auto txn = BeginWriteTxn(*engine);
    ASSERT_TRUE(txn);
    ASSERT_OK(txn->PrefetchEntry(InodeId(60), "d"));
    ASSERT_OK(txn->PrefetchRemoval(InodeId(60), "d", true));
    EXPECT_EQ(first_of(*txn, 62), "x");
    EXPECT_EQ(HandleIdsOf(*txn, 62), std::vector<uint64_t>());
    EXPECT_EQ(first_of(*txn, 60), "f");  // another directory
  }
  {  // written before the prefetched rows came back
    auto txn = BeginWriteTxn(*engine);
    ASSERT_TRUE(txn);
    ASSERT_OK(txn->PrefetchRemoval(InodeId(60), "f", false));
    ASSERT_OK(txn->PrefetchRemoval(InodeId(60), "d", true));
    ASSERT_OK(txn->PutHandle(HandleRow{HandleId(21), SessionId(3), InodeId(61), 0}));
    ASSERT_OK(txn->DeleteChunk(ChunkId(31)));
    ASSERT_OK(txn->DeleteDentry(InodeId(62), "x"));
    EXPECT_EQ(HandleIdsOf(*txn, 61), (std::vector<uint64_t>{20, 21}));
    EXPECT_EQ(ChunksOf(*txn, 61), (Chunks{{30, 2}}));
    EXPECT_EQ(first_of(*txn, 62), "y");
  }
  {  // written after they came back (a read between)
    auto txn = BeginWriteTxn(*engine);
    ASSERT_TRUE(txn);
    ASSERT_OK(txn->PrefetchRemoval(InodeId(60), "f", false));
    ASSERT_OK(txn->PrefetchRemoval(InodeId(60), "d", true));
    ASSERT_OK(txn->GetReplay(SessionId(9), 0).status());
    ASSERT_OK(txn->DeleteHandle(HandleId(20)));
    ASSERT_OK(txn->DeleteReplica(ChunkId(30), 1));
    ASSERT_OK(txn->PutDentry(DentryRow{InodeId(62), "a", InodeId(63), 4}));
    EXPECT_EQ(HandleIdsOf(*txn, 61), std::vector<uint64_t>());
    EXPECT_EQ(ChunksOf(*txn, 61), (Chunks{{30, 1}, {31, 0}}));
    EXPECT_EQ(first_of(*txn, 62), "a");
  }
  {  // no such entry; an empty directory; a file asked as a directory
    auto txn = BeginWriteTxn(*engine);
    ASSERT_TRUE(txn);
    ASSERT_OK(txn->PrefetchRemoval(InodeId(60), "none", false));
    ASSERT_OK(txn->PrefetchRemoval(InodeId(62), "x", true));
    EXPECT_EQ(HandleIdsOf(*txn, 63), std::vector<uint64_t>());
    EXPECT_EQ(first_of(*txn, 63), std::nullopt);
    EXPECT_EQ(ChunksOf(*txn, 61), (Chunks{{30, 2}, {31, 0}}));
  }
}

// PrefetchRelease (a release's reads of a handle: it, its inode, the
// inode's handles, a writer's chunks past the end) changes no answer:
// several handles at once (a writer's, a reader's, one of another inode,
// a missing one); the answers then follow this transaction's writes of
// handles and chunks, whether made after the rows came back or before.
TEST_P(EngineContract, PrefetchedReleaseAnswersLikeReads) {
  constexpr uint64_t kChunk = 4u << 20;
  {
    auto txn = BeginWriteTxn(*engine);
    ASSERT_TRUE(txn);
    InodeRow file = SampleInode(71, S_IFREG | 0644);
    file.attr.size = kChunk + 1;  // chunks 0 and 1 hold its bytes
    file.attr.chunk_size = kChunk;
    ASSERT_OK(txn->PutInode(file));
    InodeRow empty = SampleInode(72, S_IFREG | 0644);
    empty.attr.size = 0;
    empty.attr.chunk_size = kChunk;
    ASSERT_OK(txn->PutInode(empty));
    for (uint64_t i = 0; i < 4; ++i)
      ASSERT_OK(txn->PutChunk(ChunkRow{ChunkId(80 + i), InodeId(71), i}));
    ASSERT_OK(txn->PutChunk(ChunkRow{ChunkId(84), InodeId(72), 0}));
    ASSERT_OK(txn->PutReplica(
        ReplicaRow{ChunkId(82), 0, NodeId(2), VolumeId(4), 0, ReplicaState::kHealthy}));
    ASSERT_OK(txn->PutReplica(
        ReplicaRow{ChunkId(82), 1, NodeId(3), VolumeId(5), 0, ReplicaState::kHealthy}));
    ASSERT_OK(txn->PutHandle(HandleRow{HandleId(40), SessionId(3), InodeId(71), O_RDWR}));
    ASSERT_OK(txn->PutHandle(HandleRow{HandleId(41), SessionId(3), InodeId(71), O_RDONLY}));
    ASSERT_OK(txn->PutHandle(HandleRow{HandleId(42), SessionId(3), InodeId(72), O_WRONLY}));
    ASSERT_OK(txn->Commit());
  }
  auto handle_ino = [](WriteTxn& txn, uint64_t id) -> std::optional<uint64_t> {
    auto got = txn.GetHandle(HandleId(id));
    EXPECT_OK(got);
    if (!got.ok() || !*got) return std::nullopt;
    return (*got)->ino.value();
  };
  {  // written after the rows came back
    auto txn = BeginWriteTxn(*engine);
    ASSERT_TRUE(txn);
    for (uint64_t h : {40, 41, 42, 99}) ASSERT_OK(txn->PrefetchRelease(HandleId(h)));
    ASSERT_OK(txn->GetReplay(SessionId(9), 0).status());
    EXPECT_EQ(handle_ino(*txn, 40), 71u);
    EXPECT_EQ(handle_ino(*txn, 99), std::nullopt);
    auto inode = txn->GetInode(InodeId(71));
    ASSERT_OK(inode);
    ASSERT_TRUE(inode->has_value());
    EXPECT_EQ((*inode)->attr.size, kChunk + 1);
    ASSERT_OK(txn->DeleteHandle(HandleId(40)));
    EXPECT_EQ(handle_ino(*txn, 40), std::nullopt);
    EXPECT_EQ(HandleIdsOf(*txn, 71), std::vector<uint64_t>{41});
    EXPECT_EQ(ChunksOf(*txn, 71, 2), (Chunks{{82, 2}, {83, 0}}));
    EXPECT_EQ(ChunksOf(*txn, 71, 3), (Chunks{{83, 0}}));
    EXPECT_EQ(ChunksOf(*txn, 71, 0), (Chunks{{80, 0}, {81, 0}, {82, 2}, {83, 0}}));
    ASSERT_OK(txn->DeleteChunk(ChunkId(83)));
    EXPECT_EQ(ChunksOf(*txn, 71, 2), (Chunks{{82, 2}}));
    EXPECT_EQ(ChunksOf(*txn, 72, 0), (Chunks{{84, 0}}));
    EXPECT_EQ(handle_ino(*txn, 41), 71u);
    ASSERT_OK(txn->PutHandle(HandleRow{HandleId(43), SessionId(3), InodeId(71), O_WRONLY}));
    EXPECT_EQ(HandleIdsOf(*txn, 71), (std::vector<uint64_t>{41, 43}));
    ASSERT_OK(txn->PutHandle(HandleRow{HandleId(41), SessionId(3), InodeId(72), O_RDONLY}));
    EXPECT_EQ(HandleIdsOf(*txn, 71), std::vector<uint64_t>{43});
    EXPECT_EQ(HandleIdsOf(*txn, 72), (std::vector<uint64_t>{41, 42}));
    EXPECT_EQ(handle_ino(*txn, 41), 72u);
    ASSERT_OK(txn->PutReplica(
        ReplicaRow{ChunkId(84), 0, NodeId(2), VolumeId(4), 0, ReplicaState::kHealthy}));
    EXPECT_EQ(ChunksOf(*txn, 72, 0), (Chunks{{84, 1}}));
  }
  {  // written before they came back
    auto txn = BeginWriteTxn(*engine);
    ASSERT_TRUE(txn);
    ASSERT_OK(txn->PrefetchRelease(HandleId(40)));
    ASSERT_OK(txn->DeleteHandle(HandleId(40)));
    ASSERT_OK(txn->PutChunk(ChunkRow{ChunkId(85), InodeId(71), 4}));
    EXPECT_EQ(handle_ino(*txn, 40), std::nullopt);
    EXPECT_EQ(HandleIdsOf(*txn, 71), std::vector<uint64_t>{41});
    EXPECT_EQ(ChunksOf(*txn, 71, 2), (Chunks{{82, 2}, {83, 0}, {85, 0}}));
  }
  {  // a reader's: its chunks are read when asked
    auto txn = BeginWriteTxn(*engine);
    ASSERT_TRUE(txn);
    ASSERT_OK(txn->PrefetchRelease(HandleId(41)));
    EXPECT_EQ(handle_ino(*txn, 41), 71u);
    EXPECT_EQ(ChunksOf(*txn, 71, 1), (Chunks{{81, 0}, {82, 2}, {83, 0}}));
    EXPECT_EQ(HandleIdsOf(*txn, 71), (std::vector<uint64_t>{40, 41}));
  }
}

TEST_P(EngineContract, ScanStopsOnVisitorError) {
  auto txn = BeginWriteTxn(*engine);
  ASSERT_TRUE(txn);
  for (uint64_t ino = 40; ino < 45; ++ino) ASSERT_OK(txn->PutInode(SampleInode(ino, S_IFREG)));
  int seen = 0;
  Status st = txn->ScanInodes([&](const InodeRow&) {
    return ++seen == 2 ? Status(StatusCode::kBusy, "enough") : Status::Ok();
  });
  EXPECT_CODE(st, kBusy);
  EXPECT_EQ(seen, 2);
}

TEST_P(EngineContract, XattrsAreBytes) {
  auto txn = BeginWriteTxn(*engine);
  ASSERT_TRUE(txn);
  const std::string value("\0\x01\xfe", 3);
  ASSERT_OK(txn->PutXattr(InodeId(5), "user.b", value));
  ASSERT_OK(txn->PutXattr(InodeId(5), "user.a", ""));
  ASSERT_OK(txn->PutXattr(InodeId(6), "user.a", "other"));
  auto got = txn->GetXattr(InodeId(5), "user.b");
  ASSERT_OK(got);
  ASSERT_TRUE(got->has_value());
  EXPECT_EQ(**got, value);
  auto empty = txn->GetXattr(InodeId(5), "user.a");
  ASSERT_OK(empty);
  ASSERT_TRUE(empty->has_value());
  EXPECT_EQ(**empty, "");
  auto names = txn->ListXattrNames(InodeId(5));
  ASSERT_OK(names);
  EXPECT_EQ(*names, (std::vector<std::string>{"user.a", "user.b"}));
  ASSERT_OK(txn->DeleteXattr(InodeId(5), "user.a"));
  names = txn->ListXattrNames(InodeId(5));
  ASSERT_OK(names);
  EXPECT_EQ(*names, (std::vector<std::string>{"user.b"}));
  // Deleting the inode takes its extended attributes; one set after, in
  // the same transaction, stays.
  ASSERT_OK(txn->PutInode(SampleInode(5, S_IFREG | 0644)));
  ASSERT_OK(txn->DeleteInode(InodeId(5)));
  names = txn->ListXattrNames(InodeId(5));
  ASSERT_OK(names);
  EXPECT_TRUE(names->empty());
  int left = 0;
  ASSERT_OK(txn->ScanXattrs([&](const XattrRow& row) {
    EXPECT_EQ(row.ino, InodeId(6));
    ++left;
    return Status::Ok();
  }));
  EXPECT_EQ(left, 1);
  ASSERT_OK(txn->PutInode(SampleInode(7, S_IFREG | 0644)));
  ASSERT_OK(txn->PutXattr(InodeId(7), "user.a", "x"));
  ASSERT_OK(txn->DeleteInode(InodeId(7)));
  ASSERT_OK(txn->PutXattr(InodeId(7), "user.c", "y"));
  names = txn->ListXattrNames(InodeId(7));
  ASSERT_OK(names);
  EXPECT_EQ(*names, (std::vector<std::string>{"user.c"}));
}

TEST_P(EngineContract, ChunksCarryTheirReplicasInPosOrder) {
  auto txn = BeginWriteTxn(*engine);
  ASSERT_TRUE(txn);
  for (uint64_t i = 0; i < 4; ++i) {
    ASSERT_OK(txn->PutChunk(ChunkRow{ChunkId(100 + i), InodeId(7), i}));
  }
  ASSERT_OK(txn->PutReplica(
      ReplicaRow{ChunkId(101), 1, NodeId(2), VolumeId(20), 5, ReplicaState::kPending}));
  ASSERT_OK(txn->PutReplica(
      ReplicaRow{ChunkId(101), 0, NodeId(1), VolumeId(10), 6, ReplicaState::kHealthy}));
  auto chunk = txn->GetChunk(ChunkId(101));
  ASSERT_OK(chunk);
  ASSERT_TRUE(chunk->has_value());
  EXPECT_EQ((*chunk)->chunk.ino, InodeId(7));
  EXPECT_EQ((*chunk)->chunk.index, 1u);
  ASSERT_EQ((*chunk)->replicas.size(), 2u);
  EXPECT_EQ((*chunk)->replicas[0].node, NodeId(1));
  EXPECT_EQ((*chunk)->replicas[0].version, 6u);
  EXPECT_EQ((*chunk)->replicas[1].volume, VolumeId(20));
  EXPECT_EQ((*chunk)->replicas[1].state, ReplicaState::kPending);

  auto range = txn->ListChunksOf(InodeId(7), 1, 3);
  ASSERT_OK(range);
  ASSERT_EQ(range->size(), 2u);
  EXPECT_EQ((*range)[0].chunk.id, ChunkId(101));
  EXPECT_EQ((*range)[1].chunk.id, ChunkId(102));
  EXPECT_TRUE((*range)[1].replicas.empty());

  auto page = txn->ScanChunks(ChunkId(101), 2);
  ASSERT_OK(page);
  ASSERT_EQ(page->size(), 2u);
  EXPECT_EQ((*page)[0].chunk.id, ChunkId(102));
  EXPECT_EQ((*page)[1].chunk.id, ChunkId(103));

  ASSERT_OK(txn->DeleteReplica(ChunkId(101), 1));
  ASSERT_OK(txn->DeleteChunk(ChunkId(100)));
  ASSERT_OK(txn->PutReplica(
      ReplicaRow{ChunkId(102), 0, NodeId(3), VolumeId(30), 1, ReplicaState::kHealthy}));
  ASSERT_OK(txn->DeleteChunk(ChunkId(102)));  // its replica rows go with it
  int replicas = 0;
  ASSERT_OK(txn->ScanReplicas([&](const ReplicaRow& r) {
    EXPECT_EQ(r.chunk, ChunkId(101));
    ++replicas;
    return Status::Ok();
  }));
  EXPECT_EQ(replicas, 1);
}

// InsertChunkIfFree adds a chunk row whose id is free and leaves a taken
// one (and its replicas) as it was, in the transaction and after commit.
// An engine may answer true for a taken id without asking (PostgreSQL
// queues the insert): the transaction then fails retryably, and a retry
// of it answers false.
TEST_P(EngineContract, InsertChunkIfFreeNeverReplaces) {
  {
    auto txn = BeginWriteTxn(*engine);
    ASSERT_TRUE(txn);
    ASSERT_OK(txn->PutChunk(ChunkRow{ChunkId(7), InodeId(41), 3, 5, "2+1 4096 5 10 2:4,3:5,4:6"}));
    ASSERT_OK(txn->PutReplica(
        ReplicaRow{ChunkId(7), 0, NodeId(2), VolumeId(4), 1, ReplicaState::kHealthy}));
    ASSERT_OK(txn->Commit());
  }
  {
    auto txn = BeginWriteTxn(*engine);
    ASSERT_TRUE(txn);
    auto taken = txn->InsertChunkIfFree(ChunkRow{ChunkId(7), InodeId(99), 0, 9});
    ASSERT_OK(taken);
    if (*taken) {  // queued: the commit finds the id taken
      ASSERT_OK(txn->PutReplica(
          ReplicaRow{ChunkId(7), 0, NodeId(3), VolumeId(5), 0, ReplicaState::kHealthy}));
      EXPECT_CODE(txn->Commit(), kTryAgain);
    }
  }
  {
    auto txn = BeginWriteTxn(*engine);
    ASSERT_TRUE(txn);
    auto taken = txn->InsertChunkIfFree(ChunkRow{ChunkId(7), InodeId(99), 0, 9});
    ASSERT_OK(taken);
    EXPECT_FALSE(*taken);
    auto added = txn->InsertChunkIfFree(ChunkRow{ChunkId(8), InodeId(99), 0});
    ASSERT_OK(added);
    EXPECT_TRUE(*added);
    auto again = txn->InsertChunkIfFree(ChunkRow{ChunkId(8), InodeId(98), 1});  // added just now
    ASSERT_OK(again);
    EXPECT_FALSE(*again);
    ASSERT_OK(txn->Commit());
  }
  auto txn = BeginReadTxn(*engine);
  ASSERT_TRUE(txn);
  auto seven = txn->GetChunk(ChunkId(7));
  ASSERT_OK(seven);
  ASSERT_TRUE(seven->has_value());
  EXPECT_EQ((*seven)->chunk.ino, InodeId(41));
  EXPECT_EQ((*seven)->chunk.index, 3u);
  EXPECT_EQ((*seven)->chunk.object_version, 5u);  // the object copy's version kept
  EXPECT_EQ((*seven)->chunk.ec, "2+1 4096 5 10 2:4,3:5,4:6");  // and its cells
  EXPECT_EQ((*seven)->replicas.size(), 1u);
  auto listed = txn->ListChunksOf(InodeId(41), 0, 10);
  ASSERT_OK(listed);
  ASSERT_EQ(listed->size(), 1u);
  EXPECT_EQ(listed->front().chunk.object_version, 5u);
  EXPECT_EQ(listed->front().chunk.ec, "2+1 4096 5 10 2:4,3:5,4:6");
  auto eight = txn->GetChunk(ChunkId(8));
  ASSERT_OK(eight);
  ASSERT_TRUE(eight->has_value());
  EXPECT_EQ((*eight)->chunk.ino, InodeId(99));
  EXPECT_EQ((*eight)->chunk.index, 0u);
  EXPECT_EQ((*eight)->chunk.object_version, 0u);
}

TEST_P(EngineContract, GarbageQueue) {
  auto txn = BeginWriteTxn(*engine);
  ASSERT_TRUE(txn);
  for (uint64_t i = 1; i <= 5; ++i) {
    auto id = txn->NextId(Counter::kGarbage);
    ASSERT_OK(id);
    ASSERT_OK(txn->PutGarbage(GarbageRow{*id, ChunkId(200 + i % 2), InodeId(8), i % 2,
                                         NodeId(i <= 3 ? 1 : 2), VolumeId(1), i}));
  }
  auto of_node = txn->ListGarbageOfNode(NodeId(1), 2);
  ASSERT_OK(of_node);
  ASSERT_EQ(of_node->size(), 2u);
  EXPECT_LT((*of_node)[0].id, (*of_node)[1].id);
  auto of_chunk = txn->ListGarbageOfChunk(ChunkId(200));
  ASSERT_OK(of_chunk);
  EXPECT_EQ(of_chunk->size(), 2u);
  auto chunks = txn->ListGarbageChunks(ChunkId(), 10);
  ASSERT_OK(chunks);
  EXPECT_EQ(*chunks, (std::vector<ChunkId>{ChunkId(200), ChunkId(201)}));
  ASSERT_OK(txn->DeleteGarbage((*of_node)[0].id));
  int left = 0;
  ASSERT_OK(txn->ScanGarbage([&](const GarbageRow&) {
    ++left;
    return Status::Ok();
  }));
  EXPECT_EQ(left, 4);
}

TEST_P(EngineContract, SessionsHandlesAndReplays) {
  auto txn = BeginWriteTxn(*engine);
  ASSERT_TRUE(txn);
  ASSERT_OK(txn->PutSession(SessionRecord{SessionId(3), "client", "host", Timespec{10, 20}}));
  ASSERT_OK(txn->PutHandle(HandleRow{HandleId(9), SessionId(3), InodeId(50), 0x241}));
  ASSERT_OK(txn->PutHandle(HandleRow{HandleId(8), SessionId(3), InodeId(51), 0}));
  ReplayRow replay{SessionId(3), 7,           99,          StatusCode::kExists,
                   "it exists",  InodeId(50), HandleId(9), true};
  ASSERT_OK(txn->PutReplay(replay));

  auto session = txn->GetSession(SessionId(3));
  ASSERT_OK(session);
  ASSERT_TRUE(session->has_value());
  EXPECT_EQ((*session)->client_name, "client");
  EXPECT_EQ((*session)->last_renewed.nsec, 20u);
  auto handle = txn->GetHandle(HandleId(9));
  ASSERT_OK(handle);
  ASSERT_TRUE(handle->has_value());
  EXPECT_EQ((*handle)->flags, 0x241u);
  auto of_session = txn->ListHandlesOfSession(SessionId(3));
  ASSERT_OK(of_session);
  ASSERT_EQ(of_session->size(), 2u);
  EXPECT_EQ((*of_session)[0].id, HandleId(8));
  auto of_inode = txn->ListHandlesOf(InodeId(50));
  ASSERT_OK(of_inode);
  EXPECT_EQ(of_inode->size(), 1u);
  auto got = txn->GetReplay(SessionId(3), 7);
  ASSERT_OK(got);
  ASSERT_TRUE(got->has_value());
  EXPECT_EQ((*got)->seq, 99u);
  EXPECT_EQ((*got)->code, StatusCode::kExists);
  EXPECT_EQ((*got)->message, "it exists");
  EXPECT_EQ((*got)->ino, InodeId(50));
  EXPECT_EQ((*got)->handle, HandleId(9));
  EXPECT_TRUE((*got)->flag);

  ASSERT_OK(txn->DeleteReplaysOf(SessionId(3)));
  got = txn->GetReplay(SessionId(3), 7);
  ASSERT_OK(got);
  EXPECT_FALSE(got->has_value());
  ASSERT_OK(txn->DeleteHandle(HandleId(9)));
  ASSERT_OK(txn->DeleteSession(SessionId(3)));
  auto sessions = txn->ListSessions();
  ASSERT_OK(sessions);
  EXPECT_TRUE(sessions->empty());
}

TEST_P(EngineContract, NodesVolumesAndProperties) {
  auto txn = BeginWriteTxn(*engine);
  ASSERT_TRUE(txn);
  ASSERT_OK(txn->PutNode(NodeRow{NodeId(2), NodeAdminState::kDraining, "h", "name", "127.0.0.1:1",
                                 "/run/sock", Timespec{5, 6}}));
  ASSERT_OK(txn->PutVolume(VolumeRecord{VolumeId(4), NodeId(2), "uuid-4", "/v", 100, 50, 3}));
  auto node = txn->GetNode(NodeId(2));
  ASSERT_OK(node);
  ASSERT_TRUE(node->has_value());
  EXPECT_EQ((*node)->admin_state, NodeAdminState::kDraining);
  EXPECT_EQ((*node)->local_socket, "/run/sock");
  auto volume = txn->GetVolume(VolumeId(4));
  ASSERT_OK(volume);
  ASSERT_TRUE(volume->has_value());
  EXPECT_EQ((*volume)->uuid, "uuid-4");
  EXPECT_EQ((*volume)->free_bytes, 50u);
  auto nodes = txn->ListNodes();
  ASSERT_OK(nodes);
  EXPECT_EQ(nodes->size(), 1u);
  auto volumes = txn->ListVolumes();
  ASSERT_OK(volumes);
  EXPECT_EQ(volumes->size(), 1u);

  ASSERT_OK(txn->PutProperty("cluster_id", "abc"));
  ASSERT_OK(txn->PutProperty("cluster_id", "def"));
  auto prop = txn->GetProperty("cluster_id");
  ASSERT_OK(prop);
  ASSERT_TRUE(prop->has_value());
  EXPECT_EQ(**prop, "def");
  auto none = txn->GetProperty("nothing");
  ASSERT_OK(none);
  EXPECT_FALSE(none->has_value());
}

TEST_P(EngineContract, DroppedTransactionAppliesNothing) {
  {
    auto txn = BeginWriteTxn(*engine);
    ASSERT_TRUE(txn);
    ASSERT_OK(txn->PutInode(SampleInode(60, S_IFREG)));
    ASSERT_OK(txn->PutDentry(DentryRow{InodeId(1), "gone", InodeId(60), 1}));
  }
  auto txn = BeginReadTxn(*engine);
  ASSERT_TRUE(txn);
  auto inode = txn->GetInode(InodeId(60));
  ASSERT_OK(inode);
  EXPECT_FALSE(inode->has_value());
  auto dentry = txn->GetDentry(InodeId(1), "gone");
  ASSERT_OK(dentry);
  EXPECT_FALSE(dentry->has_value());
}

TEST_P(EngineContract, CommitTwiceIsAnError) {
  auto txn = BeginWriteTxn(*engine, /*durable=*/true);
  ASSERT_TRUE(txn);
  ASSERT_OK(txn->PutProperty("k", "v"));
  ASSERT_OK(txn->Commit());
  EXPECT_CODE(txn->Commit(), kInternal);
}

TEST_P(EngineContract, CountersNeverRepeatAcrossReopen) {
  uint64_t last_inode = 0;
  {
    auto txn = BeginWriteTxn(*engine);
    ASSERT_TRUE(txn);
    auto a = txn->NextId(Counter::kInode);
    auto b = txn->NextId(Counter::kInode);
    ASSERT_OK(a);
    ASSERT_OK(b);
    EXPECT_NE(*a, 0u);
    EXPECT_GT(*b, *a);
    ASSERT_OK(txn->ReserveId(Counter::kNode, 50));
    ASSERT_OK(txn->ReserveId(Counter::kNode, 20));  // never lowers the counter
    last_inode = *b;
    ASSERT_OK(txn->Commit());
  }
  // The same store again (in memory: the same engine).
  if (home->persistent()) {
    ASSERT_TRUE(Reopen());
  }
  // An id taken in a dropped transaction may be handed out again: nothing
  // of it was applied.
  auto txn = BeginWriteTxn(*engine);
  ASSERT_TRUE(txn);
  auto next = txn->NextId(Counter::kInode);
  ASSERT_OK(next);
  EXPECT_GT(*next, last_inode);
  auto node = txn->NextId(Counter::kNode);
  ASSERT_OK(node);
  EXPECT_GT(*node, 50u);
  auto chunk = txn->NextId(Counter::kChunk);  // counters are independent
  ASSERT_OK(chunk);
  EXPECT_EQ(*chunk, 1u);
  ASSERT_OK(txn->Commit());
}

TEST_P(EngineContract, TotalsCountRows) {
  auto txn = BeginWriteTxn(*engine);
  ASSERT_TRUE(txn);
  InodeRow file = SampleInode(70, S_IFREG | 0644);
  file.attr.size = 1000;
  ASSERT_OK(txn->PutInode(file));
  ASSERT_OK(txn->PutInode(SampleInode(71, S_IFDIR | 0755)));
  ASSERT_OK(txn->PutInode(SampleInode(72, S_IFLNK | 0777)));
  ASSERT_OK(txn->PutChunk(ChunkRow{ChunkId(1), InodeId(70), 0}));
  auto totals = txn->Totals();
  ASSERT_OK(totals);
  EXPECT_EQ(totals->directories, 1u);  // a new engine has no root: the store makes it
  EXPECT_EQ(totals->files, 2u);
  EXPECT_EQ(totals->logical_bytes, 1000u);
  EXPECT_EQ(totals->chunks, 1u);
}

TEST_P(EngineContract, NewStoreHasNoRows) {
  auto txn = BeginReadTxn(*engine);
  ASSERT_TRUE(txn);
  int rows = 0;
  auto count = [&](const auto&) {
    ++rows;
    return Status::Ok();
  };
  ASSERT_OK(txn->ScanInodes(count));
  ASSERT_OK(txn->ScanDentries(count));
  auto cluster = txn->GetProperty("cluster_id");
  ASSERT_OK(cluster);
  EXPECT_FALSE(cluster->has_value());  // the store above makes the root and the cluster id
  EXPECT_EQ(rows, 0);
}

TEST_P(EngineContract, ReopenKeepsCommittedRows) {
  if (!home->persistent()) GTEST_SKIP() << "in memory: nothing outlives the engine";
  {
    auto txn = BeginWriteTxn(*engine, /*durable=*/true);
    ASSERT_TRUE(txn);
    ASSERT_OK(txn->PutInode(SampleInode(80, S_IFDIR | 0755)));
    ASSERT_OK(txn->PutProperty("cluster_id", "c-80"));
    ASSERT_OK(txn->Commit());
  }
  ASSERT_TRUE(Reopen());
  auto txn = BeginReadTxn(*engine);
  ASSERT_TRUE(txn);
  auto got = txn->GetInode(InodeId(80));
  ASSERT_OK(got);
  ASSERT_TRUE(got->has_value());
  ExpectSameInode(**got, SampleInode(80, S_IFDIR | 0755));
  auto cluster = txn->GetProperty("cluster_id");
  ASSERT_OK(cluster);
  ASSERT_TRUE(cluster->has_value());
  EXPECT_EQ(**cluster, "c-80");
}

// Names order by unsigned bytes: "a" < "a\0" < "b" < "\x80" < "\xff".
TEST_P(EngineContract, NamesOrderAsUnsignedBytes) {
  auto txn = BeginWriteTxn(*engine);
  ASSERT_TRUE(txn);
  const std::vector<std::string> sorted = {"a", std::string("a\0", 2), "b", "\x80", "\xff"};
  for (auto it = sorted.rbegin(); it != sorted.rend(); ++it) {
    ASSERT_OK(txn->PutDentry(DentryRow{InodeId(1), *it, InodeId(2), 1}));
    ASSERT_OK(txn->PutXattr(InodeId(3), *it, *it));
  }
  std::vector<std::string> names;
  ASSERT_OK(txn->ScanDentries([&](const DentryRow& d) {
    names.push_back(d.name);
    return Status::Ok();
  }));
  EXPECT_EQ(names, sorted);
  auto xattrs = txn->ListXattrNames(InodeId(3));
  ASSERT_OK(xattrs);
  EXPECT_EQ(*xattrs, sorted);
}

// Scans longer than an engine's page (PostgreSQL reads 1000 rows a
// statement) see every row once, in order.
TEST_P(EngineContract, LargeScansSeeEveryRowInOrder) {
  constexpr uint64_t kRows = 2500;
  {
    auto txn = BeginWriteTxn(*engine);
    ASSERT_TRUE(txn);
    for (uint64_t i = 1; i <= kRows; ++i) {
      ASSERT_OK(txn->PutInode(SampleInode(i, S_IFREG | 0644)));
      ASSERT_OK(
          txn->PutDentry(DentryRow{InodeId(1 + i % 2), fmt::format("f{:05}", i), InodeId(i), i}));
      ASSERT_OK(txn->PutReplica(ReplicaRow{ChunkId(1 + i / 3), static_cast<uint32_t>(i % 3),
                                           NodeId(1), VolumeId(1), i, ReplicaState::kHealthy}));
    }
    ASSERT_OK(txn->Commit());
  }
  auto txn = BeginReadTxn(*engine);
  ASSERT_TRUE(txn);
  uint64_t inodes = 0;
  ASSERT_OK(txn->ScanInodes([&](const InodeRow& row) {
    EXPECT_EQ(row.attr.ino.value(), ++inodes);
    return Status::Ok();
  }));
  EXPECT_EQ(inodes, kRows);
  std::vector<std::pair<uint64_t, std::string>> dentries;
  ASSERT_OK(txn->ScanDentries([&](const DentryRow& d) {
    dentries.emplace_back(d.parent.value(), d.name);
    return Status::Ok();
  }));
  EXPECT_EQ(dentries.size(), kRows);
  EXPECT_TRUE(std::is_sorted(dentries.begin(), dentries.end()));
  std::vector<std::pair<uint64_t, uint32_t>> replicas;
  ASSERT_OK(txn->ScanReplicas([&](const ReplicaRow& r) {
    replicas.emplace_back(r.chunk.value(), r.pos);
    return Status::Ok();
  }));
  EXPECT_EQ(replicas.size(), kRows);
  EXPECT_TRUE(std::is_sorted(replicas.begin(), replicas.end()));
  EXPECT_EQ(std::adjacent_find(replicas.begin(), replicas.end()), replicas.end());
}

// Read-modify-write transactions from several threads, each retried on
// kTryAgain as PosixStore does: no update is lost.
TEST_P(EngineContract, ConcurrentWritersSerialise) {
  constexpr int kThreads = 4;
  constexpr int kIncrements = 25;
  {
    auto txn = BeginWriteTxn(*engine);
    ASSERT_TRUE(txn);
    ASSERT_OK(txn->PutProperty("counter", "0"));
    ASSERT_OK(txn->Commit());
  }
  std::atomic<int> retries{0};
  std::atomic<int> failures{0};
  auto increment = [&]() -> Status {
    ASSIGN_OR_RETURN(auto txn, engine->BeginWrite(WriteOptions{}));
    ASSIGN_OR_RETURN(auto value, txn->GetProperty("counter"));
    const int next = std::stoi(value.value_or("0")) + 1;
    RETURN_IF_ERROR(txn->PutProperty("counter", std::to_string(next)));
    return txn->Commit();
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < kIncrements; ++i) {
        Status st = increment();
        while (st.code() == StatusCode::kTryAgain) {
          ++retries;
          st = increment();
        }
        if (!st.ok()) {
          ADD_FAILURE() << st.ToString();
          ++failures;
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  ASSERT_EQ(failures.load(), 0);
  auto txn = BeginReadTxn(*engine);
  ASSERT_TRUE(txn);
  auto value = txn->GetProperty("counter");
  ASSERT_OK(value);
  ASSERT_TRUE(value->has_value());
  EXPECT_EQ(**value, std::to_string(kThreads * kIncrements)) << retries.load() << " retries";
}

// Ids handed out by several threads at once never repeat, and a reserved id
// is never handed out.
TEST_P(EngineContract, ConcurrentNextIdNeverRepeats) {
  constexpr int kThreads = 4;
  constexpr int kIds = 50;
  std::vector<std::vector<uint64_t>> got(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kIds; ++i) {
        auto txn = engine->BeginWrite(WriteOptions{});
        if (!txn.ok()) {
          ADD_FAILURE() << txn.status().ToString();
          return;
        }
        auto id = (*txn)->NextId(Counter::kInode);
        if (t == 0 && i == kIds / 2) {
          ASSERT_OK((*txn)->ReserveId(Counter::kInode, 100000));
        }
        if (id.ok() && (*txn)->Commit().ok()) got[t].push_back(*id);
      }
    });
  }
  for (auto& t : threads) t.join();
  std::vector<uint64_t> all;
  for (const auto& ids : got) all.insert(all.end(), ids.begin(), ids.end());
  std::sort(all.begin(), all.end());
  EXPECT_EQ(std::adjacent_find(all.begin(), all.end()), all.end());
  EXPECT_EQ(std::count(all.begin(), all.end(), 100000u), 0);
  auto txn = BeginWriteTxn(*engine);
  ASSERT_TRUE(txn);
  auto next = txn->NextId(Counter::kInode);
  ASSERT_OK(next);
  EXPECT_GT(*next, 100000u);
}

}  // namespace
}  // namespace t0fs::meta
