// The PostgreSQL engine's own behaviour, against the server of T0FS_PG_URL
// (tests/pg/engine.sh; skipped without): Open refuses a foreign or newer
// schema and bad options, servers opening at once create the schema once,
// and a lost connection is kTryAgain, then the engine carries on by itself.
#include "meta/store/pg/pg_engine.h"

#include <sys/stat.h>

#include <thread>

#include "meta/store/engine_test/engine_homes.h"

namespace t0fs::meta {
namespace {

using testing::PgHome;

#define REQUIRE_SERVER()            \
  if (testing::PgTestUrl().empty()) \
  GTEST_SKIP() << "T0FS_PG_URL is not set (tests/pg/engine.sh sets it)"

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
    KillEngineConnections(home);
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
  auto txn = (*engine)->BeginRead();
  ASSERT_OK(txn);
  auto value = (*txn)->GetProperty("k");
  ASSERT_OK(value);
  ASSERT_TRUE(value->has_value());
  EXPECT_EQ(**value, "2");
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
  ASSERT_OK((*txn)->PutChunk(ChunkRow{ChunkId(1), InodeId(5), 0}));
  EXPECT_CODE((*txn)->PutChunk(ChunkRow{ChunkId(2), InodeId(5), 0}), kTryAgain);
  EXPECT_CODE((*txn)->PutProperty("k", "v"), kTryAgain);
  EXPECT_CODE((*txn)->Commit(), kTryAgain);
  txn->reset();
  auto read = (*engine)->BeginRead();
  ASSERT_OK(read);
  auto chunk = (*read)->GetChunk(ChunkId(1));
  ASSERT_OK(chunk);
  EXPECT_FALSE(chunk->has_value());
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
