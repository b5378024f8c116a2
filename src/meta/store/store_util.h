// Pieces shared by the PosixStore operations (private to the store): checks
// of names, and the row steps several operations take — loading inodes and
// entries, link counts, freeing inodes and chunks, truncation. They work on
// the engine's transactions (engine.h) and know no engine.
#pragma once

#include <fcntl.h>
#include <sys/stat.h>

#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "meta/store/engine.h"
#include "meta/store/meta_store.h"

namespace t0fs::meta::internal {

// Sizes and offsets fit a signed 64-bit integer in every engine.
inline constexpr uint64_t kMaxFileSize = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());

// A name for a new or existing directory entry: not empty, ".", "..", no '/'
// or NUL (kInvalidArgument), at most kMaxNameLength bytes (kNameTooLong).
Status CheckName(std::string_view name);

inline bool IsDir(uint32_t mode) {
  return S_ISDIR(mode);
}
inline bool IsReg(uint32_t mode) {
  return S_ISREG(mode);
}
// An open(2) access mode that writes.
inline bool OpensForWrite(uint32_t flags) {
  return (flags & 3) != 0;
}

// Whether an open with `flags` at `now` moves the file's access time
// (relatime, as Linux mounts by default): an open that reads (not with
// O_NOATIME), when the access time is not after the last change or is a
// day old. The tiering rules count from it (keep-local after=, pressure).
inline constexpr int64_t kAtimeEvery = 24 * 3600;
inline bool AtimeDue(const InodeAttr& attr, uint32_t flags, Timespec now) {
  if ((flags & 3) == 1 || (flags & O_NOATIME) != 0) return false;  // O_WRONLY
  const auto before = [](Timespec a, Timespec b) {
    return a.sec < b.sec || (a.sec == b.sec && a.nsec <= b.nsec);
  };
  return before(attr.atime, attr.mtime) || before(attr.atime, attr.ctime) ||
         now.sec - attr.atime.sec >= kAtimeEvery;
}

// Failures that are not an answer of the operation: the engine's.
inline bool IsEngineError(const Status& st) {
  return st.code() == StatusCode::kMetaDatabase || st.code() == StatusCode::kInternal ||
         st.code() == StatusCode::kTryAgain;
}

// ---- reads ----
// The inode `ino` (kNotFound when missing).
Result<InodeRow> LoadInode(ReadTxn& txn, InodeId ino);
// A live directory: kNotFound if missing or already removed, kNotDirectory.
Result<InodeRow> LoadDir(ReadTxn& txn, InodeId dir);
// LoadDir, then entry `name` of it (GetDentry), read together where the
// engine can (ReadTxn::PrefetchEntry).
struct DirAndEntry {
  InodeRow dir;
  std::optional<DentryRow> entry;
};
Result<DirAndEntry> LoadDirEntry(ReadTxn& txn, InodeId dir, std::string_view name);
// The directory containing `dir` (the root contains itself; a removed
// directory is its own parent).
Result<InodeId> ParentOf(ReadTxn& txn, InodeId dir);
// True when `dir` is `ancestor` or lies below it.
Result<bool> IsWithin(ReadTxn& txn, InodeId dir, InodeId ancestor);
// True when directory `dir` has an entry.
Result<bool> HasEntries(ReadTxn& txn, InodeId dir);
Replica ReplicaOf(const ReplicaRow& row);
ChunkLayout LayoutOf(const ChunkWithReplicas& chunk);
// The layouts of the allocated chunks among `indices` (ascending, distinct).
Result<std::vector<ChunkLayout>> LoadLayouts(ReadTxn& txn, InodeId ino,
                                             const std::vector<uint64_t>& indices);
// The layouts of the allocated chunks with index in [first, end), ascending.
Result<std::vector<ChunkLayout>> LoadLayoutRange(ReadTxn& txn, InodeId ino, uint64_t first, uint64_t end);
// kMetaNoSession when `session` is not open.
Status RequireSession(ReadTxn& txn, SessionId session);
// The same, in a body Mutate runs for `token`: free when the token names
// `session`, which Mutate proved open in this transaction already (it
// checks the session, or finds the token's replay slot, and closing a
// session deletes its slots with it).
Status RequireSession(ReadTxn& txn, SessionId session, const OpToken& token);
// Every target is a registered volume of a registered node.
Status CheckTargets(ReadTxn& txn, const std::vector<ReplicaTarget>& targets);

