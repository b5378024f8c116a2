// Copying a store between engines: SQLite to SQLite always, SQLite to
// PostgreSQL and back when T0FS_PG_URL is set (tests/pg/engine.sh). Every
// row of every kind arrives unchanged (compared row by row, not only by the
// copy's own verification), counters continue past the source's, a target
// that is not new is refused with nothing written, and a difference made
// after the copy is found by VerifyCopy.
#include "meta/store/copy/engine_copy.h"

#include <sys/stat.h>

#include "meta/store/engine_test/engine_homes.h"

namespace t0fs::meta {
namespace {

using testing::NewEngineHome;

std::unique_ptr<Engine> OpenHome(testing::EngineHome& home) {
  auto engine = home.Open();
  EXPECT_OK(engine);
  return engine.ok() ? std::move(engine).value() : nullptr;
}

// A source of `from_kind` (filled by Populate) and a new target of `to_kind`.
struct CopyPair {
  CopyPair(const std::string& from_kind, const std::string& to_kind)
      : from_home(NewEngineHome(from_kind)), to_home(NewEngineHome(to_kind)) {
    from = OpenHome(*from_home);
    to = OpenHome(*to_home);
  }
  std::unique_ptr<testing::EngineHome> from_home, to_home;
  std::unique_ptr<Engine> from, to;
};

// Writes one inode row into `engine`.
Status PutBareInode(Engine& engine, InodeId ino, uint32_t mode, InodeId parent) {
  ASSIGN_OR_RETURN(auto txn, engine.BeginWrite(WriteOptions{}));
  InodeRow row;
  row.attr.ino = ino;
  row.attr.mode = mode;
  row.parent = parent;
  RETURN_IF_ERROR(txn->PutInode(row));
  return txn->Commit();
}

// One or more rows of every kind, byte strings with NUL and high bytes.
Status Populate(Engine& engine) {
  ASSIGN_OR_RETURN(auto txn, engine.BeginWrite(WriteOptions{}));
  for (uint64_t ino = 1; ino <= 40; ++ino) {
    InodeRow row;
    row.attr.ino = InodeId(ino);
    row.attr.mode = (ino % 4 == 1 ? S_IFDIR : ino % 4 == 2 ? S_IFLNK : S_IFREG) | 0640;
    row.attr.uid = 4000000000u;
    row.attr.size = ino << 33;
    row.attr.nlink = 1;
    row.attr.atime = Timespec{-static_cast<int64_t>(ino), 999999999};
    row.attr.mtime = Timespec{1700000000, static_cast<uint32_t>(ino)};
    row.attr.chunk_size = 1u << 22;
    row.attr.generation = ino * 7;
    row.attr.replicas = 2;
    row.attr.placement = ino % 2 == 0 ? Placement::kSpread : Placement::kLocal;
    if (ino % 3 == 0) row.attr.placement_nodes = {NodeId(1), NodeId(ino)};
    if (ino % 4 == 3) {
      row.attr.protect =
          ino % 8 == 3
              ? Protection{ProtectKind::kReplicas, 3, 0, 300, KeepLocal::kKeep}
              : Protection{ProtectKind::kEc, 4, 2, static_cast<uint32_t>(ino), KeepLocal::kDrop};
    }
    if (S_ISLNK(row.attr.mode)) row.target = std::string("t\0\xff/", 4) + std::to_string(ino);
    row.parent = S_ISDIR(row.attr.mode) ? kRootInode : InodeId();
    row.entry_seq = ino;
    RETURN_IF_ERROR(txn->PutInode(row));
    const std::string name = std::string("n\0", 2) + std::to_string(ino) + "\x80";
    RETURN_IF_ERROR(txn->PutDentry(DentryRow{kRootInode, name, InodeId(ino), ino}));
    RETURN_IF_ERROR(txn->PutXattr(InodeId(ino), "user.x", std::string("\0v", 2)));
    RETURN_IF_ERROR(txn->PutChunk(
        ChunkRow{ChunkId(100 + ino), InodeId(ino), ino % 5, ino % 3 == 1 ? ino * 10 : 0,
                 ino % 4 == 1 ? fmt::format("1+1 4096 {} 8 1:11,2:12", ino) : ""}));
    RETURN_IF_ERROR(txn->PutReplica(
        ReplicaRow{ChunkId(100 + ino), 0, NodeId(1), VolumeId(11), ino,
                   ino % 2 == 0 ? ReplicaState::kPending : ReplicaState::kHealthy}));
  }
  // A replica whose chunk row is missing (a damaged store copies as it is).
  RETURN_IF_ERROR(txn->PutReplica(
      ReplicaRow{ChunkId(999), 1, NodeId(2), VolumeId(21), 3, ReplicaState::kStale}));
  RETURN_IF_ERROR(
      txn->PutGarbage(GarbageRow{77, ChunkId(555), InodeId(9), 2, NodeId(1), VolumeId(11), 4}));
  RETURN_IF_ERROR(
      txn->PutSession(SessionRecord{SessionId(5), "client\xfe", "host", Timespec{10, 20}}));
  RETURN_IF_ERROR(txn->PutHandle(HandleRow{HandleId(66), SessionId(5), InodeId(3), 0x8002}));
  RETURN_IF_ERROR(txn->PutReplay(ReplayRow{SessionId(5), 3, 9, StatusCode::kExists, "exists: n\xff",
                                           InodeId(3), HandleId(66), true}));
  RETURN_IF_ERROR(txn->PutNode(NodeRow{NodeId(1), NodeAdminState::kDraining, "h1", "host1",
                                       "127.0.0.1:7701", "/run/t0fs/1.sock", Timespec{30, 40}}));
  RETURN_IF_ERROR(txn->PutNode(NodeRow{NodeId(2), NodeAdminState::kActive, "h2", "host2",
                                       "127.0.0.1:7702", "", Timespec{31, 41}}));
  RETURN_IF_ERROR(
      txn->PutVolume(VolumeRecord{VolumeId(11), NodeId(1), "uuid-11", "/v/11", 1000, 500, 40}));
  RETURN_IF_ERROR(
      txn->PutVolume(VolumeRecord{VolumeId(21), NodeId(2), "uuid-21", "/v/21", 2000, 100, 1}));
  RETURN_IF_ERROR(txn->PutProperty("cluster_id", "c0ffee"));
  RETURN_IF_ERROR(txn->PutProperty("created", "1796150140.321036039"));
  RETURN_IF_ERROR(txn->PutProperty("capability_key", std::string(32, '\xaa')));
  // Ids handed out beyond the largest row: the target must not reuse them.
  for (int i = 0; i < 60; ++i) RETURN_IF_ERROR(txn->NextId(Counter::kInode).status());
  return txn->Commit();
}

// Every row of `engine`, one line each, kind after kind in engine order.
std::vector<std::string> Dump(Engine& engine) {
  std::vector<std::string> out;
  auto txn = engine.BeginRead();
  EXPECT_OK(txn);
  if (!txn.ok()) return out;
  ReadTxn& t = **txn;
  auto bytes = [](const std::string& s) { return fmt::format("{:?}", s); };
  EXPECT_OK(t.ScanInodes([&](const InodeRow& r) {
    const InodeAttr& a = r.attr;
    std::string nodes;
    for (NodeId n : a.placement_nodes) nodes += fmt::format("{},", n.value());
    const Protection& p = a.protect;
    out.push_back(fmt::format(
        "inode {} {} {} {} {} {} {} {}.{} {}.{} {}.{} {} {} {} {} [{}] {} {} {} protect {} {}+{} "
        "within {} keep {}",
        a.ino.value(), a.mode, a.uid, a.gid, a.size, a.nlink, a.rdev, a.atime.sec, a.atime.nsec,
        a.mtime.sec, a.mtime.nsec, a.ctime.sec, a.ctime.nsec, a.chunk_size, a.generation,
        a.replicas, static_cast<uint32_t>(a.placement), nodes, bytes(r.target), r.parent.value(),
        r.entry_seq, static_cast<uint32_t>(p.kind), p.copies, p.parity, p.within_s,
        static_cast<uint32_t>(p.keep_local)));
    return Status::Ok();
  }));
  EXPECT_OK(t.ScanDentries([&](const DentryRow& r) {
    out.push_back(
        fmt::format("dentry {} {} {} {}", r.parent.value(), bytes(r.name), r.ino.value(), r.seq));
    return Status::Ok();
  }));
  EXPECT_OK(t.ScanXattrs([&](const XattrRow& r) {
    out.push_back(fmt::format("xattr {} {} {}", r.ino.value(), bytes(r.name), bytes(r.value)));
    return Status::Ok();
  }));
  auto chunks = t.ScanChunks(ChunkId(), 100000);
  EXPECT_OK(chunks);
  if (chunks.ok()) {
    for (const auto& c : *chunks) {
      out.push_back(fmt::format("chunk {} {} {} with {}", c.chunk.id.value(), c.chunk.ino.value(),
                                c.chunk.index, c.replicas.size()));
    }
  }
  EXPECT_OK(t.ScanReplicas([&](const ReplicaRow& r) {
    out.push_back(fmt::format("replica {} {} {} {} {} {}", r.chunk.value(), r.pos, r.node.value(),
                              r.volume.value(), r.version, static_cast<uint32_t>(r.state)));
    return Status::Ok();
  }));
  EXPECT_OK(t.ScanGarbage([&](const GarbageRow& r) {
    out.push_back(fmt::format("garbage {} {} {} {} {} {} {}", r.id, r.chunk.value(), r.ino.value(),
                              r.index, r.node.value(), r.volume.value(), r.version));
    return Status::Ok();
  }));
  if (auto sessions = t.ListSessions(); sessions.ok()) {
    for (const auto& s : *sessions) {
      out.push_back(fmt::format("session {} {} {} {}.{}", s.session.value(), bytes(s.client_name),
                                bytes(s.host_id), s.last_renewed.sec, s.last_renewed.nsec));
    }
  }
  EXPECT_OK(t.ScanHandles([&](const HandleRow& r) {
    out.push_back(
        fmt::format("handle {} {} {} {}", r.id.value(), r.session.value(), r.ino.value(), r.flags));
    return Status::Ok();
  }));
  EXPECT_OK(t.ScanReplays([&](const ReplayRow& r) {
    out.push_back(fmt::format("replay {} {} {} {} {} {} {} {}", r.session.value(), r.slot, r.seq,
                              static_cast<uint32_t>(r.code), bytes(r.message), r.ino.value(),
                              r.handle.value(), r.flag));
    return Status::Ok();
  }));
  if (auto nodes = t.ListNodes(); nodes.ok()) {
    for (const auto& n : *nodes) {
      out.push_back(fmt::format("node {} {} {} {} {} {} {}.{}", n.node.value(),
                                static_cast<uint32_t>(n.admin_state), bytes(n.host_id),
                                bytes(n.hostname), bytes(n.address), bytes(n.local_socket),
                                n.last_heartbeat.sec, n.last_heartbeat.nsec));
    }
  }
  if (auto volumes = t.ListVolumes(); volumes.ok()) {
    for (const auto& v : *volumes) {
      out.push_back(fmt::format("volume {} {} {} {} {} {} {}", v.volume.value(), v.node.value(),
                                bytes(v.uuid), bytes(v.path), v.total_bytes, v.free_bytes,
                                v.chunks));
    }
  }
  for (const char* key : kCopiedProperties) {
    auto value = t.GetProperty(key);
    EXPECT_OK(value);
    if (value.ok() && value->has_value())
      out.push_back(fmt::format("property {} {}", key, bytes(**value)));
  }
  return out;
}

void ExpectCountersPast(Engine& engine, uint64_t inode, uint64_t chunk, uint64_t node) {
  auto txn = engine.BeginWrite(WriteOptions{});
  ASSERT_OK(txn);
  auto next_inode = (*txn)->NextId(Counter::kInode);
  auto next_chunk = (*txn)->NextId(Counter::kChunk);
  auto next_node = (*txn)->NextId(Counter::kNode);
  ASSERT_OK(next_inode);
  ASSERT_OK(next_chunk);
  ASSERT_OK(next_node);
  EXPECT_GT(*next_inode, inode);
  EXPECT_GT(*next_chunk, chunk);
  EXPECT_GT(*next_node, node);
}

TEST(EngineCopy, SqliteToSqliteCopiesEveryRow) {
  CopyPair pair("sqlite_file", "sqlite_file");
  Engine* from = pair.from.get();
  Engine* to = pair.to.get();
  ASSERT_TRUE(from && to);
  ASSERT_OK(Populate(*from));
  std::vector<uint64_t> progress;
  CopyOptions options;
  options.progress_every = 50;
  options.progress = [&](uint64_t rows) { progress.push_back(rows); };
  auto report = CopyStore(*from, *to, options);
  ASSERT_OK(report);
  const std::vector<std::string> want = Dump(*from);
  EXPECT_EQ(Dump(*to), want);
  // One row per dump line, but a chunk line stands for a chunk row and
  // replicas are copied on their own.
  EXPECT_EQ(report->rows, want.size());
  ASSERT_FALSE(progress.empty());
  EXPECT_TRUE(std::is_sorted(progress.begin(), progress.end()));
  EXPECT_EQ(progress.back(), report->rows);
  // 60 inode ids handed out (rows only up to 40): nothing at or below 60.
  ExpectCountersPast(*to, 60, 140, 2);
}

TEST(EngineCopy, RefusesATargetThatIsNotNew) {
  CopyPair pair("sqlite_memory", "sqlite_memory");
  Engine* from = pair.from.get();
  Engine* to = pair.to.get();
  ASSERT_TRUE(from && to);
  ASSERT_OK(Populate(*from));
  ASSERT_OK(PutBareInode(*to, InodeId(5), S_IFREG | 0600, InodeId()));
  const std::vector<std::string> before = Dump(*to);
  auto refused = CopyStore(*from, *to);
  EXPECT_CODE(refused, kExists);
  EXPECT_NE(refused.status().message().find("not new"), std::string::npos)
      << refused.status().ToString();
  EXPECT_EQ(Dump(*to), before);
  EXPECT_CODE(CopyStore(*from, *from), kInvalidArgument);
}

TEST(EngineCopy, AFreshRootIsReplacedAndChangesAreFound) {
  CopyPair pair("sqlite_memory", "sqlite_memory");
  Engine* from = pair.from.get();
  Engine* to = pair.to.get();
  ASSERT_TRUE(from && to);
  ASSERT_OK(Populate(*from));
  // What a store opened on an empty database makes: its root.
  ASSERT_OK(PutBareInode(*to, kRootInode, S_IFDIR | 0755, kRootInode));
  ASSERT_OK(CopyStore(*from, *to));
  EXPECT_EQ(Dump(*to), Dump(*from));
  {
    auto txn = to->BeginWrite(WriteOptions{});
    ASSERT_OK(txn);
    ASSERT_OK((*txn)->PutXattr(InodeId(3), "user.x", "changed"));
    ASSERT_OK((*txn)->Commit());
  }
  Status st = VerifyCopy(*from, *to);
  EXPECT_CODE(st, kCorruption);
  EXPECT_NE(st.message().find("xattrs"), std::string::npos) << st.ToString();
  EXPECT_EQ(st.message().find("inodes"), std::string::npos) << st.ToString();
}

// The protection goal is part of what VerifyCopy compares of an inode.
TEST(EngineCopy, AChangedProtectionIsFound) {
  CopyPair pair("sqlite_memory", "sqlite_memory");
  Engine* from = pair.from.get();
  Engine* to = pair.to.get();
  ASSERT_TRUE(from && to);
  ASSERT_OK(Populate(*from));
  ASSERT_OK(CopyStore(*from, *to));
  {
    auto txn = to->BeginWrite(WriteOptions{});
    ASSERT_OK(txn);
    auto row = (*txn)->GetInode(InodeId(3));
    ASSERT_OK(row);
    ASSERT_TRUE(row->has_value());
    InodeRow changed = **row;
    ASSERT_EQ(changed.attr.protect.kind, ProtectKind::kReplicas);
    changed.attr.protect.within_s += 1;
    ASSERT_OK((*txn)->PutInode(changed));
    ASSERT_OK((*txn)->Commit());
  }
  Status st = VerifyCopy(*from, *to);
  EXPECT_CODE(st, kCorruption);
  EXPECT_NE(st.message().find("inodes"), std::string::npos) << st.ToString();
}

TEST(EngineCopy, SqliteToPostgresAndBack) {
  auto pg_home = NewEngineHome("postgres");
  if (pg_home == nullptr) GTEST_SKIP() << "T0FS_PG_URL is not set (tests/pg/engine.sh sets it)";
  CopyPair pair("sqlite_file", "sqlite_file");
  Engine* from = pair.from.get();
  Engine* back = pair.to.get();
  auto pg = OpenHome(*pg_home);
  ASSERT_TRUE(from && pg && back);
  ASSERT_OK(Populate(*from));
  ASSERT_OK(CopyStore(*from, *pg));
  ASSERT_OK(CopyStore(*pg, *back));
  const std::vector<std::string> want = Dump(*from);
  EXPECT_EQ(Dump(*pg), want);
  EXPECT_EQ(Dump(*back), want);
  ExpectCountersPast(*pg, 60, 140, 2);
  ExpectCountersPast(*back, 60, 140, 2);
  pg.reset();  // before its home drops the schema
}

}  // namespace
}  // namespace t0fs::meta
