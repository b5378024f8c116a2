// The PostgreSQL engine's schema: its tables, sequences and version, and
// creating or checking it when an engine opens (docs/formats/meta-schema.md
// describes the SQLite layout these tables mirror).
#pragma once

#include "common/status.h"
#include "meta/store/engine.h"
#include "pg/pg.h"

namespace t0fs::meta::pgschema {

// The version this build writes and reads; t0fs_schema holds the store's.
inline constexpr int kSchemaVersion = 1;

// Creates the schema in an empty database (current schema of the
// connection), checks the version of an existing one. One transaction under
// an advisory lock: a second server opening at the same time waits, then
// finds the schema made. kMetaSchema for a database with other tables or a
// newer version. `where` names the store in messages.
Status Prepare(pg::Connection& conn, const std::string& where);

// The sequence that is `counter`.
const char* CounterSequence(Counter counter);

}  // namespace t0fs::meta::pgschema