// ---- writes ----
// Loads inode `ino`, applies `change` and writes it back.
Status UpdateInode(WriteTxn& txn, InodeId ino, const std::function<void(InodeRow&)>& change);
// A new entry (parent, name) → ino, last in the directory's listing order:
// takes the next seq of `parent` (the caller writes `parent` back).
Status AddEntry(WriteTxn& txn, InodeRow& parent, std::string_view name, InodeId ino);
// A new open handle of `session` on `ino` (the caller checked the session).
Result<HandleId> AddHandle(WriteTxn& txn, SessionId session, InodeId ino, uint32_t flags);
// A new chunk of `ino` at `index` with one empty healthy replica per target
// (the caller checked the targets and that the index is free); returns the
// rows written (the chunk's layout without reading it back).
// `wanted`: an id handed out by ReserveChunkIds (the caller checked that),
// used unless a chunk has it already; invalid: a new id.
Result<ChunkWithReplicas> AddChunk(WriteTxn& txn, InodeId ino, uint64_t index,
                                   const std::vector<ReplicaTarget>& targets, ChunkId wanted = {});
// mtime and ctime of a directory whose entries changed.
inline void TouchDir(InodeRow& dir, Timespec now) {
  dir.attr.mtime = now;
  dir.attr.ctime = now;
}
// Drops one link of non-directory `file` as loaded in this transaction
// (ctime = now), freeing it when it was the last link and no handle is open.
Status DropLink(WriteTxn& txn, InodeRow file, Timespec now);
// Marks directory `dir` removed from `parent` (nlink 0, its own parent;
// `parent` loses a link) and frees it unless it is open.
Status RemoveDir(WriteTxn& txn, InodeId dir, InodeId parent, Timespec now);
// Frees `ino` if it has no link and no open handle.
Status FreeIfOrphan(WriteTxn& txn, InodeId ino);
// Deletes inode `attr.ino`, its xattrs and (a regular file's) layout; its
// replicas go to garbage.
Status FreeInode(WriteTxn& txn, const InodeAttr& attr);
// Moves the replicas of `chunks` to the garbage queue (by chunk id, then
// pos) and deletes the chunks.
Status DropChunks(WriteTxn& txn, std::vector<ChunkWithReplicas> chunks);
// Queues the cell files of stripe `old_text` (ec::FormatStripe text) of
// `chunk` as garbage of their nodes, except those `kept_text` records at
// the same node (the same file: a cell is overwritten in place). An
// unreadable stripe text is logged and queues nothing.
Status DropEcCells(WriteTxn& txn, const ChunkRow& chunk, std::string_view old_text,
                   std::string_view kept_text);
// Deletes the garbage rows of chunk file `file` (a chunk or cell id) on
// `node`: a file about to be written there again must not be removed by an
// older removal still queued.
Status WithdrawGarbage(WriteTxn& txn, ChunkId file, NodeId node);
// Moves the chunks of `ino` with index >= first to the garbage queue.
Status DropChunksFrom(WriteTxn& txn, InodeId ino, uint64_t first);
// Drops the chunks wholly past the end of `ino` that no replica ever took a
// write for (allocated ahead by a writer that is gone).
Status DropUnwrittenTail(WriteTxn& txn, InodeId ino);
// Truncation of regular file `file` to `new_size`: drops the chunks the
// truncate does not keep (chunk_math.h; `keep_chunks`: resized by the
// client), sets size, mtime and ctime in `file` (the caller writes it back).
Status Truncate(WriteTxn& txn, InodeRow& file, uint64_t new_size, Timespec now,
                uint64_t keep_chunks = 0);
// Closes `session`: its handles (freeing inodes unlinked while open), its
// replay records and the session row.
Status CloseSession(WriteTxn& txn, SessionId session);

}  // namespace t0fs::meta::internal
