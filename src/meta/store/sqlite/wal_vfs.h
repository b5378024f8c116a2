// The SQLite VFS of the metadata store ("t0fs-wal"): the default unix VFS,
// except that a transaction's writes to the write-ahead log reach the file
// system in one pwrite instead of two per page.
//
// SQLite writes each log frame as two pwrites (its 24-byte header, then the
// page), so a create — about a dozen pages — cost meta some forty system
// calls, the largest share of its CPU on a two-core machine. Here the
// frames of a transaction are gathered in memory, in order, and written in
// one call when the commit frame's page arrives (its header carries the
// database size, which only a commit frame does): that write's result is
// the commit's, so a full disk fails the COMMIT as before. Before anything
// else touches the log (a read, a sync, its size, a truncation, a write
// elsewhere in it, closing it) the gathered frames are written first, and
// the database file's shared-memory barrier — which SQLite crosses before it
// publishes a commit in the wal-index — writes those of every connection to
// the same log (so no reader, in this process or another, can see a commit
// whose frames are not in the file). Frames of a transaction that never
// commits may stay in memory until then; no one reads them.
//
// Crash behaviour is SQLite's own: a commit is in the file system (the page
// cache, or the disk after a sync) before SQLite makes it visible or
// returns; a crash before that loses an uncommitted transaction only.
#pragma once

namespace t0fs::meta::sqlite {

// Registers the VFS once (thread-safe); its name, for sqlite3_open_v2.
const char* WalVfsName();

}  // namespace t0fs::meta::sqlite
