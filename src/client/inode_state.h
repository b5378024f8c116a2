// InodeState: what one Client knows about an open inode, shared by all its
// open Files of that inode: the layout cache, local chunk files, the size as
// this client sees it, and the writes not yet committed to meta.
//
// Lock: `mu` guards every field; it is never held across I/O or RPCs.
// Callers copy what they need under the lock, do the I/O, then update.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

#include "client/meta_api.h"
#include "common/capability.h"
#include "common/chunk_file.h"
#include "common/clock.h"
#include "common/ids.h"
#include "t0fs/client.h"

namespace t0fs::client {

struct InodeState {
  InodeId ino;
  uint64_t chunk_size = 0;

  std::mutex mu;
  uint64_t size = 0;            // visible size: committed size at open + own writes/truncates
  uint64_t committed_size = 0;  // what meta last confirmed
  std::map<uint64_t, CachedChunk> layout;  // allocated chunks we know of, by index
  uint64_t layout_known_below = 0;  // indices below this were fetched: absent = unallocated
  bool writable = false;            // some File of this inode may write (layouts carry write rights)
  // Per chunk written this session: the nodes whose replica took every
  // write. A replica that failed once is left out for the rest of the
  // session, and the commit reports it stale. No entry (or an empty list):
  // every healthy replica.
  std::unordered_map<ChunkId, std::vector<NodeId>> written_nodes;

  // Chunks written since the last commit: chunk → the version those writes carry.
  std::unordered_map<ChunkId, uint64_t> dirty_versions;
  // Per chunk FileImpl::WriteAt made dirty: how many of its writes landed on
  // a replica since. 0 (only writes on their way): a commit leaves the chunk
  // for the next one, as a version meta recorded before any node has it
  // makes another client's reader or truncate find the node's file "stale".
  // A landing during a commit keeps the chunk dirty for the next one (the
  // commit named the nodes as they were). No entry: passthrough's or a
  // truncation's (their writes are done when they note the version).
  std::unordered_map<ChunkId, uint64_t> landed_writes;
  uint64_t write_generation = 0;      // bumped by every write; commits compare it
  uint64_t committed_generation = 0;  // generation covered by the last commit
  Timespec last_write;
  bool needs_durable = false;  // committed since the last durable commit
  // Commits meta refused as lost (kStale: the writes went only to chunk
  // files their nodes had removed — offloaded or moved since the layout
  // was fetched): how many, and the last one's error. As Linux's errseq,
  // every File open at the time reports it once, at its next flush, fsync or
  // close; the refused writes' pending state is dropped, so later writes go
  // on with a fresh layout instead of failing every flush.
  uint64_t lost_commits = 0;
  Status lost_error;
  // Chunks written since the last fsync, by chunk → index (Fsync syncs them).
  std::unordered_map<ChunkId, uint64_t> unsynced;

  // Local chunk files, keyed by (chunk, O_DIRECT). A null file means the
  // chunk has no local file (a hole) as of when we looked.
  struct LocalFile {
    std::shared_ptr<ChunkFile> file;
    bool writable = false;
  };
  std::map<std::pair<uint64_t, bool>, LocalFile> local_files;

  // FUSE passthrough: while Files of this inode have handed chunk 0's local
  // file to the kernel (`opens` > 0, readers and writers), that file *is*
  // the file, byte for byte and whatever its length (data past the chunk's
  // end included): the kernel reads and writes it directly. So every change
  // this client makes meanwhile (truncate, fallocate, writes and reads of
  // other Files, O_TRUNC) is applied to it, and chunk 0 never leaves the
  // layout. `writers`: Files that let the kernel write it; seen_*: what its
  // data file looked like at the last note of the kernel's writes;
  // needs_rebuild: its checksums need recomputing at the last writer's close;
  // overflow_dirty: bytes past the chunk's end may differ from the copies in
  // the later chunks (copied at the next flush, so that an open after a
  // close sees them there).
  struct Passthrough {
    std::shared_ptr<ChunkFile> file;
    int opens = 0;
    int writers = 0;
    int64_t seen_size = -1;
    Timespec seen_ctime;
    bool needs_rebuild = false;
    bool overflow_dirty = false;
  } passthrough;
  // Serialises passthrough setup and teardown (held across the chunk
  // header updates and the checksum rebuild; never taken under `mu`).
  std::mutex passthrough_mu;
  // Serialises commits with truncation: meta keeps the larger size of a
  // commit, so a commit prepared before a truncate and sent after it would
  // bring the old size back. Order: passthrough_mu, then commit_mu, then mu.
  std::mutex commit_mu;

  // The attributes meta last gave for this inode (open, getattr, setattr,
  // commit, truncate) and when: GetAttr answers from them, with this
  // client's own size and mtime, for up to ClientOptions::attr_cache, so a
  // stat after each write costs no meta round trip. Cleared by this
  // client's namespace changes (they may change nlink or ctime).
  std::optional<Attr> meta_attr;
  std::chrono::steady_clock::time_point meta_attr_at;

  std::mutex append_mu;  // serialises O_APPEND writes (offset = size, then write)
  int open_files = 0;    // Files of this client on this inode (guarded by the client's map lock)
};

}  // namespace t0fs::client
