// The SQLite engine's own behaviour; the contract every engine keeps is in
// engine_test/engine_contract_test.cc. Open refuses what is not a t0fs
// database or is newer than this build, checks its options, and the engine
// records the largest transaction it committed.
#include "meta/store/sqlite/sqlite_engine.h"

#include "meta/store/sqlite/sqlite_db.h"
#include "meta/store/store_test_util.h"

namespace t0fs::meta {
namespace {

using testing::TempDir;

TEST(SqliteEngine, RecordsTheLargestWrite) {
  auto engine = SqliteEngine::Open(":memory:");
  ASSERT_OK(engine);
  auto txn = (*engine)->BeginWrite(WriteOptions{/*durable=*/true});
  ASSERT_OK(txn);
  ASSERT_OK((*txn)->PutProperty("k", "v"));
  ASSERT_OK((*txn)->PutProperty("l", "w"));
  ASSERT_OK((*txn)->Commit());
  EXPECT_EQ((*engine)->largest_write(), 2u);
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
