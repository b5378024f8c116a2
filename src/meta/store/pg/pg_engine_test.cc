// The PostgreSQL engine's own behaviour, against the server of T0FS_PG_URL
// (tests/pg/engine.sh; skipped without): Open refuses a foreign or newer
// schema and bad options, servers opening at once create the schema once,
// and a lost connection is kTryAgain, then the engine carries on by itself.
#include "meta/store/pg/pg_engine.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <future>
#include <limits>
#include <map>
#include <set>
#include <thread>

#include "meta/store/engine_test/engine_homes.h"
#include "meta/store/pg/pg_schema.h"

namespace t0fs::meta {
namespace {

using testing::PgHome;

#define REQUIRE_SERVER()            \
  if (testing::PgTestUrl().empty()) \
  GTEST_SKIP() << "T0FS_PG_URL is not set (tests/pg/engine.sh sets it)"

// The script that takes `home`'s store back to schema `version` (1 or 2:
// both before the protection columns, the object copy's version and the
// partial listing index); it leaves search_path set.
std::string BackToSchema(PgHome& home, int version) {
  return fmt::format(
      "SET search_path TO {0}; DELETE FROM t0fs_schema WHERE version > {1}; "
      "INSERT INTO t0fs_schema (version) VALUES ({1}) ON CONFLICT DO NOTHING; "
      "ALTER TABLE inodes DROP COLUMN protect, DROP COLUMN protect_within; "
      "ALTER TABLE chunks DROP COLUMN object_version, DROP COLUMN ec; "
      "DROP INDEX dentries_by_parent_seq; "
      "CREATE INDEX dentries_by_parent_seq ON dentries (parent, seq);",
      home.schema(), version);
}

// The store's recorded schema is this build's, and so is its listing index.
void ExpectCurrentSchema(PgHome& home) {
  auto version =
      home.admin().Exec(fmt::format("SELECT max(version) FROM {}.t0fs_schema", home.schema()));
  ASSERT_OK(version);
  EXPECT_EQ(version->Int(0, 0), pgschema::kSchemaVersion);
  auto index =
      home.admin().Exec(fmt::format("SELECT indexdef FROM pg_indexes WHERE schemaname = '{}' AND "
                                    "indexname = 'dentries_by_parent_seq'",
                                    home.schema()));
  ASSERT_OK(index);
  ASSERT_EQ(index->size(), 1);
  EXPECT_NE(index->Text(0, 0).find("WHERE (seq > 0)"), std::string::npos) << index->Text(0, 0);
}

void ExpectNoChunk(ReadTxn& txn, ChunkId id) {
  auto chunk = txn.GetChunk(id);
  ASSERT_OK(chunk);
  EXPECT_FALSE(chunk->has_value()) << "chunk " << id.value();
}

TEST(PgEngine, OpenRefusesBadOptions) {
  PgOptions opts;
  opts.pool_size = 0;
  EXPECT_CODE(PgEngine::Open("postgresql://t0fs@127.0.0.1:1/t0fs", opts), kInvalidArgument);
  opts.pool_size = 2;
  opts.synchronous_commit = "sometimes";
  EXPECT_CODE(PgEngine::Open("postgresql://t0fs@127.0.0.1:1/t0fs", opts), kInvalidArgument);
}

TEST(PgEngine, UnreachableServerIsTryAgain) {
  REQUIRE_SERVER();
  PgOptions opts;
  opts.connect_timeout = Duration{std::chrono::seconds(1)};
  EXPECT_CODE(PgEngine::Open("postgresql://t0fs@127.0.0.1:1/t0fs", opts), kTryAgain);
}

TEST(PgEngine, OpenRefusesForeignAndNewerSchemas) {
  REQUIRE_SERVER();
  PgHome foreign;
  ASSERT_OK(foreign.admin().Exec(fmt::format("CREATE TABLE {}.t (x int)", foreign.schema())));
  EXPECT_CODE(foreign.Open(), kMetaSchema);

  PgHome newer;
  ASSERT_OK(newer.Open());
  ASSERT_OK(
      newer.admin().Exec(fmt::format("UPDATE {}.t0fs_schema SET version = 999", newer.schema())));
  auto refused = newer.Open();
  EXPECT_CODE(refused, kMetaSchema);
  EXPECT_NE(refused.status().message().find("newer"), std::string::npos)
      << refused.status().ToString();
}

TEST(PgEngine, ServersOpeningAtOnceCreateTheSchemaOnce) {
  REQUIRE_SERVER();
  PgHome home;
  constexpr int kServers = 4;
  std::vector<Status> results(kServers);
  std::vector<std::thread> threads;
  for (int i = 0; i < kServers; ++i) {
    threads.emplace_back([&, i] { results[i] = home.Open().status(); });
  }
  for (auto& t : threads) t.join();
  for (const Status& st : results) EXPECT_OK(st);
  auto rows = home.admin().Exec(fmt::format("SELECT count(*) FROM {}.t0fs_schema", home.schema()));
  ASSERT_OK(rows);
  EXPECT_EQ(rows->Int(0, 0), 1);
}

// Kills every server backend of this database but the admin connection's.
void KillEngineConnections(PgHome& home) {
  auto killed = home.admin().Exec(
      "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
      "WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client "
      "backend'");
  ASSERT_OK(killed);
  EXPECT_GE(killed->Int(0, 0), 1);
}

// What an emptied store's statistics do to the plans. A table whose rows
// were all removed (a dataset deleted) and then analyzed has pages but no
// live row in pg_class: the planner then costs every scan at one row, until
// the next ANALYZE, while the table grows again. It looked names up with
// the listing index (reading the whole directory per lookup) and joined
// inodes by scanning all of them per entry: each create then read the
// directory, and a benchmark round after such an ANALYZE ran 5x slower.
// Every statement the engine prepared must, in that state, find its rows
// through an index condition, never by reading a table or an index whole
// and filtering.
TEST(PgEngine, PlansFindRowsByIndexWhenTheStatisticsSayEmpty) {
  REQUIRE_SERVER();
  PgHome home;
  home.options.pool_size = 1;  // every statement prepared on one connection
  auto opened = home.Open();
  ASSERT_OK(opened);
  PgEngine& engine = static_cast<PgEngine&>(**opened);
  pg::Connection& admin = home.admin();
  const std::string schema = home.schema();
  // No autovacuum in between: the test sets the statistics itself.
  ASSERT_OK(admin.ExecScript(
      fmt::format("DO $$ DECLARE t text; BEGIN FOR t IN SELECT tablename FROM pg_tables "
                  "WHERE schemaname = '{0}' LOOP EXECUTE format('ALTER TABLE {0}.%I SET "
                  "(autovacuum_enabled = off)', t); END LOOP; END $$",
                  schema)));

  constexpr uint64_t kDir = 10, kFirst = 1000;
  constexpr int kRows = 2000;
  const NodeId node(3);
  const SessionId session(5);
  auto fill = [&](bool put) {
    auto txn = engine.BeginWrite(WriteOptions{});
    ASSERT_OK(txn);
    WriteTxn& t = **txn;
    for (int i = 0; i < kRows; ++i) {
      const uint64_t ino = kFirst + i;
      const std::string name = fmt::format("f{}", i);
      if (put) {
        InodeRow row;
        row.attr.ino = InodeId(ino);
        row.attr.mode = S_IFREG | 0644;
        row.attr.nlink = 1;
        ASSERT_OK(t.PutInode(row));
        ASSERT_OK(t.PutDentry(DentryRow{InodeId(kDir), name, InodeId(ino), uint64_t(i) + 1}));
        ASSERT_OK(t.PutChunk(ChunkRow{ChunkId(ino), InodeId(ino), 0}));
        ASSERT_OK(t.PutReplica(ReplicaRow{ChunkId(ino), 0, node, VolumeId(1), 1}));
        ASSERT_OK(t.PutHandle(HandleRow{HandleId(ino), session, InodeId(ino), O_RDWR}));
        ASSERT_OK(
            t.PutGarbage(GarbageRow{ino, ChunkId(ino), InodeId(ino), 0, node, VolumeId(1), 1}));
      } else {
        ASSERT_OK(t.DeleteInode(InodeId(ino)));
        ASSERT_OK(t.DeleteDentry(InodeId(kDir), name));
        ASSERT_OK(t.DeleteChunk(ChunkId(ino)));
        ASSERT_OK(t.DeleteHandle(HandleId(ino)));
        ASSERT_OK(t.DeleteGarbage(ino));
      }
    }
    ASSERT_OK(t.Commit());
  };
  fill(true);
  fill(false);
  ASSERT_OK(admin.ExecScript(fmt::format(
      "ANALYZE {0}.inodes, {0}.dentries, {0}.chunks, {0}.replicas, {0}.handles, {0}.garbage",
      schema)));
  fill(true);  // the tables full again; the statistics say empty
  auto stats = admin.Exec(fmt::format(
      "SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
      "WHERE n.nspname = '{}' AND c.relname IN ('inodes', 'dentries') AND c.reltuples = 0 "
      "AND c.relpages > 0",
      schema));
  ASSERT_OK(stats);
  ASSERT_EQ(stats->Int(0, 0), 2) << "the statistics are not those of an emptied table";

  // Every kind of read, so that the engine prepares its statements.
  {
    auto txn = engine.BeginWrite(WriteOptions{});
    ASSERT_OK(txn);
    WriteTxn& t = **txn;
    ASSERT_OK(t.PrefetchEntry(InodeId(kDir), "f1"));
    ASSERT_OK(t.PrefetchRemoval(InodeId(kDir), "f1", false));
    ASSERT_OK(t.GetInode(InodeId(kDir)));
    ASSERT_OK(t.GetDentry(InodeId(kDir), "f1"));
    ASSERT_OK(t.ListHandlesOf(InodeId(kFirst + 1)));
    ASSERT_OK(t.ListChunksOf(InodeId(kFirst + 1), 0, std::numeric_limits<uint64_t>::max()));
    ASSERT_OK(t.PrefetchRemoval(InodeId(kDir), "f2", true));
    ASSERT_OK(t.ListHandlesOf(InodeId(kFirst + 2)));
    ASSERT_OK(t.ListDir(InodeId(kFirst + 2), 0, 1, false));
    ASSERT_OK(t.GetDentry(InodeId(kDir), "f3"));
    ASSERT_OK(t.ListDir(InodeId(kDir), 5, 10, true));
    ASSERT_OK(t.ListDir(InodeId(kDir), 5, 10, false));
    ASSERT_OK(t.ListChunksOf(InodeId(kFirst + 4), 0, 1));
    ASSERT_OK(t.GetChunk(ChunkId(kFirst + 4)));
    ASSERT_OK(t.ScanChunks(ChunkId(kFirst + 4), 10));
    ASSERT_OK(t.GetHandle(HandleId(kFirst + 4)));
    ASSERT_OK(t.PrefetchRelease(HandleId(kFirst + 6)));
    ASSERT_OK(t.GetHandle(HandleId(kFirst + 6)));
    ASSERT_OK(t.ListHandlesOfSession(session));
    ASSERT_OK(t.ListGarbageOfNode(node, 10));
    ASSERT_OK(t.ListGarbageOfChunk(ChunkId(kFirst + 4)));
    ASSERT_OK(t.ListGarbageChunks(ChunkId(kFirst + 4), 10));
    ASSERT_OK(t.GetReplay(session, 1));
    ASSERT_OK(t.GetXattr(InodeId(kFirst + 4), "user.x"));
    ASSERT_OK(t.PutDentry(DentryRow{InodeId(kDir), "f1", InodeId(kFirst + 1), 1}));
    ASSERT_OK(t.DeleteReplica(ChunkId(kFirst + 5), 0));
    ASSERT_OK(t.ListXattrNames(InodeId(kFirst + 4)));
    ASSERT_OK(t.PutSession(SessionRecord{session, "client", "host", {}}));
    ASSERT_OK(t.GetSession(session));
    ASSERT_OK(t.ListSessions());
    NodeRow node_row;
    node_row.node = node;
    ASSERT_OK(t.PutNode(node_row));
    ASSERT_OK(t.GetNode(node));
    ASSERT_OK(t.ListNodes());
    VolumeRecord volume;
    volume.volume = VolumeId(1);
    volume.node = node;
    ASSERT_OK(t.PutVolume(volume));
    ASSERT_OK(t.GetVolume(VolumeId(1)));
    ASSERT_OK(t.ListVolumes());
    ASSERT_OK(t.PutProperty("k", "v"));
    ASSERT_OK(t.GetProperty("k"));
    // fsck's scans, page by page.
    auto any = [](const auto&) { return Status::Ok(); };
    ASSERT_OK(t.ScanInodes(any));
    ASSERT_OK(t.ScanDentries(any));
    ASSERT_OK(t.ScanXattrs(any));
    ASSERT_OK(t.ScanReplicas(any));
    ASSERT_OK(t.ScanGarbage(any));
    ASSERT_OK(t.ScanHandles(any));
    ASSERT_OK(t.ScanReplays(any));
    ASSERT_OK(t.DeleteReplaysOf(session));
    ASSERT_OK(t.DeleteSession(session));
  }
  const std::map<std::string, std::string> statements = engine.PreparedStatements();
  // All but `totals`, which counts whole tables as it must.
  EXPECT_GE(statements.size(), 50u);

  // Each one's generic plan (what a prepared statement runs after five
  // executions), explained on the admin connection with the engine's
  // session settings.
  ASSERT_OK(admin.ExecScript(fmt::format(
      "SET search_path TO {}; SET enable_seqscan = off; SET plan_cache_mode = force_generic_plan",
      schema)));
  for (const auto& [name, sql] : statements) {
    int params = 0;
    for (size_t at = sql.find('$'); at != std::string::npos; at = sql.find('$', at + 1)) {
      params = std::max(params, std::atoi(sql.c_str() + at + 1));
    }
    std::string args;
    for (int i = 0; i < params; ++i) args += i == 0 ? "NULL" : ", NULL";
    ASSERT_OK(admin.ExecScript(fmt::format("PREPARE plan_of AS {}", sql))) << name;
    auto plan = admin.Exec(
        fmt::format("EXPLAIN (COSTS OFF) EXECUTE plan_of{}", params > 0 ? "(" + args + ")" : ""));
    ASSERT_OK(admin.ExecScript("DEALLOCATE plan_of"));
    ASSERT_OK(plan) << name;
    std::string text;
    for (int r = 0; r < plan->size(); ++r) text += std::string(plan->Text(r, 0)) + "\n";
    // The plan's nodes, each with its detail lines.
    std::vector<std::string> nodes;
    for (int r = 0; r < plan->size(); ++r) {
      const std::string line(plan->Text(r, 0));
      if (r == 0 || line.find("->") != std::string::npos) {
        nodes.push_back(line);
      } else {
        nodes.back() += "\n" + line;
      }
    }
    const bool whole = sql.find(" WHERE ") == std::string::npos;  // lists a table (nodes, volumes)
    for (const std::string& node_text : nodes) {
      EXPECT_EQ(node_text.find("Seq Scan"), std::string::npos) << name << ":\n" << text;
      if (node_text.find("Index Scan") == std::string::npos &&
          node_text.find("Index Only Scan") == std::string::npos) {
        continue;
      }
      if (!whole) {
        EXPECT_NE(node_text.find("Index Cond:"), std::string::npos)
            << name << " reads an index whole:\n"
            << text;
      }
      EXPECT_EQ(node_text.find("Filter:"), std::string::npos)
          << name << " filters what an index scan read:\n"
          << text;
    }
  }
}

TEST(PgEngine, LostConnectionIsTryAgainThenRecovers) {
  REQUIRE_SERVER();
  PgHome home;
  home.options.pool_size = 1;
  auto engine = home.Open();
  ASSERT_OK(engine);
  {
    auto txn = (*engine)->BeginWrite(WriteOptions{});
    ASSERT_OK(txn);
    ASSERT_OK((*txn)->PutProperty("k", "1"));
    ASSERT_OK((*txn)->GetProperty("k"));  // the transaction is under way on the server
    KillEngineConnections(home);
    ASSERT_OK((*txn)->PutProperty("k", "3"));  // queued: fails at the next read
    EXPECT_CODE((*txn)->GetProperty("k"), kTryAgain);
    EXPECT_CODE((*txn)->Commit(), kTryAgain);  // the transaction stays dead
  }
  // The next transaction gets a fresh connection.
  {
    auto txn = (*engine)->BeginWrite(WriteOptions{/*durable=*/true});
    ASSERT_OK(txn);
    ASSERT_OK((*txn)->PutProperty("k", "2"));
    ASSERT_OK((*txn)->Commit());
  }
  // A connection lost while idle in the pool is replaced at begin.
  KillEngineConnections(home);
  {
    auto txn = (*engine)->BeginRead();
    ASSERT_OK(txn);
    auto value = (*txn)->GetProperty("k");
    ASSERT_OK(value);
    ASSERT_TRUE(value->has_value());
    EXPECT_EQ(**value, "2");
  }
  // Lost idle, and not noticed before the first batch (the kill lands after
  // the begin): that batch is sent again on a fresh connection.
  auto txn = (*engine)->BeginWrite(WriteOptions{});
  ASSERT_OK(txn);
  KillEngineConnections(home);
  ASSERT_OK((*txn)->PutProperty("k", "4"));
  auto value = (*txn)->GetProperty("k");
  ASSERT_OK(value);
  EXPECT_EQ(value->value_or(""), "4");
  ASSERT_OK((*txn)->Commit());
}

// A meta server stopped in the middle of an operation holds its row locks
// until it resumes -- unless PostgreSQL ends its idle transaction: another
// server's write of the same row then goes through, and the stopped one,
// resumed, finds its transaction gone (kTryAgain) and carries on.
TEST(PgEngine, AWriteTransactionLeftIdleReleasesItsLocks) {
  REQUIRE_SERVER();
  PgHome home;
  home.options.idle_txn_timeout.value = std::chrono::milliseconds(300);
  auto stopped = home.Open();
  ASSERT_OK(stopped);
  auto other = home.Open();
  ASSERT_OK(other);
  {
    auto txn = (*other)->BeginWrite(WriteOptions{});
    ASSERT_OK(txn);
    ASSERT_OK((*txn)->PutProperty("k", "0"));
    ASSERT_OK((*txn)->Commit());
  }
  auto held = (*stopped)->BeginWrite(WriteOptions{});
  ASSERT_OK(held);
  ASSERT_OK((*held)->PutProperty("k", "1"));
  ASSERT_OK((*held)->GetProperty("k"));  // the row is locked on the server now
  // The other server's write waits for the lock; it must not wait for ever
  // (30 s: a hang detector, not a measure).
  auto write = std::async(std::launch::async, [&]() -> Status {
    auto txn = (*other)->BeginWrite(WriteOptions{});
    if (!txn.ok()) return txn.status();
    RETURN_IF_ERROR((*txn)->PutProperty("k", "2"));
    return (*txn)->Commit();
  });
  if (write.wait_for(std::chrono::seconds(30)) != std::future_status::ready) {
    ADD_FAILURE() << "a write waited 30 s for the locks of an idle transaction";
    KillEngineConnections(home);
  }
  EXPECT_OK(write.get());
  EXPECT_CODE((*held)->Commit(), kTryAgain);
  held->reset();
  // The stopped server carries on, on a new connection.
  auto txn = (*stopped)->BeginWrite(WriteOptions{});
  ASSERT_OK(txn);
  auto value = (*txn)->GetProperty("k");
  ASSERT_OK(value);
  EXPECT_EQ(value->value_or(""), "2");
  ASSERT_OK((*txn)->PutProperty("k", "3"));
  ASSERT_OK((*txn)->Commit());
}

// A read left idle past the timeout is ended like a write (the store
// retries it) -- one statement less per read than exempting every read --
// while a long-running one (a copy's source) stays open.
TEST(PgEngine, OnlyALongRunningReadOutlivesTheIdleTimeout) {
  REQUIRE_SERVER();
  PgHome home;
  home.options.idle_txn_timeout.value = std::chrono::milliseconds(300);
  auto engine = home.Open();
  ASSERT_OK(engine);
  for (bool long_running : {false, true}) {
    SCOPED_TRACE(long_running ? "long-running" : "ordinary");
    auto read = (*engine)->BeginRead(ReadOptions{long_running});
    ASSERT_OK(read);
    ASSERT_OK((*read)->GetProperty("k"));  // begun on the server
    std::this_thread::sleep_for(std::chrono::milliseconds(1200));
    auto again = (*read)->GetProperty("k");
    if (long_running) {
      EXPECT_OK(again);
    } else {
      EXPECT_CODE(again, kTryAgain);
    }
  }
  // The ended one's connection is replaced: the next read works.
  auto read = (*engine)->BeginRead();
  ASSERT_OK(read);
  EXPECT_OK((*read)->GetProperty("k"));
}

// A read transaction ends without a waited round trip (its ROLLBACK is read
// at the connection's next use); the next user of the connection starts
// clean, whatever the last one left: reads, a failed write, no commit.
TEST(PgEngine, PooledConnectionsStartClean) {
  REQUIRE_SERVER();
  PgHome home;
  home.options.pool_size = 1;
  auto engine = home.Open();
  ASSERT_OK(engine);
  for (int round = 0; round < 3; ++round) {
    {
      auto read = (*engine)->BeginRead();
      ASSERT_OK(read);
      ASSERT_OK((*read)->GetProperty("k"));
    }
    {
      auto write = (*engine)->BeginWrite(WriteOptions{});
      ASSERT_OK(write);
      ASSERT_OK((*write)->PutProperty("k", fmt::format("dropped {}", round)));  // never committed
    }
    {
      auto write = (*engine)->BeginWrite(WriteOptions{});
      ASSERT_OK(write);
      ASSERT_OK((*write)->PutChunk(ChunkRow{ChunkId(1), InodeId(5), 0}));
      ASSERT_OK((*write)->PutChunk(ChunkRow{ChunkId(2), InodeId(5), 0}));  // fails at the read
      EXPECT_CODE((*write)->GetChunk(ChunkId(1)), kTryAgain);
    }
    auto write = (*engine)->BeginWrite(WriteOptions{});
    ASSERT_OK(write);
    ASSERT_OK((*write)->PutProperty("k", fmt::format("round {}", round)));
    ASSERT_OK((*write)->Commit());
  }
  auto read = (*engine)->BeginRead();
  ASSERT_OK(read);
  auto value = (*read)->GetProperty("k");
  ASSERT_OK(value);
  EXPECT_EQ(value->value_or(""), "round 2");
  ExpectNoChunk(**read, ChunkId(1));
}

// More queued writes than one batch holds (PgTxn::kMaxQueued), then a
// failing one far down: every write before it lands in order, the failure
// is the failing write's own status.
TEST(PgEngine, LongRunsOfQueuedWrites) {
  REQUIRE_SERVER();
  PgHome home;
  auto engine = home.Open();
  ASSERT_OK(engine);
  {
    auto txn = (*engine)->BeginWrite(WriteOptions{});
    ASSERT_OK(txn);
    for (int i = 0; i < 300; ++i) ASSERT_OK((*txn)->PutProperty(fmt::format("p{}", i), "x"));
    ASSERT_OK((*txn)->PutProperty("p7", "last"));
    ASSERT_OK((*txn)->Commit());
  }
  auto txn = (*engine)->BeginWrite(WriteOptions{});
  ASSERT_OK(txn);
  auto value = (*txn)->GetProperty("p7");
  ASSERT_OK(value);
  EXPECT_EQ(value->value_or(""), "last");
  ASSERT_OK((*txn)->PutChunk(ChunkRow{ChunkId(1), InodeId(5), 0}));
  Status st;
  for (int i = 0; i < 200 && st.ok(); ++i) st = (*txn)->PutProperty(fmt::format("q{}", i), "y");
  if (st.ok()) st = (*txn)->PutChunk(ChunkRow{ChunkId(2), InodeId(5), 0});
  if (st.ok()) st = (*txn)->Commit();
  EXPECT_CODE(st, kTryAgain);
  EXPECT_NE(st.message().find("put_chunk"), std::string::npos) << st.ToString();
}

// Two engines on one database (two meta servers) hand out ids from blocks:
// interleaved, no id twice, each engine's ids ascending.
TEST(PgEngine, IdBlocksOfTwoEnginesNeverOverlap) {
  REQUIRE_SERVER();
  PgHome home;
  auto a = home.Open();
  auto b = home.Open();
  ASSERT_OK(a);
  ASSERT_OK(b);
  for (Counter counter : {Counter::kInode, Counter::kChunk, Counter::kHandle, Counter::kSession,
                          Counter::kGarbage, Counter::kNode}) {
    std::set<uint64_t> seen;
    std::map<Engine*, uint64_t> last;
    for (int i = 0; i < 3000; ++i) {
      // Mostly alternating, with runs on one engine that cross block ends.
      Engine* engine = (i / 7) % 3 == 0 ? a->get() : b->get();
      auto txn = engine->BeginWrite(WriteOptions{});
      ASSERT_OK(txn);
      auto id = (*txn)->NextId(counter);
      ASSERT_OK(id);
      if (i % 5 != 0) {
        ASSERT_OK((*txn)->Commit());  // ids of rolled-back transactions are never reused either
      }
      EXPECT_NE(*id, 0u);
      EXPECT_TRUE(seen.insert(*id).second) << "id " << *id << " handed out twice";
      EXPECT_GT(*id, last[engine]) << "ids of one engine descend";
      last[engine] = *id;
    }
  }
}

// A store of schema version 1 (sequences stepping by 1, no protection
// columns) opened by this build becomes the current version and hands out
// ids above every id of before.
TEST(PgEngine, SchemaVersion1IsMigrated) {
  REQUIRE_SERVER();
  PgHome home;
  { ASSERT_OK(home.Open()); }
  // Back to what version 1 made, with ids handed out up to 500.
  std::string v1 = BackToSchema(home, 1);
  for (const char* seq : {"inode_ids", "chunk_ids", "garbage_ids", "session_ids", "handle_ids"}) {
    v1 += fmt::format("ALTER SEQUENCE {} INCREMENT BY 1; SELECT setval('{}', 500);", seq, seq);
  }
  ASSERT_OK(home.admin().ExecScript(v1));
  ASSERT_OK(home.admin().Exec("RESET search_path"));

  auto engine = home.Open();
  ASSERT_OK(engine);
  ExpectCurrentSchema(home);
  auto step = home.admin().Exec(fmt::format(
      "SELECT increment_by FROM pg_sequences WHERE schemaname = '{}' AND sequencename = "
      "'inode_ids'",
      home.schema()));
  ASSERT_OK(step);
  EXPECT_EQ(step->Int(0, 0), static_cast<int64_t>(pgschema::kIdBlock));
  auto columns =
      home.admin().Exec(fmt::format("SELECT count(*) FROM information_schema.columns WHERE "
                                    "table_schema = '{}' AND table_name = 'inodes' "
                                    "AND column_name IN ('protect', 'protect_within')",
                                    home.schema()));
  ASSERT_OK(columns);
  EXPECT_EQ(columns->Int(0, 0), 2);
  uint64_t previous = 500;
  for (int i = 0; i < 2 * static_cast<int>(pgschema::kIdBlock) + 3; ++i) {
    auto txn = (*engine)->BeginWrite(WriteOptions{});
    ASSERT_OK(txn);
    auto id = (*txn)->NextId(Counter::kInode);
    ASSERT_OK(id);
    ASSERT_GT(*id, previous);
    previous = *id;
    ASSERT_OK((*txn)->Commit());
  }
  // And a second open finds the current version as it is.
  ASSERT_OK(home.Open());
}

// A store of schema version 2 (before the protection goal) opened by this
// build gains the protection columns: its inodes read as having no goal,
// their other fields as they were, and a goal written afterwards persists.
TEST(PgEngine, SchemaVersion2GainsNoProtection) {
  REQUIRE_SERVER();
  PgHome home;
  InodeRow row;
  row.attr.ino = InodeId(7);
  row.attr.mode = S_IFREG | 0644;
  row.attr.size = 12345;
  row.attr.replicas = 2;
  row.attr.placement = Placement::kSpread;
  row.attr.placement_nodes = {NodeId(3)};
  row.attr.protect = Protection{ProtectKind::kEc, 4, 2, 300, KeepLocal::kDrop};
  {
    auto engine = home.Open();
    ASSERT_OK(engine);
    auto txn = (*engine)->BeginWrite(WriteOptions{});
    ASSERT_OK(txn);
    ASSERT_OK((*txn)->PutInode(row));
    ASSERT_OK((*txn)->Commit());
  }
  ASSERT_OK(home.admin().ExecScript(BackToSchema(home, 2)));
  ASSERT_OK(home.admin().Exec("RESET search_path"));

  auto engine = home.Open();
  ASSERT_OK(engine);
  ExpectCurrentSchema(home);
  {
    auto txn = (*engine)->BeginRead();
    ASSERT_OK(txn);
    auto got = (*txn)->GetInode(InodeId(7));
    ASSERT_OK(got);
    ASSERT_TRUE(got->has_value());
    EXPECT_EQ((*got)->attr.protect, Protection{});
    EXPECT_EQ((*got)->attr.size, 12345u);
    EXPECT_EQ((*got)->attr.replicas, 2u);
    EXPECT_EQ((*got)->attr.placement, Placement::kSpread);
    EXPECT_EQ((*got)->attr.placement_nodes, std::vector<NodeId>{NodeId(3)});
  }
  {
    auto txn = (*engine)->BeginWrite(WriteOptions{});
    ASSERT_OK(txn);
    ASSERT_OK((*txn)->PutInode(row));
    ASSERT_OK((*txn)->Commit());
  }
  engine = home.Open();
  ASSERT_OK(engine);
  auto txn = (*engine)->BeginRead();
  ASSERT_OK(txn);
  auto got = (*txn)->GetInode(InodeId(7));
  ASSERT_OK(got);
  ASSERT_TRUE(got->has_value());
  EXPECT_EQ((*got)->attr.protect, row.attr.protect);
}

TEST(PgEngine, FailedStatementKillsTheTransaction) {
  REQUIRE_SERVER();
  PgHome home;
  auto engine = home.Open();
  ASSERT_OK(engine);
  auto txn = (*engine)->BeginWrite(WriteOptions{});
  ASSERT_OK(txn);
  // chunks are unique by (ino, index): a second chunk at the same place is
  // refused (23505, reported as kTryAgain: a racing insert), and nothing of
  // the transaction is applied afterwards.
  // The writes are queued: the failure shows at the next read (or commit),
  // as the failing write's own status.
  ASSERT_OK((*txn)->PutChunk(ChunkRow{ChunkId(1), InodeId(5), 0}));
  ASSERT_OK((*txn)->PutChunk(ChunkRow{ChunkId(2), InodeId(5), 0}));
  ASSERT_OK((*txn)->PutProperty("k", "v"));
  auto read = (*txn)->GetProperty("k");
  EXPECT_CODE(read, kTryAgain);
  EXPECT_NE(read.status().message().find("put_chunk"), std::string::npos)
      << read.status().ToString();
  EXPECT_CODE((*txn)->PutProperty("k", "v"), kTryAgain);
  EXPECT_CODE((*txn)->Commit(), kTryAgain);
  txn->reset();
  auto after = (*engine)->BeginRead();
  ASSERT_OK(after);
  ExpectNoChunk(**after, ChunkId(1));
}

TEST(PgEngine, OrdinaryCommitsMayRelaxSynchronousCommit) {
  REQUIRE_SERVER();
  PgHome home;
  home.options.synchronous_commit = "off";
  auto engine = home.Open();
  ASSERT_OK(engine);
  for (bool durable : {false, true}) {
    auto txn = (*engine)->BeginWrite(WriteOptions{durable});
    ASSERT_OK(txn);
    ASSERT_OK((*txn)->PutProperty("durable", durable ? "yes" : "no"));
    ASSERT_OK((*txn)->Commit());
  }
}

// tests/pg/engine.sh gives a two-host URL (primary, streaming standby,
// target_session_attrs=read-write) and a command that kills the primary and
// promotes the standby. The same engine, without a restart, serves again
// from the new primary, and nothing committed before is lost.
TEST(PgEngineFailover, EngineFollowsAPromotedStandby) {
  const char* url = std::getenv("T0FS_PG_FAILOVER_URL");
  const char* failover = std::getenv("T0FS_PG_FAILOVER_CMD");
  if (url == nullptr || failover == nullptr)
    GTEST_SKIP() << "T0FS_PG_FAILOVER_URL/_CMD are not set";
  PgOptions opts;
  opts.pool_size = 2;
  opts.connect_timeout = Duration{std::chrono::seconds(2)};
  auto engine = PgEngine::Open(url, opts);
  ASSERT_OK(engine);
  {
    auto txn = (*engine)->BeginWrite(WriteOptions{/*durable=*/true});
    ASSERT_OK(txn);
    ASSERT_OK((*txn)->PutProperty("before", "1"));
    ASSERT_OK((*txn)->Commit());
  }
  // Asynchronous replication: wait until the standby has replayed it.
  auto watch = pg::Connection::Open(url, Duration{std::chrono::seconds(5)});
  ASSERT_OK(watch);
  bool replayed = false;
  for (int i = 0; i < 300 && !replayed; ++i) {
    auto r = (*watch)->Exec(
        "SELECT count(*) FROM pg_stat_replication WHERE replay_lsn >= pg_current_wal_lsn()");
    ASSERT_OK(r);
    replayed = r->Int(0, 0) > 0;
    if (!replayed) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_TRUE(replayed) << "the standby did not catch up";
  watch->reset();
  ASSERT_EQ(std::system(failover), 0) << failover;

  // The store above retries kTryAgain; so does this loop (bounded).
  Status st(StatusCode::kTryAgain, "not tried");
  int attempts = 0;
  for (; attempts < 120 && st.code() == StatusCode::kTryAgain; ++attempts) {
    if (attempts > 0) std::this_thread::sleep_for(std::chrono::milliseconds(250));
    st = [&]() -> Status {
      ASSIGN_OR_RETURN(auto txn, (*engine)->BeginWrite(WriteOptions{}));
      ASSIGN_OR_RETURN(auto before, txn->GetProperty("before"));
      if (before != std::optional<std::string>("1"))
        return Status(StatusCode::kNotFound, "lost 'before'");
      RETURN_IF_ERROR(txn->PutProperty("after", "1"));
      return txn->Commit();
    }();
  }
  EXPECT_OK(st) << "after " << attempts << " attempts";
}

}  // namespace
}  // namespace t0fs::meta
