// The SQLite schema of the metadata store (prose: docs/formats/meta-schema.md).
#pragma once

#include <cstdint>

namespace t0fs::meta {

// Stored in PRAGMA user_version. A store refuses a database whose version it
// does not know; a new version comes with a migration from the previous one.
inline constexpr int64_t kSchemaVersion = 2;

// Creates every table and index of version kSchemaVersion (no rows).
extern const char* const kSchemaSql;
// Migrations: kMigrations[v - 1] turns a version-v database into v + 1.
extern const char* const kMigrations[];

}  // namespace t0fs::meta
