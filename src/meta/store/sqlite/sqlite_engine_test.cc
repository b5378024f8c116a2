// The SQLite engine on its own: every row kind goes in and comes back bit for
// bit (byte strings with NUL included), scans keep the orders engine.h
// promises, a transaction dropped without Commit applies nothing, counters
// never repeat an id (also across a reopen and after ReserveId), and Open
// refuses what is not a t0fs database.
#include "meta/store/sqlite/sqlite_engine.h"

#include <sys/stat.h>

#include "meta/store/sqlite/sqlite_db.h"
#include "meta/store/store_test_util.h"

namespace t0fs::meta {
namespace {

using testing::TempDir;

std::unique_ptr<SqliteEngine> OpenEngineAt(const std::string& path) {
  auto engine = SqliteEngine::Open(path);
  EXPECT_OK(engine);
  return engine.ok() ? std::move(engine).value() : nullptr;
}

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
  EXPECT_EQ(got.target, want.target);
  EXPECT_EQ(got.parent, want.parent);
  EXPECT_EQ(got.entry_seq, want.entry_seq);
}

TEST(SqliteEngine, InodeRowsRoundTrip) {
  auto engine = OpenEngineAt(":memory:");
  ASSERT_TRUE(engine);
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

TEST(SqliteEngine, PutReplacesAndDeleteRemoves) {
  auto engine = OpenEngineAt(":memory:");
  ASSERT_TRUE(engine);
  auto txn = BeginWriteTxn(*engine);
  ASSERT_TRUE(txn);
  InodeRow row = SampleInode(20, S_IFREG | 0644);
  ASSERT_OK(txn->PutInode(row));
  row.attr.size = 5;
  row.attr.placement_nodes.clear();
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

TEST(SqliteEngine, DentriesListBySeqAndScanByName) {
  auto engine = OpenEngineAt(":memory:");
  ASSERT_TRUE(engine);
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

TEST(SqliteEngine, ScanStopsOnVisitorError) {
  auto engine = OpenEngineAt(":memory:");
  ASSERT_TRUE(engine);
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

TEST(SqliteEngine, XattrsAreBytes) {
  auto engine = OpenEngineAt(":memory:");
  ASSERT_TRUE(engine);
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
  ASSERT_OK(txn->DeleteXattrsOf(InodeId(5)));
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
}

TEST(SqliteEngine, ChunksCarryTheirReplicasInPosOrder) {
  auto engine = OpenEngineAt(":memory:");
  ASSERT_TRUE(engine);
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

TEST(SqliteEngine, GarbageQueue) {
  auto engine = OpenEngineAt(":memory:");
  ASSERT_TRUE(engine);
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

TEST(SqliteEngine, SessionsHandlesAndReplays) {
  auto engine = OpenEngineAt(":memory:");
  ASSERT_TRUE(engine);
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

TEST(SqliteEngine, NodesVolumesAndProperties) {
  auto engine = OpenEngineAt(":memory:");
  ASSERT_TRUE(engine);
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

TEST(SqliteEngine, DroppedTransactionAppliesNothing) {
  auto engine = OpenEngineAt(":memory:");
  ASSERT_TRUE(engine);
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

TEST(SqliteEngine, CommitTwiceIsAnError) {
  auto engine = OpenEngineAt(":memory:");
  ASSERT_TRUE(engine);
  auto txn = BeginWriteTxn(*engine, /*durable=*/true);
  ASSERT_TRUE(txn);
  ASSERT_OK(txn->PutProperty("k", "v"));
  ASSERT_OK(txn->Commit());
  EXPECT_CODE(txn->Commit(), kInternal);
  EXPECT_GE(engine->largest_write(), 1u);
}

TEST(SqliteEngine, CountersNeverRepeatAcrossReopen) {
  TempDir dir;
  const std::string path = dir.File("meta.db");
  uint64_t last_inode = 0;
  {
    auto engine = OpenEngineAt(path);
    ASSERT_TRUE(engine);
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
  {
    // An id taken in a dropped transaction may be handed out again: nothing
    // of it was applied.
    auto engine = OpenEngineAt(path);
    ASSERT_TRUE(engine);
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
}

TEST(SqliteEngine, TotalsCountRows) {
  auto engine = OpenEngineAt(":memory:");
  ASSERT_TRUE(engine);
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

TEST(SqliteEngine, OpenRefusesForeignAndNewerDatabases) {
  TempDir dir;
  {
    auto raw = sqlite::Db::Open(dir.File("foreign.db"), std::chrono::milliseconds(1000));
    ASSERT_OK(raw);
    ASSERT_OK(raw->Exec("CREATE TABLE t (x INTEGER)"));
  }
  EXPECT_CODE(SqliteEngine::Open(dir.File("foreign.db")), kMetaSchema);
  {
    auto raw = sqlite::Db::Open(dir.File("newer.db"), std::chrono::milliseconds(1000));
    ASSERT_OK(raw);
    ASSERT_OK(raw->Exec("PRAGMA user_version = 999"));
  }
  EXPECT_CODE(SqliteEngine::Open(dir.File("newer.db")), kMetaSchema);
  SqliteOptions bad;
  bad.sync = "sometimes";
  EXPECT_CODE(SqliteEngine::Open(dir.File("new.db"), bad), kInvalidArgument);
}

}  // namespace
}  // namespace t0fs::meta
