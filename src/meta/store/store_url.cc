#include "meta/store/store_url.h"

#include <fmt/format.h>

namespace t0fs::meta {
namespace {

constexpr std::string_view kStoreUrlForms =
    "sqlite:///abs/path.db, sqlite://rel/path.db, sqlite::memory: or "
    "postgresql://user@host:port/database";

Status BadStoreUrl(std::string_view url, std::string_view why) {
  return Status(StatusCode::kInvalidArgument,
                fmt::format("metadata store URL '{}': {} (expected {})", url, why, kStoreUrlForms));
}

}  // namespace

Result<StoreLocation> ParseStoreUrl(std::string_view url) {
  if (url == "sqlite::memory:") return StoreLocation{StoreLocation::Engine::kSqlite, ":memory:"};
  const size_t sep = url.find("://");
  if (sep == std::string_view::npos) return BadStoreUrl(url, "no scheme");
  const std::string_view scheme = url.substr(0, sep);
  const std::string_view rest = url.substr(sep + 3);
  if (scheme == "sqlite") {
    if (rest.empty()) return BadStoreUrl(url, "no database path");
    return StoreLocation{StoreLocation::Engine::kSqlite, std::string(rest)};
  }
  if (scheme == "postgresql" || scheme == "postgres") {
    if (rest.empty()) return BadStoreUrl(url, "no server");
    return StoreLocation{StoreLocation::Engine::kPostgres, std::string(url)};
  }
  return BadStoreUrl(url, fmt::format("unknown scheme '{}'", scheme));
}

Result<std::optional<LockFile>> LockStore(const StoreLocation& location) {
  if (location.engine != StoreLocation::Engine::kSqlite || location.path == ":memory:") {
    return std::optional<LockFile>();
  }
  ASSIGN_OR_RETURN(LockFile lock, LockFile::Acquire(location.path + ".lock",
                                                    "metadata database " + location.path));
  return std::optional<LockFile>(std::move(lock));
}

Result<std::string> StoreUrlFromFlags(std::string_view store, std::string_view db) {
  if (!store.empty() && !db.empty()) {
    return Status(
        StatusCode::kInvalidArgument,
        fmt::format("give the metadata store once: --store {} or --db {}, not both", store, db));
  }
  if (!store.empty()) return std::string(store);
  return fmt::format("sqlite://{}", db.empty() ? std::string_view("meta.db") : db);
}

Result<std::unique_ptr<PosixStore>> OpenSqliteStore(const std::string& path,
                                                    const StoreOptions& opts) {
  ASSIGN_OR_RETURN(std::unique_ptr<SqliteEngine> engine, SqliteEngine::Open(path, opts.sqlite));
  return PosixStore::Open(std::move(engine), opts.posix);
}

Result<std::unique_ptr<Engine>> OpenEngine(const StoreLocation& location,
                                           const StoreOptions& opts) {
  switch (location.engine) {
    case StoreLocation::Engine::kSqlite: {
      ASSIGN_OR_RETURN(std::unique_ptr<SqliteEngine> engine,
                       SqliteEngine::Open(location.path, opts.sqlite));
      return std::unique_ptr<Engine>(std::move(engine));
    }
    case StoreLocation::Engine::kPostgres: {
      ASSIGN_OR_RETURN(std::unique_ptr<PgEngine> engine, PgEngine::Open(location.path, opts.pg));
      return std::unique_ptr<Engine>(std::move(engine));
    }
  }
  return Status(StatusCode::kInternal, "unknown metadata store engine");
}

Result<std::unique_ptr<MetaStore>> OpenStore(const StoreLocation& location,
                                             const StoreOptions& opts) {
  ASSIGN_OR_RETURN(std::unique_ptr<Engine> engine, OpenEngine(location, opts));
  ASSIGN_OR_RETURN(std::unique_ptr<PosixStore> store,
                   PosixStore::Open(std::move(engine), opts.posix));
  return std::unique_ptr<MetaStore>(std::move(store));
}

}  // namespace t0fs::meta
