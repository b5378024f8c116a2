#include "meta/store/sqlite/sqlite_schema.h"

#include <fmt/format.h>

#include "common/logging.h"

namespace t0fs::meta::sqlite {

// Conventions (kept portable to PostgreSQL: there, AUTOINCREMENT becomes
// GENERATED ALWAYS AS IDENTITY and BLOB becomes BYTEA):
//  - AUTOINCREMENT ids are never reused, even after the row with the largest
//    id is deleted: inode numbers, chunk ids and garbage entry ids
//    (acknowledged by data nodes) rely on that. sqlite_sequence holds the
//    largest id ever used per table: the engine's named counters.
//  - Listing cookies are per directory: a dentry's `seq` comes from its
//    directory's `entry_seq` counter, so no global id grows with every entry.
//  - Times are (seconds, nanoseconds) column pairs.
//  - No foreign keys: Check() verifies references, so that corruption can be
//    detected and reported rather than made impossible to load.
const char* const kSchemaSql = R"sql(
CREATE TABLE meta (
  key   TEXT PRIMARY KEY,
  value TEXT NOT NULL
);

CREATE TABLE inodes (
  ino        INTEGER PRIMARY KEY AUTOINCREMENT,
  mode       INTEGER NOT NULL,
  uid        INTEGER NOT NULL,
  gid        INTEGER NOT NULL,
  size       INTEGER NOT NULL,
  nlink      INTEGER NOT NULL,
  rdev       INTEGER NOT NULL,
  atime_s    INTEGER NOT NULL,
  atime_ns   INTEGER NOT NULL,
  mtime_s    INTEGER NOT NULL,
  mtime_ns   INTEGER NOT NULL,
  ctime_s    INTEGER NOT NULL,
  ctime_ns   INTEGER NOT NULL,
  chunk_size INTEGER NOT NULL,
  generation INTEGER NOT NULL,
  target     BLOB,
  replicas   INTEGER NOT NULL DEFAULT 1,
  placement  INTEGER NOT NULL DEFAULT 0,
  placement_nodes TEXT NOT NULL DEFAULT '',
  parent     INTEGER NOT NULL DEFAULT 0,
  entry_seq  INTEGER NOT NULL DEFAULT 0,
  protect    INTEGER NOT NULL DEFAULT 0,
  protect_within INTEGER NOT NULL DEFAULT 0
);

CREATE TABLE dentries (
  parent INTEGER NOT NULL,
  name   BLOB NOT NULL,
  ino    INTEGER NOT NULL,
  seq    INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (parent, name)
) WITHOUT ROWID;
CREATE INDEX dentries_by_parent_seq ON dentries (parent, seq);

CREATE TABLE xattrs (
  ino   INTEGER NOT NULL,
  name  BLOB NOT NULL,
  value BLOB NOT NULL,
  PRIMARY KEY (ino, name)
);

CREATE TABLE chunks (
  id  INTEGER PRIMARY KEY AUTOINCREMENT,
  ino INTEGER NOT NULL,
  idx INTEGER NOT NULL,
  object_version INTEGER NOT NULL DEFAULT 0,
  ec TEXT NOT NULL DEFAULT '',
  UNIQUE (ino, idx)
);

CREATE TABLE replicas (
  chunk_id INTEGER NOT NULL,
  pos      INTEGER NOT NULL,
  node     INTEGER NOT NULL,
  volume   INTEGER NOT NULL,
  version  INTEGER NOT NULL,
  state    INTEGER NOT NULL,
  PRIMARY KEY (chunk_id, pos)
);

CREATE TABLE garbage (
  id       INTEGER PRIMARY KEY AUTOINCREMENT,
  chunk_id INTEGER NOT NULL,
  ino      INTEGER NOT NULL,
  idx      INTEGER NOT NULL,
  node     INTEGER NOT NULL,
  volume   INTEGER NOT NULL,
  version  INTEGER NOT NULL
);
CREATE INDEX garbage_by_node ON garbage (node, id);
CREATE INDEX garbage_by_chunk ON garbage (chunk_id);

CREATE TABLE sessions (
  id          INTEGER PRIMARY KEY AUTOINCREMENT,
  client_name TEXT NOT NULL,
  host_id     TEXT NOT NULL,
  renewed_s   INTEGER NOT NULL,
  renewed_ns  INTEGER NOT NULL
);

CREATE TABLE handles (
  id      INTEGER PRIMARY KEY AUTOINCREMENT,
  session INTEGER NOT NULL,
  ino     INTEGER NOT NULL,
  flags   INTEGER NOT NULL
);
CREATE INDEX handles_by_session ON handles (session);
CREATE INDEX handles_by_ino ON handles (ino);

CREATE TABLE replay (
  session INTEGER NOT NULL,
  slot    INTEGER NOT NULL,
  seq     INTEGER NOT NULL,
  code    INTEGER NOT NULL,
  message TEXT NOT NULL,
  ino     INTEGER NOT NULL,
  handle  INTEGER NOT NULL,
  flag    INTEGER NOT NULL,
  PRIMARY KEY (session, slot)
);

CREATE TABLE nodes (
  id           INTEGER PRIMARY KEY AUTOINCREMENT,
  host_id      TEXT NOT NULL,
  hostname     TEXT NOT NULL,
  address      TEXT NOT NULL,
  local_socket TEXT NOT NULL,
  heartbeat_s  INTEGER NOT NULL,
  heartbeat_ns INTEGER NOT NULL,
  admin_state  INTEGER NOT NULL DEFAULT 0
);

CREATE TABLE volumes (
  id          INTEGER PRIMARY KEY AUTOINCREMENT,
  node        INTEGER NOT NULL,
  uuid        TEXT NOT NULL UNIQUE,
  path        TEXT NOT NULL,
  total_bytes INTEGER NOT NULL,
  free_bytes  INTEGER NOT NULL,
  chunks      INTEGER NOT NULL
);
CREATE INDEX volumes_by_node ON volumes (node);
CREATE INDEX replicas_by_node ON replicas (node);
)sql";

