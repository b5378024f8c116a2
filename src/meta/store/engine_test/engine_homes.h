// Where the engine tests keep their stores: one EngineHome per engine and
// form (SQLite in memory, SQLite in a file, PostgreSQL), each a new, empty
// store. The PostgreSQL home needs T0FS_PG_URL (tests/pg/engine.sh starts a
// server and sets it); each home is a schema of its own in that database,
// dropped at the end, so tests never see each other's rows.
#pragma once

#include <fmt/format.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "meta/store/engine.h"
#include "meta/store/engine_test/pg_home.h"
#include "meta/store/pg/pg_engine.h"
#include "meta/store/sqlite/sqlite_engine.h"
#include "meta/store/store_test_util.h"
#include "pg/pg.h"

namespace t0fs::meta::testing {

// The engine kinds every engine test runs against.
inline std::vector<std::string> EngineKinds() {
  return {"sqlite_memory", "sqlite_file", "postgres"};
}

class SqliteHome final : public EngineHome {
 public:
  explicit SqliteHome(bool in_memory) : in_memory_(in_memory) {}
  Result<std::unique_ptr<Engine>> Open() override {
    ASSIGN_OR_RETURN(auto engine,
                     SqliteEngine::Open(in_memory_ ? ":memory:" : dir_.File("meta.db")));
    return std::unique_ptr<Engine>(std::move(engine));
  }
  bool persistent() const override { return !in_memory_; }

 private:
  const bool in_memory_;
  TempDir dir_;
};

// A new home of `kind`; nullptr for postgres without T0FS_PG_URL (the
// caller skips).
inline std::unique_ptr<EngineHome> NewEngineHome(const std::string& kind) {
  if (kind == "sqlite_memory") return std::make_unique<SqliteHome>(true);
  if (kind == "sqlite_file") return std::make_unique<SqliteHome>(false);
  if (kind == "postgres" && !PgTestUrl().empty()) return std::make_unique<PgHome>();
  return nullptr;
}

}  // namespace t0fs::meta::testing
