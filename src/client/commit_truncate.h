// CommitTruncate: the commit and truncation room of libt0fs.
//
// - Commit: what an inode's Files wrote since the last commit (size, mtime,
//   per written chunk the version and the replicas that took it) goes to
//   meta in one call; durable (fsync) when asked. Replicas that missed
//   writes turn stale in the layout (meta repairs them).
// - Truncate: the chunk that keeps a prefix (the boundary chunk) is cut on
//   every healthy replica first, with a new version, then meta sets the
//   size and drops the chunks wholly past it — except those below
//   `keep_chunks`: chunks the client zero-filled when extending, and chunk
//   0 while held by passthrough (the held file takes the new size itself).
//
// Locks: commits are serialised with truncation by InodeState::commit_mu
// (meta keeps the larger size of a commit, so a commit prepared before a
// truncate and sent after it would bring the old size back); Truncate
// also holds passthrough_mu (unless the caller does: `setup_locked`), so a
// last passthrough writer's final sync cannot bring back data it removed.
// Order: passthrough_mu, then commit_mu, then InodeState::mu (never held
// across I/O or a meta call).
#pragma once

#include "client/data_client.h"
#include "client/inode_state.h"
#include "client/meta_api.h"
#include "client/open_files.h"
#include "client/passthrough.h"
#include "client/replica_io.h"

namespace t0fs::client {

class CommitTruncate {
 public:
  CommitTruncate(MetaApi& meta, DataClient& data, ReplicaIo& replicas, OpenFiles& open, Passthrough& passthrough)
      : meta_(meta), data_(data), replicas_(replicas), open_(open), passthrough_(passthrough) {}

  // Commits pending writes of `st` (handle may be 0); CommitLocked with
  // st.commit_mu held. A commit meta refuses as lost (kStale) drops the
  // pending state of what it carried (InodeState::lost_commits). `seen`
  // (a File's count of lost commits reported to it): a loss not yet
  // reported to that File is returned once, even when this commit had
  // nothing to say.
  Status Commit(InodeState& st, HandleId handle, bool durable, uint64_t* seen = nullptr);
  Status CommitLocked(InodeState& st, HandleId handle, bool durable);
  // Truncates `ino` (open here: `st`, else null) to `size`: data of the
  // boundary chunk first, then meta.
  Result<Attr> Truncate(InodeId ino, InodeState* st, uint64_t size, bool setup_locked = false);

 private:
  // Forgets a chunk's pending writes (nodes written, unsynced) and its open
  // local files; the caller holds st.mu. Its dirty version is the caller's.
  static void ForgetChunk(InodeState& st, ChunkId chunk);
  // After meta refused a commit of `versions` (prepared at `generation`):
  // their writes are lost; the inode's size falls back to the committed
  // one, their layout entries are refetched.
  static void DropRefused(InodeState& st, const std::vector<std::pair<ChunkId, uint64_t>>& versions,
                          uint64_t generation, const Status& refused);

  MetaApi& meta_;
  DataClient& data_;
  ReplicaIo& replicas_;
  OpenFiles& open_;
  Passthrough& passthrough_;
};

}  // namespace t0fs::client