// Version 1 → 2: objectives on inodes (replicas, placement, allowed nodes),
// the administrative state of nodes (draining), replicas by node.
// Version 2 → 3: listing cookies per directory instead of a global dentry id
// (dentries keyed by (parent, name), `seq` from the directory's `entry_seq`;
// an existing entry keeps its old id as its seq, so cookies do not change),
// and a directory's parent on its inode (`parent`: the root and removed
// directories name themselves; 0 for other types). The temporary index keeps
// the parent lookup linear on large databases.
// Version 3 → 4: the protection goal of an objective on inodes (`protect`,
// `protect_within`: rows.h, PackProtection); existing inodes have none.
// Version 4 → 5: the version of a chunk's copy in the object tier
// (`object_version` on chunks); existing chunks have none.
// Version 5 → 6: a chunk's erasure-coded cells (`ec` on chunks, the text of
// ec::FormatStripe); existing chunks have none.
const char* const kMigrations[] = {
    R"sql(
ALTER TABLE inodes ADD COLUMN replicas INTEGER NOT NULL DEFAULT 1;
ALTER TABLE inodes ADD COLUMN placement INTEGER NOT NULL DEFAULT 0;
ALTER TABLE inodes ADD COLUMN placement_nodes TEXT NOT NULL DEFAULT '';
ALTER TABLE nodes ADD COLUMN admin_state INTEGER NOT NULL DEFAULT 0;
CREATE INDEX replicas_by_node ON replicas (node);
)sql",
    R"sql(
ALTER TABLE inodes ADD COLUMN parent INTEGER NOT NULL DEFAULT 0;
ALTER TABLE inodes ADD COLUMN entry_seq INTEGER NOT NULL DEFAULT 0;
CREATE TABLE dentries_v3 (
  parent INTEGER NOT NULL,
  name   BLOB NOT NULL,
  ino    INTEGER NOT NULL,
  seq    INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (parent, name)
) WITHOUT ROWID;
INSERT INTO dentries_v3 (parent, name, ino, seq) SELECT parent, name, ino, id FROM dentries;
DROP TABLE dentries;
ALTER TABLE dentries_v3 RENAME TO dentries;
CREATE INDEX dentries_by_parent_seq ON dentries (parent, seq);
CREATE INDEX dentries_migration_by_ino ON dentries (ino);
UPDATE inodes SET
  parent = COALESCE((SELECT MIN(d.parent) FROM dentries d WHERE d.ino = inodes.ino), ino),
  entry_seq = (SELECT COALESCE(MAX(d.seq), 0) FROM dentries d WHERE d.parent = inodes.ino)
  WHERE (mode & 61440) = 16384;
DROP INDEX dentries_migration_by_ino;
)sql",
    R"sql(
ALTER TABLE inodes ADD COLUMN protect INTEGER NOT NULL DEFAULT 0;
ALTER TABLE inodes ADD COLUMN protect_within INTEGER NOT NULL DEFAULT 0;
)sql",
    R"sql(
ALTER TABLE chunks ADD COLUMN object_version INTEGER NOT NULL DEFAULT 0;
)sql",
    R"sql(
ALTER TABLE chunks ADD COLUMN ec TEXT NOT NULL DEFAULT '';
)sql",
};

Result<bool> PrepareSchema(Db& db, const std::string& path) {
  ASSIGN_OR_RETURN(auto version, db.QueryInt("PRAGMA user_version"));
  const int64_t v = version.value_or(0);
  if (v == 0) {
    ASSIGN_OR_RETURN(auto tables,
                     db.QueryInt("SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND "
                                 "name NOT LIKE 'sqlite\\_%' ESCAPE '\\'"));
    if (tables.value_or(0) > 0) {
      return Status(StatusCode::kMetaSchema,
                    fmt::format("{} is not a t0fs metadata database: it has tables but no t0fs "
                                "schema version",
                                path));
    }
    RETURN_IF_ERROR(db.Exec(kSchemaSql));
  } else if (v > kSchemaVersion) {
    return Status(StatusCode::kMetaSchema,
                  fmt::format("{}: metadata schema version {} is newer than this build supports "
                              "({}); run a newer t0fs",
                              path, v, kSchemaVersion));
  } else if (v < 1) {
    return Status(StatusCode::kMetaSchema,
                  fmt::format("{}: unknown metadata schema version {} (this build knows {})", path,
                              v, kSchemaVersion));
  } else {
    for (int64_t from = v; from < kSchemaVersion; ++from) {
      RETURN_IF_ERROR(db.Exec(kMigrations[from - 1]));
      LOG_INFO("{}: metadata schema migrated from version {} to {}", path, from, from + 1);
    }
  }
  if (v != kSchemaVersion) {
    RETURN_IF_ERROR(db.Exec(fmt::format("PRAGMA user_version = {}", kSchemaVersion)));
  }
  return v == 0;
}

}  // namespace t0fs::meta::sqlite
