// A PostgreSQL store for tests: a schema of its own in the database named by
// T0FS_PG_URL (tests/pg/engine.sh starts a server and sets it), dropped at
// the end, so tests never see each other's rows. Used by the engine tests
// (engine_homes.h) and the store tests (store_test_util.h).
#pragma once

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <memory>
#include <string>

#include "meta/store/engine.h"
#include "meta/store/pg/pg_engine.h"
#include "pg/pg.h"

namespace t0fs::meta::testing {

inline std::string PgTestUrl() {
  const char* url = std::getenv("T0FS_PG_URL");
  return url != nullptr ? url : "";
}

// Where an engine test keeps its store (engine_homes.h has the others).
class EngineHome {
 public:
  virtual ~EngineHome() = default;
  // An engine on this home's store: the same store at every call, except
  // in memory, where each call makes a new one.
  virtual Result<std::unique_ptr<Engine>> Open() = 0;
  // Whether Open() finds what an earlier engine committed.
  virtual bool persistent() const = 0;
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

}  // namespace t0fs::meta::testing
