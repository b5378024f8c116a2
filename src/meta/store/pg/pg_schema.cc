#include "meta/store/pg/pg_schema.h"

#include <fmt/format.h>

#include "common/logging.h"

namespace t0fs::meta::pgschema {
namespace {

// One table per row kind of rows.h, keyed as there. Conventions:
//  - Every integer is bigint; unsigned 64-bit values are stored as their
//    two's complement (ids stay below 2^63, so they order as numbers).
//  - Every byte string is bytea (names, targets, xattrs, and also texts
//    such as a replay message, which may carry a file name that is not
//    UTF-8): bytes come back unchanged, NUL included, and order as memcmp.
//  - Times are (seconds, nanoseconds) column pairs.
//  - No foreign keys: Check() reports damage instead of the database
//    refusing it (as in SQLite).
//  - An index for every scan and order of engine.h.
const char* const kSchemaSql = R"sql(
CREATE TABLE t0fs_schema (
  version integer PRIMARY KEY,
  created timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE properties (
  key   bytea PRIMARY KEY,
  value bytea NOT NULL
);

CREATE TABLE inodes (
  ino        bigint PRIMARY KEY,
  mode       bigint NOT NULL,
  uid        bigint NOT NULL,
  gid        bigint NOT NULL,
  size       bigint NOT NULL,
  nlink      bigint NOT NULL,
  rdev       bigint NOT NULL,
  atime_s    bigint NOT NULL,
  atime_ns   bigint NOT NULL,
  mtime_s    bigint NOT NULL,
  mtime_ns   bigint NOT NULL,
  ctime_s    bigint NOT NULL,
  ctime_ns   bigint NOT NULL,
  chunk_size bigint NOT NULL,
  generation bigint NOT NULL,
  replicas   bigint NOT NULL,
  placement  bigint NOT NULL,
  placement_nodes bigint[] NOT NULL,
  target     bytea NOT NULL,
  parent     bigint NOT NULL,
  entry_seq  bigint NOT NULL,
  protect    bigint NOT NULL DEFAULT 0,
  protect_within bigint NOT NULL DEFAULT 0
);

CREATE TABLE dentries (
  parent bigint NOT NULL,
  name   bytea NOT NULL,
  ino    bigint NOT NULL,
  seq    bigint NOT NULL,
  PRIMARY KEY (parent, name)
);
-- Partial (every entry has seq >= 1): only a directory listing, which says
-- `seq > 0`, can use it, so a lookup by name always takes the primary key
-- (see kMigrateTo6).
CREATE INDEX dentries_by_parent_seq ON dentries (parent, seq) WHERE seq > 0;

CREATE TABLE xattrs (
  ino   bigint NOT NULL,
  name  bytea NOT NULL,
  value bytea NOT NULL,
  PRIMARY KEY (ino, name)
);

CREATE TABLE chunks (
  id  bigint PRIMARY KEY,
  ino bigint NOT NULL,
  idx bigint NOT NULL,
  object_version bigint NOT NULL DEFAULT 0,
  ec text NOT NULL DEFAULT '',
  UNIQUE (ino, idx)
);

CREATE TABLE replicas (
  chunk_id bigint NOT NULL,
  pos      bigint NOT NULL,
  node     bigint NOT NULL,
  volume   bigint NOT NULL,
  version  bigint NOT NULL,
  state    bigint NOT NULL,
  PRIMARY KEY (chunk_id, pos)
);
CREATE INDEX replicas_by_node ON replicas (node);

CREATE TABLE garbage (
  id       bigint PRIMARY KEY,
  chunk_id bigint NOT NULL,
  ino      bigint NOT NULL,
  idx      bigint NOT NULL,
  node     bigint NOT NULL,
  volume   bigint NOT NULL,
  version  bigint NOT NULL
);
CREATE INDEX garbage_by_node ON garbage (node, id);
CREATE INDEX garbage_by_chunk ON garbage (chunk_id, id);

CREATE TABLE sessions (
  id          bigint PRIMARY KEY,
  client_name bytea NOT NULL,
  host_id     bytea NOT NULL,
  renewed_s   bigint NOT NULL,
  renewed_ns  bigint NOT NULL
);

CREATE TABLE handles (
  id      bigint PRIMARY KEY,
  session bigint NOT NULL,
  ino     bigint NOT NULL,
  flags   bigint NOT NULL
);
CREATE INDEX handles_by_session ON handles (session, id);
CREATE INDEX handles_by_ino ON handles (ino, id);

CREATE TABLE replay (
  session bigint NOT NULL,
  slot    bigint NOT NULL,
  seq     bigint NOT NULL,
  code    bigint NOT NULL,
  message bytea NOT NULL,
  ino     bigint NOT NULL,
  handle  bigint NOT NULL,
  flag    boolean NOT NULL,
  PRIMARY KEY (session, slot)
);

CREATE TABLE nodes (
  id           bigint PRIMARY KEY,
  host_id      bytea NOT NULL,
  hostname     bytea NOT NULL,
  address      bytea NOT NULL,
  local_socket bytea NOT NULL,
  heartbeat_s  bigint NOT NULL,
  heartbeat_ns bigint NOT NULL,
  admin_state  bigint NOT NULL
);

CREATE TABLE volumes (
  id          bigint PRIMARY KEY,
  node        bigint NOT NULL,
  uuid        bytea NOT NULL UNIQUE,
  path        bytea NOT NULL,
  total_bytes bigint NOT NULL,
  free_bytes  bigint NOT NULL,
  chunks      bigint NOT NULL
);
CREATE INDEX volumes_by_node ON volumes (node);

CREATE SEQUENCE inode_ids INCREMENT BY 1024;
CREATE SEQUENCE chunk_ids INCREMENT BY 1024;
CREATE SEQUENCE garbage_ids INCREMENT BY 1024;
CREATE SEQUENCE session_ids INCREMENT BY 1024;
CREATE SEQUENCE handle_ids INCREMENT BY 1024;
CREATE SEQUENCE node_ids;
CREATE SEQUENCE volume_ids;
)sql";
static_assert(kIdBlock == 1024, "the sequences above and kMigrateTo2 step by kIdBlock");

// Version 1 to 2: the counters of InBlocks step by kIdBlock. A sequence at
// last_value L (ids up to L handed out) then gives L + kIdBlock, whose block
// lies above every id handed out before.
const char* const kMigrateTo2 = R"sql(
ALTER SEQUENCE inode_ids INCREMENT BY 1024;
ALTER SEQUENCE chunk_ids INCREMENT BY 1024;
ALTER SEQUENCE garbage_ids INCREMENT BY 1024;
ALTER SEQUENCE session_ids INCREMENT BY 1024;
ALTER SEQUENCE handle_ids INCREMENT BY 1024;
INSERT INTO t0fs_schema (version) VALUES (2);
)sql";

// Version 2 to 3: the protection goal of an objective on inodes (`protect`,
// `protect_within`: rows.h, PackProtection); existing inodes have none.
const char* const kMigrateTo3 = R"sql(
ALTER TABLE inodes ADD COLUMN protect bigint NOT NULL DEFAULT 0;
ALTER TABLE inodes ADD COLUMN protect_within bigint NOT NULL DEFAULT 0;
INSERT INTO t0fs_schema (version) VALUES (3);
)sql";

