// The typed rows of the metadata store: what an Engine (engine.h) stores and
// the POSIX operations (ops/) read and write. One struct per row kind, keyed
// as noted; an engine may lay them out as it likes (SQLite: one table each,
// docs/formats/meta-schema.md) as long as it keeps every field bit for bit.
//
// Byte strings (names, symlink targets, xattr names and values) are bytes, not
// text: any value but the empty name, NUL included, must come back unchanged,
// and they order by unsigned byte comparison (memcmp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/ids.h"
#include "common/status.h"
#include "meta/store/meta_store.h"

namespace t0fs::meta {

// A protection goal (InodeAttr::protect) in two integer columns, the same in
// every engine (docs/formats/meta-schema.md): `protect` = kind | copies << 8
// | parity << 16 | keep_local << 24 (one byte each: copies and parity are at
// most 32) | drop_after_s << 32, and `protect_within` = within_s. 0 and 0:
// no goal.
inline uint64_t PackProtection(const Protection& p) {
  auto byte = [](uint32_t v) { return static_cast<uint64_t>(v & 0xff); };
  return byte(static_cast<uint32_t>(p.kind)) | byte(p.copies) << 8 | byte(p.parity) << 16 |
         byte(static_cast<uint32_t>(p.keep_local)) << 24 |
         static_cast<uint64_t>(p.drop_after_s) << 32;
}
inline Protection UnpackProtection(uint64_t packed, uint64_t within_s) {
  Protection p;
  p.kind = static_cast<ProtectKind>(packed & 0xff);
  p.copies = static_cast<uint32_t>((packed >> 8) & 0xff);
  p.parity = static_cast<uint32_t>((packed >> 16) & 0xff);
  p.keep_local = static_cast<KeepLocal>((packed >> 24) & 0xff);
  p.drop_after_s = static_cast<uint32_t>(packed >> 32);
  p.within_s = static_cast<uint32_t>(within_s);
  return p;
}

// An inode; key `attr.ino`.
struct InodeRow {
  InodeAttr attr;
  std::string target;  // symlinks: the target (never empty); empty for other types
  // Directories: the directory containing this one; the root and a removed
  // directory name themselves. 0 for every other type (a file may have many
  // names).
  InodeId parent;
  // Directories: the seq of the newest entry made in it; only grows. The
  // listing order (and cookies) of the directory's entries.
  uint64_t entry_seq = 0;
};

// A directory entry; key (parent, name).
struct DentryRow {
  InodeId parent;
  std::string name;
  InodeId ino;
  uint64_t seq = 0;  // 1..parent's entry_seq, unique within the parent
};

// An entry as a listing returns it, with its inode when asked for (nullopt
// when the inode is missing: a damaged store, reported by Check).
struct DirItem {
  DentryRow dentry;
  std::optional<InodeRow> inode;
};

// An extended attribute; key (ino, name).
struct XattrRow {
  InodeId ino;
  std::string name;
  std::string value;
};

// An allocated chunk of a regular file; key `id`, also unique by (ino, index).
struct ChunkRow {
  ChunkId id;
  InodeId ino;
  uint64_t index = 0;
  // The chunk version whose copy is in the object tier (protect=object;
  // object key: ObjectKey in meta/object_tier.h); 0 = none.
  uint64_t object_version = 0;
  // The chunk's erasure-coded cells (protect=ec): ec::FormatStripe text,
  // "" = none.
  std::string ec{};
};

// One replica of a chunk; key (chunk, pos), pos 0 being the primary.
struct ReplicaRow {
  ChunkId chunk;
  uint32_t pos = 0;
  NodeId node;
  VolumeId volume;
  uint64_t version = 0;
  ReplicaState state = ReplicaState::kHealthy;
};

// A chunk with its replica rows in pos order (possibly none: a damaged store).
struct ChunkWithReplicas {
  ChunkRow chunk;
  std::vector<ReplicaRow> replicas;
};

// A replica file a data node must delete; key `id`.
struct GarbageRow {
  uint64_t id = 0;
  ChunkId chunk;
  InodeId ino;
  uint64_t index = 0;
  NodeId node;
  VolumeId volume;
  uint64_t version = 0;
};

// An open file handle of a session; key `id`.
struct HandleRow {
  HandleId id;
  SessionId session;
  InodeId ino;
  uint32_t flags = 0;  // open(2) flags
};

// The last outcome of a replay slot; key (session, slot). See OpToken.
struct ReplayRow {
  SessionId session;
  uint32_t slot = 0;
  uint64_t seq = 0;
  StatusCode code = StatusCode::kOk;
  std::string message;
  // What rebuilds the operation's result on a replay.
  InodeId ino;
  HandleId handle;
  bool flag = false;
};

// A data node; key `node`. (Its volumes are VolumeRecord rows of their own;
// NodeRecord::volumes is filled by the store, not by the engine.)
struct NodeRow {
  NodeId node;
  NodeAdminState admin_state = NodeAdminState::kActive;
  std::string host_id;
  std::string hostname;
  std::string address;
  std::string local_socket;
  Timespec last_heartbeat;
};

// Sessions are SessionRecord rows (key `session`), volumes VolumeRecord rows
// (key `volume`, `uuid` unique).

// Named counters that hand out ids (see WriteTxn::NextId).
enum class Counter : uint32_t {
  kInode,
  kChunk,
  kGarbage,
  kSession,
  kHandle,
  kNode,
  kVolume,
};

// Row counts for status and statfs.
struct RowTotals {
  uint64_t directories = 0;    // inodes with S_ISDIR
  uint64_t files = 0;          // every other inode
  uint64_t logical_bytes = 0;  // sum of `size` over S_ISREG inodes
  uint64_t chunks = 0;
  uint64_t sessions = 0;
  uint64_t handles = 0;
  uint64_t garbage = 0;
};

}  // namespace t0fs::meta
