// The PostgreSQL engine's schema: its tables, sequences and version, and
// creating or checking it when an engine opens (docs/formats/meta-schema.md
// describes the SQLite layout these tables mirror).
#pragma once

#include "common/status.h"
#include "meta/store/engine.h"
#include "pg/pg.h"

namespace t0fs::meta::pgschema {

// The version this build writes and reads; t0fs_schema holds the store's.
// 1: the first. 2: the sequences of InBlocks counters step by kIdBlock.
// 3: protection goals. 4: chunks.object_version. 5: chunks.ec. 6: dentries'
// listing index partial.
inline constexpr int kSchemaVersion = 6;

// Ids an engine takes from a counter at a time (InBlocks): the sequence's
// INCREMENT BY, so one nextval = v hands out v .. v + kIdBlock - 1.
inline constexpr uint64_t kIdBlock = 1024;

// Creates the schema in an empty database (current schema of the
// connection), checks the version of an existing one and migrates an older
// one to this build's. One transaction under
// an advisory lock: a second server opening at the same time waits, then
// finds the schema made. kMetaSchema for a database with other tables or a
// newer version. `where` names the store in messages.
Status Prepare(pg::Connection& conn, const std::string& where);

// The sequence that is `counter`.
const char* CounterSequence(Counter counter);

// Whether engines take `counter`'s ids in blocks of kIdBlock (inodes,
// chunks, handles, sessions, garbage rows: the counters of every create and
// open). Not nodes and volumes: ReserveId on them happens while other
// servers run (a node registering with its own id) and must bind every
// engine at once, which a block already handed to another engine would not.
bool InBlocks(Counter counter);

}  // namespace t0fs::meta::pgschema
