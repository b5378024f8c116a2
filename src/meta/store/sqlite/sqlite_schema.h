// The SQLite schema of the metadata store (prose: docs/formats/meta-schema.md).
#pragma once

#include <cstdint>
#include <string>

#include "common/status.h"
#include "meta/store/sqlite/sqlite_db.h"

namespace t0fs::meta::sqlite {

// Stored in PRAGMA user_version. A store refuses a database whose version it
// does not know; a new version comes with a migration from the previous one,
// applied at open (an old database is upgraded in place, in one transaction).
inline constexpr int64_t kSchemaVersion = 6;

// Creates every table and index of version kSchemaVersion (no rows).
extern const char* const kSchemaSql;
// Migrations: kMigrations[v - 1] turns a version-v database into v + 1.
extern const char* const kMigrations[];

// Brings the database to kSchemaVersion; call inside a write transaction
// (BEGIN IMMEDIATE), so a crash leaves the old version or the new one. A new
// (empty) database gets the schema and true is returned; an older version is
// migrated in place. kMetaSchema for a database that is not a t0fs store or
// whose version is unknown or newer than this build. `path` is for messages.
Result<bool> PrepareSchema(Db& db, const std::string& path);

}  // namespace t0fs::meta::sqlite