// Version 3 to 4: the version of a chunk's copy in the object tier
// (`object_version` on chunks); existing chunks have none.
const char* const kMigrateTo4 = R"sql(
ALTER TABLE chunks ADD COLUMN object_version bigint NOT NULL DEFAULT 0;
INSERT INTO t0fs_schema (version) VALUES (4);
)sql";

// Version 4 to 5: a chunk's erasure-coded cells (`ec` on chunks, the text
// of ec::FormatStripe); existing chunks have none.
const char* const kMigrateTo5 = R"sql(
ALTER TABLE chunks ADD COLUMN ec text NOT NULL DEFAULT '';
INSERT INTO t0fs_schema (version) VALUES (5);
)sql";

// Version 5 to 6: the listing index of dentries becomes partial. With both
// indexes starting with `parent`, the planner chose between them by cost
// alone; after statistics taken on an emptied table (a dataset deleted, then
// ANALYZE: no live row, many pages) it costed every scan at one row and
// looked names up with (parent, seq), reading the whole directory per
// lookup. A lookup does not say `seq > 0`, so it cannot use this index.
const char* const kMigrateTo6 = R"sql(
DROP INDEX dentries_by_parent_seq;
CREATE INDEX dentries_by_parent_seq ON dentries (parent, seq) WHERE seq > 0;
INSERT INTO t0fs_schema (version) VALUES (6);
)sql";

// pg_advisory_xact_lock key of schema creation ("t0fsschm").
constexpr int64_t kSchemaLock = 0x7430667373636866;

