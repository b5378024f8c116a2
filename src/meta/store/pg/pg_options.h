// PgOptions: the PostgreSQL engine's settings (pg_engine.h), in a header of
// their own so that the meta server's configuration (meta_config.h) carries
// them as flags and TOML keys (--pg-pool-size, ...) without libpq.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "common/config.h"

namespace t0fs::meta {

struct PgOptions {
  uint32_t pool_size = 4;
  Duration connect_timeout{std::chrono::seconds(5)};
  // "server", or one of PostgreSQL's values (off, local, remote_write, on,
  // remote_apply) set for each ordinary write transaction.
  std::string synchronous_commit = "server";
  // A transaction (a write, or a read that is not long-running) left open
  // this long between two statements is ended by PostgreSQL
  // (idle_in_transaction_session_timeout, its connection closed): a meta
  // server stopped or hung in the middle of an operation would otherwise
  // hold its row locks -- the parent directory's, so every create there
  // through every other server waits -- until it resumes. The stopped
  // server finds its connection gone and retries. 0: never.
  Duration idle_txn_timeout{std::chrono::seconds(5)};

  template <class V>
  void Visit(V& v) {
    v("pg-pool-size", pool_size,
      "connections to PostgreSQL; as many transactions run at once (more: more parallel "
      "metadata operations, more server backends and memory)");
    v("pg-connect-timeout", connect_timeout,
      "how long opening a connection may take before the operation fails and is retried; "
      "shorter notices a dead server sooner, longer rides out a slow failover");
    v("pg-synchronous-commit", synchronous_commit,
      "'server' keeps the server's setting (on: nothing acknowledged is lost); 'off' makes "
      "ordinary commits faster but a server crash or failover loses the last ones (fsync'd "
      "writes stay durable)");
    v("pg-idle-txn-timeout", idle_txn_timeout,
      "a transaction idle this long (its meta server stopped or hung mid-operation) is ended "
      "by PostgreSQL so that its row locks hold up no other server; 0 = never");
  }
};

}  // namespace t0fs::meta
