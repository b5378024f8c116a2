// Passthrough: the FUSE passthrough room of libt0fs — which files the kernel
// may serve from their local chunk file, handing that file out, and keeping
// meta in step with what the kernel writes behind our back.
//
// While Files of an inode have handed chunk 0's local file to the kernel,
// that file *is* the file (InodeState::Passthrough has the rules): every
// change this client makes meanwhile is applied to it (Truncate, O_TRUNC,
// writes of other Files), and chunk 0 never leaves the layout. NoteWrites
// turns what the kernel wrote into a write of this session (size, mtime, a
// new chunk-0 version), ready for the commit.
//
// Locks: Open holds InodeState::passthrough_mu while a File joins (setup),
// and Truncate holds it across a truncation, so a last writer's final sync
// cannot bring back data a truncate removed; InodeState::mu only around the
// inode's fields, never across I/O. Order: passthrough_mu, commit_mu, mu.
#pragma once

#include <sys/stat.h>

#include <memory>
#include <optional>

#include "client/inode_state.h"
#include "client/io_stats.h"
#include "client/layout_cache.h"
#include "client/meta_api.h"
#include "client/replica_io.h"

namespace t0fs::client {

class Passthrough {
 public:
  Passthrough(bool local_bypass, MetaApi& meta, LayoutCache& layouts, ReplicaIo& replicas, IoStats& stats)
      : local_bypass_(local_bypass), meta_(meta), layouts_(layouts), replicas_(replicas), stats_(stats) {}

  // File::OpenPassthrough: checks that the file is one chunk with a healthy
  // local replica (the only replica for `write`), allocating chunk 0 for a
  // new file opened for writing, and returns that chunk's local file, held
  // until Leave. With `join` and the inode held already, the held file
  // itself. Not eligible: kNotSupported (kBusy with `join`).
  Result<std::shared_ptr<ChunkFile>> Open(InodeState& st, bool write, bool join);
  // The chunk file the kernel serves `st` from, or null when not held.
  static std::shared_ptr<ChunkFile> Held(InodeState& st);
  // One File leaves passthrough: whether it was the last writer and the
  // last File; `file` is the held chunk file. The caller syncs (last
  // writer) and then calls Forget.
  struct Release {
    std::shared_ptr<ChunkFile> file;
    bool last_writer = false;
    bool last_open = false;
  };
  static Release Leave(InodeState& st, bool write);
  // Resets the writer state (`writer_only`) or everything of st.passthrough.
  static void Forget(InodeState& st, bool writer_only);
  // Takes what the kernel wrote into `st` as a write of this session. With
  // `length`, the chunk file's length when it looked (none: no writer holds
  // the file, nothing looked).
  Status NoteWrites(InodeState& st, std::optional<uint64_t>* length = nullptr);
  // Whether the held chunk file changed since the last note (or the first
  // writer's open): the kernel may have written it after what NoteWrites
  // saw, which needs no writer to look.
  static Result<bool> ChangedSinceSeen(InodeState& st, ChunkFile& file);
  // The held file with descriptors that can write: passthrough readers hold
  // it read-only, so its data and checksum files are opened again (the same
  // inodes, through /proc: named or not) for a truncation.
  static Result<std::shared_ptr<ChunkFile>> Writable(std::shared_ptr<ChunkFile> held);
  // Records `overflow_bytes` more bytes moved out of a passthrough chunk; a rebuild.
  void Count(uint64_t overflow_bytes, bool rebuilt);

 private:
  // `seen`: the chunk file's stat by the caller, if it made none of its own
  // changes to the file since.
  Status Hold(InodeState& st, const std::shared_ptr<ChunkFile>& file, bool write,
              const struct stat* seen = nullptr);

  const bool local_bypass_;
  MetaApi& meta_;
  LayoutCache& layouts_;
  ReplicaIo& replicas_;
  IoStats& stats_;
};

}  // namespace t0fs::client