Status PrepareLocked(pg::Connection& conn, const std::string& where) {
  ASSIGN_OR_RETURN(pg::Rows lock,
                   conn.Exec("SELECT pg_advisory_xact_lock($1::bigint)", {pg::Param(kSchemaLock)}));
  ASSIGN_OR_RETURN(
      pg::Rows found,
      conn.Exec("SELECT current_schema(), to_regclass(quote_ident(current_schema()) || "
                "'.t0fs_schema') IS NOT NULL, "
                "(SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
                "WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p', 'v', 'S'))"));
  if (found.IsNull(0, 0)) {
    return Status(
        StatusCode::kMetaSchema,
        fmt::format("{}: no schema to create the tables in (search_path names none that exists)",
                    where));
  }
  if (found.Bool(0, 1)) {
    ASSIGN_OR_RETURN(pg::Rows v, conn.Exec("SELECT max(version) FROM t0fs_schema"));
    const int64_t version = v.Int(0, 0);
    if (version > kSchemaVersion) {
      return Status(StatusCode::kMetaSchema,
                    fmt::format("{}: metadata schema version {} is newer than this build supports "
                                "({}); run a newer t0fs",
                                where, version, kSchemaVersion));
    }
    if (version < 1) {
      return Status(StatusCode::kMetaSchema,
                    fmt::format("{}: unknown metadata schema version {} (this build knows {})",
                                where, version, kSchemaVersion));
    }
    if (version < 2) {
      RETURN_IF_ERROR(conn.ExecScript(kMigrateTo2));
      LOG_INFO("{}: migrated the metadata schema from version {} to {}", where, version, 2);
    }
    if (version < 3) {
      RETURN_IF_ERROR(conn.ExecScript(kMigrateTo3));
      LOG_INFO("{}: migrated the metadata schema from version {} to {}", where,
               std::max<int64_t>(version, 2), 3);
    }
    if (version < 4) {
      RETURN_IF_ERROR(conn.ExecScript(kMigrateTo4));
      LOG_INFO("{}: migrated the metadata schema from version {} to {}", where,
               std::max<int64_t>(version, 3), 4);
    }
    if (version < 5) {
      RETURN_IF_ERROR(conn.ExecScript(kMigrateTo5));
      LOG_INFO("{}: migrated the metadata schema from version {} to {}", where,
               std::max<int64_t>(version, 4), 5);
    }
    if (version < 6) {
      RETURN_IF_ERROR(conn.ExecScript(kMigrateTo6));
      LOG_INFO("{}: migrated the metadata schema from version {} to {}", where,
               std::max<int64_t>(version, 5), 6);
    }
    return Status::Ok();
  }
  if (found.Int(0, 2) > 0) {
    return Status(
        StatusCode::kMetaSchema,
        fmt::format(
            "{} is not a t0fs metadata database: schema {} has {} tables but no t0fs_schema", where,
            found.Text(0, 0), found.Int(0, 2)));
  }
  RETURN_IF_ERROR(conn.ExecScript(kSchemaSql));
  RETURN_IF_ERROR(conn.Exec("INSERT INTO t0fs_schema (version) VALUES ($1::integer)",
                            {pg::Param(kSchemaVersion)})
                      .status());
  LOG_INFO("{}: created the metadata schema (version {}) in schema {}", where, kSchemaVersion,
           found.Text(0, 0));
  return Status::Ok();
}

}  // namespace

Status Prepare(pg::Connection& conn, const std::string& where) {
  RETURN_IF_ERROR(conn.Begin(pg::Isolation::kReadCommitted));
  Status st = PrepareLocked(conn, where);
  if (!st.ok()) {
    conn.Rollback();
    return st;
  }
  st = conn.Commit();
  if (!st.ok()) conn.Rollback();
  return st;
}

const char* CounterSequence(Counter counter) {
  switch (counter) {
    case Counter::kInode:
      return "inode_ids";
    case Counter::kChunk:
      return "chunk_ids";
    case Counter::kGarbage:
      return "garbage_ids";
    case Counter::kSession:
      return "session_ids";
    case Counter::kHandle:
      return "handle_ids";
    case Counter::kNode:
      return "node_ids";
    case Counter::kVolume:
      return "volume_ids";
  }
  return "";
}

bool InBlocks(Counter counter) {
  switch (counter) {
    case Counter::kInode:
    case Counter::kChunk:
    case Counter::kGarbage:
    case Counter::kSession:
    case Counter::kHandle:
      return true;
    case Counter::kNode:
    case Counter::kVolume:
      return false;
  }
  return false;
}

}  // namespace t0fs::meta::pgschema
