// libpq wrapper (src/pg) against a real PostgreSQL 15 that tests/pg/pg.sh
// starts: statements and parameters, prepared statements, transactions, and
// which errors are retryable. T0FS_PG_URL names the server (skipped without).
#include <cstdlib>
#include <string>

#include <gtest/gtest.h>

#include "pg/pg.h"

namespace t0fs::pg {
namespace {

std::string Url() {
  const char* url = std::getenv("T0FS_PG_URL");
  return url != nullptr ? url : "";
}

#define REQUIRE_SERVER()                                             \
  if (Url().empty()) GTEST_SKIP() << "T0FS_PG_URL is not set (tests/pg/pg.sh sets it)"

std::unique_ptr<Connection> Connect() {
  auto conn = Connection::Open(Url(), Duration{std::chrono::seconds(5)});
  EXPECT_TRUE(conn.ok()) << conn.status().ToString();
  return conn.ok() ? std::move(*conn) : nullptr;
}

TEST(Pg, ParametersAndTypesRoundTrip) {
  REQUIRE_SERVER();
  auto c = Connect();
  ASSERT_TRUE(c);
  ASSERT_TRUE(c->Exec("DROP TABLE IF EXISTS t_types").ok());
  ASSERT_TRUE(c->Exec("CREATE TABLE t_types (id bigint PRIMARY KEY, name text, blob bytea, flag boolean)").ok());
  const std::string bytes("a\0b\xff", 4);
  auto ins = c->Exec("INSERT INTO t_types VALUES ($1, $2, $3, $4)",
                     {Param(int64_t{1} << 40), Param("it's"), Param::Bytes(bytes), Param(true)});
  ASSERT_TRUE(ins.ok()) << ins.status().ToString();
  EXPECT_EQ(ins->affected(), 1u);
  ASSERT_TRUE(c->Exec("INSERT INTO t_types VALUES ($1, NULL, NULL, false)", {Param(int64_t{1} << 41)}).ok());
  auto rows = c->Exec("SELECT id, name, blob, flag FROM t_types ORDER BY id");
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  ASSERT_EQ(rows->size(), 2);
  EXPECT_EQ(rows->Int(0, 0), int64_t{1} << 40);
  EXPECT_EQ(rows->Text(0, 1), "it's");
  EXPECT_EQ(rows->Bytes(0, 2), bytes);
  EXPECT_TRUE(rows->Bool(0, 3));
  EXPECT_TRUE(rows->IsNull(1, 1));
  EXPECT_FALSE(rows->Bool(1, 3));
}

TEST(Pg, PreparedStatementsAreReused) {
  REQUIRE_SERVER();
  auto c = Connect();
  ASSERT_TRUE(c);
  for (int i = 0; i < 3; ++i) {
    auto r = c->Prepared("add", "SELECT $1::bigint + 1", {Param(int64_t{i})});
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(r->Int(0, 0), i + 1);
  }
}

// A connection's setup runs on it and again on the connection Reset makes
// (the session SETs of the metadata engine); a setup the server refuses
// fails the open with the server's reason, not retryable.
TEST(Pg, SetupRunsOnEveryConnection) {
  REQUIRE_SERVER();
  auto c = Connection::Open(Url(), Duration{std::chrono::seconds(5)},
                            "SET enable_seqscan = off; SET application_name = 't0fs-setup'");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  auto show = [&] {
    auto rows =
        (*c)->Exec("SELECT current_setting('enable_seqscan'), current_setting('application_name')");
    EXPECT_TRUE(rows.ok()) << rows.status().ToString();
    return rows.ok() ? std::string(rows->Text(0, 0)) + " " + std::string(rows->Text(0, 1)) : "";
  };
  EXPECT_EQ(show(), "off t0fs-setup");
  ASSERT_TRUE((*c)->Reset().ok());
  EXPECT_EQ(show(), "off t0fs-setup");
  auto bad =
      Connection::Open(Url(), Duration{std::chrono::seconds(5)}, "SET no_such_setting_here = 1");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().code(), StatusCode::kTryAgain);
  EXPECT_NE(bad.status().message().find("no_such_setting_here"), std::string::npos)
      << bad.status().ToString();
}

TEST(Pg, UniqueViolationIsRetryableOtherErrorsAreNot) {
  REQUIRE_SERVER();
  auto c = Connect();
  ASSERT_TRUE(c);
  ASSERT_TRUE(c->Exec("DROP TABLE IF EXISTS t_unique").ok());
  ASSERT_TRUE(c->Exec("CREATE TABLE t_unique (k text PRIMARY KEY)").ok());
  ASSERT_TRUE(c->Exec("INSERT INTO t_unique VALUES ('x')").ok());
  auto dup = c->Exec("INSERT INTO t_unique VALUES ('x')");
  ASSERT_FALSE(dup.ok());
  EXPECT_TRUE(Retryable(dup.status())) << dup.status().ToString();
  EXPECT_NE(dup.status().message().find("23505"), std::string::npos);
  auto bad = c->Exec("SELECT * FROM no_such_table");
  ASSERT_FALSE(bad.ok());
  EXPECT_FALSE(Retryable(bad.status()));
  EXPECT_EQ(bad.status().code(), StatusCode::kMetaDatabase);
}

TEST(Pg, ConflictingSerializableTransactionsOneIsRetryable) {
  REQUIRE_SERVER();
  auto a = Connect();
  auto b = Connect();
  ASSERT_TRUE(a && b);
  ASSERT_TRUE(a->Exec("DROP TABLE IF EXISTS t_ser").ok());
  ASSERT_TRUE(a->Exec("CREATE TABLE t_ser (k int PRIMARY KEY, v int)").ok());
  ASSERT_TRUE(a->Exec("INSERT INTO t_ser VALUES (1, 0), (2, 0)").ok());
  ASSERT_TRUE(a->Begin(Isolation::kSerializable).ok());
  ASSERT_TRUE(b->Begin(Isolation::kSerializable).ok());
  // Write skew: each reads what the other writes.
  ASSERT_TRUE(a->Exec("SELECT v FROM t_ser WHERE k = 2").ok());
  ASSERT_TRUE(b->Exec("SELECT v FROM t_ser WHERE k = 1").ok());
  ASSERT_TRUE(a->Exec("UPDATE t_ser SET v = 1 WHERE k = 1").ok());
  auto bw = b->Exec("UPDATE t_ser SET v = 1 WHERE k = 2");
  Status ac = a->Commit();
  Status bc = bw.ok() ? b->Commit() : bw.status();
  EXPECT_NE(ac.ok(), bc.ok()) << ac.ToString() << " / " << bc.ToString();
  EXPECT_TRUE(Retryable(ac.ok() ? bc : ac));
  b->Rollback();
  a->Rollback();
}

TEST(Pg, UnreachableServerIsRetryableAndQuick) {
  REQUIRE_SERVER();
  auto conn = Connection::Open("postgresql://t0fs@127.0.0.1:1/t0fs", Duration{std::chrono::seconds(2)});
  ASSERT_FALSE(conn.ok());
  EXPECT_TRUE(Retryable(conn.status())) << conn.status().ToString();
}

// A standby refuses writes (25006): retryable, and the connection counts as
// unhealthy until Reset, so a pool re-opens it (with several hosts and
// target_session_attrs=read-write: on the primary).
TEST(PgStandby, WriteOnAStandbyIsRetryableAndMarksTheConnection) {
  const char* url = std::getenv("T0FS_PG_STANDBY_URL");
  if (url == nullptr) GTEST_SKIP() << "T0FS_PG_STANDBY_URL is not set";
  auto c = Connection::Open(url, Duration{std::chrono::seconds(5)});
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_TRUE((*c)->healthy());
  auto w = (*c)->Exec("CREATE TABLE t_on_standby (x int)");
  ASSERT_FALSE(w.ok());
  EXPECT_TRUE(Retryable(w.status())) << w.status().ToString();
  EXPECT_FALSE((*c)->healthy());
  ASSERT_TRUE((*c)->Reset().ok());
  EXPECT_TRUE((*c)->healthy());
}

TEST(Pg, WrongDatabaseOrRoleIsNotRetryable) {
  REQUIRE_SERVER();
  const std::string url = Url();
  const std::string base = url.substr(0, url.rfind('/'));
  for (const std::string& wrong :
       {base + "/no_such_database", "postgresql://nobody@" + url.substr(url.find('@') + 1),
        url + "?no_such_option=1"}) {
    auto conn = Connection::Open(wrong, Duration{std::chrono::seconds(2)});
    ASSERT_FALSE(conn.ok()) << wrong;
    EXPECT_FALSE(Retryable(conn.status())) << wrong << ": " << conn.status().ToString();
    EXPECT_EQ(conn.status().code(), StatusCode::kMetaDatabase);
  }
}

// After tests/pg/pg.sh killed the primary and promoted the standby: a
// connection string naming both finds the new primary by itself.
TEST(PgFailover, MultiHostUrlReachesTheWritablePrimary) {
  const char* url = std::getenv("T0FS_PG_FAILOVER_URL");
  if (url == nullptr) GTEST_SKIP() << "T0FS_PG_FAILOVER_URL is not set";
  auto c = Connection::Open(url, Duration{std::chrono::seconds(5)});
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  auto w = (*c)->Exec("INSERT INTO t_types VALUES (3, 'after failover', NULL, true)");
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  auto r = (*c)->Exec("SELECT count(*) FROM t_types");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->Int(0, 0), 3);
}

}  // namespace
}  // namespace t0fs::pg
