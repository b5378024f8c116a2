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
#include "meta/store/pg/pg_engine.h"
#include "meta/store/sqlite/sqlite_engine.h"
#include "meta/store/store_test_util.h"
#include "pg/pg.h"

namespace t0fs::meta::testing {

// The engine kinds every engine test runs against.
inline std::vector<std::string> EngineKinds() {
  return {"sqlite_memory", "sqlite_file", "postgres"};
}

inline std::string PgTestUrl() {
  const char* url = std::getenv("T0FS_PG_URL");
  return url != nullptr ? url : "";
}

class EngineHome {
 public:
  virtual ~EngineHome() = default;
  // An engine on this home's store: the same store at every call, except
  // in memory, where each call makes a new one.
  virtual Result<std::unique_ptr<Engine>> Open() = 0;
  // Whether Open() finds what an earlier engine committed.
  virtual bool persistent() const = 0;
};

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

// A schema of its own in the database of T0FS_PG_URL.
class PgHome final : public EngineHome {
 public:
  PgHome() {
    static std::atomic<int> homes{0};
    schema_ = fmt::format("t0fs_test_{}_{}", ::getpid(), homes++);
    auto conn = pg::Connection::Open(PgTestUrl(), Duration{std::chrono::seconds(5)});
    if (!conn.ok()) {
      ADD_FAILURE() << conn.status().ToString();
      return;
    }
    admin_ = std::move(conn).value();
    Status st = admin_->Exec(fmt::format("CREATE SCHEMA {}", schema_)).status();
    if (!st.ok()) ADD_FAILURE() << st.ToString();
    const std::string& base = PgTestUrl();
    url_ = base + (base.find('?') == std::string::npos ? "?" : "&") + "options=-csearch_path%3D" +
           schema_;
  }
  ~PgHome() override {
    if (admin_ != nullptr)
      (void)admin_->Exec(fmt::format("DROP SCHEMA IF EXISTS {} CASCADE", schema_));
  }
  Result<std::unique_ptr<Engine>> Open() override {
    ASSIGN_OR_RETURN(auto engine, PgEngine::Open(url_, options));
    return std::unique_ptr<Engine>(std::move(engine));
  }
  bool persistent() const override { return true; }
  const std::string& url() const { return url_; }
  const std::string& schema() const { return schema_; }
  // A connection outside the engine, for setting up or damaging a store.
  pg::Connection& admin() { return *admin_; }

  PgOptions options;

 private:
  std::string schema_;
  std::string url_;
  std::unique_ptr<pg::Connection> admin_;
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
