// The SQLite schema of the metadata store (prose: docs/formats/meta-schema.md).
#pragma once

#include <cstdint>

namespace t0fs::meta::sqlite {

// Stored in PRAGMA user_version. A store refuses a database whose version it
// does not know; a new version comes with a migration from the previous one,
// applied at open (an old database is upgraded in place, in one transaction).
inline constexpr int64_t kSchemaVersion = 3;

// Creates every table and index of version kSchemaVersion (no rows).
extern const char* const kSchemaSql;
// Migrations: kMigrations[v - 1] turns a version-v database into v + 1.
extern const char* const kMigrations[];

}  // namespace t0fs::meta::sqlite
