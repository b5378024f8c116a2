// Choosing a metadata store by URL (`t0fs meta --store URL`):
//
//   sqlite:///var/lib/t0fs/meta.db   a SQLite database file, absolute path
//   sqlite://meta.db                 a SQLite database file, relative path
//   sqlite::memory:                  a private in-memory store (tests)
//   postgresql://user@host:5432/db   a PostgreSQL database (libpq's URL; also
//                                    postgres://, several hosts and
//                                    ?target_session_attrs=read-write)
//
// A SQLite store belongs to one meta server; a PostgreSQL store may be
// served by several at once. Anything else is refused with one line naming
// the URL and the forms above.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "common/lock_file.h"
#include "common/status.h"
#include "meta/store/meta_store.h"
#include "meta/store/pg/pg_engine.h"
#include "meta/store/posix_store.h"
#include "meta/store/sqlite/sqlite_engine.h"

namespace t0fs::meta {

struct StoreLocation {
  enum class Engine { kSqlite, kPostgres };
  Engine engine = Engine::kSqlite;
  // kSqlite: the database file, or ":memory:". kPostgres: the libpq URL.
  std::string path;
};

// kInvalidArgument (one line) for an unknown scheme, a missing path, or a
// scheme this build does not support yet.
Result<StoreLocation> ParseStoreUrl(std::string_view url);

// The store URL of `t0fs meta` from its flags: --store URL, or the older
// --db PATH meaning sqlite://PATH; neither: sqlite://meta.db. Both given:
// kInvalidArgument.
Result<std::string> StoreUrlFromFlags(std::string_view store, std::string_view db);

// The options of every engine (each uses its own) and of the store above.
struct StoreOptions {
  SqliteOptions sqlite;
  PgOptions pg;
  PosixStoreOptions posix;
};

// Keeps a SQLite store to one process (a meta server, `t0fs meta migrate`)
// while the returned lock lives; fails, naming the lock, when another process
// holds it. Nothing to hold for an in-memory store or a PostgreSQL one
// (shared by design).
Result<std::optional<LockFile>> LockStore(const StoreLocation& location);

// Opens (or creates) the engine at `location` alone (t0fs meta migrate).
Result<std::unique_ptr<Engine>> OpenEngine(const StoreLocation& location,
                                           const StoreOptions& opts = {});

// Opens (or creates) the store at `location`: the POSIX store over the
// location's engine.
Result<std::unique_ptr<MetaStore>> OpenStore(const StoreLocation& location,
                                             const StoreOptions& opts = {});

// The SQLite store at `path` (":memory:": private, in memory).
Result<std::unique_ptr<PosixStore>> OpenSqliteStore(const std::string& path,
                                                    const StoreOptions& opts = {});

}  // namespace t0fs::meta
