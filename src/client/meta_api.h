// MetaApi: what libt0fs's data path asks meta — layouts, allocation,
// commits, truncation, replica reports — in libt0fs's own types. MetaClient
// implements it over RPC; unit tests of the client's rooms (layout cache,
// replica I/O, commit/truncate, passthrough) use fakes.
//
// Thread safety: implementations are safe for concurrent use.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

#include "common/capability.h"
#include "common/clock.h"
#include "common/ids.h"
#include "common/status.h"
#include "t0fs/client.h"

namespace t0fs::client {

// A chunk of a layout as the client keeps it: its replicas (ReplicaInfo::local
// marks this client's node) and the capability meta signed for it.
struct CachedChunk {
  ChunkInfo info;
  Capability cap;
};

// The committed version of a chunk: the highest of its healthy replicas
// and of its offloaded ones (whose data is in the object tier or its cells).
inline uint64_t CommittedVersion(const ChunkInfo& c) {
  uint64_t v = 0;
  for (const ReplicaInfo& r : c.replicas) {
    if (r.state == ReplicaState::kHealthy || r.state == ReplicaState::kOffloaded) {
      v = std::max(v, r.version);
    }
  }
  return v;
}

inline bool Healthy(const ReplicaInfo& r) { return r.state == ReplicaState::kHealthy; }
// No healthy replica and an offloaded one (keep-local=drop|pressure): the
// chunk is in the object tier or its cells only.
inline bool Offloaded(const ChunkInfo& c) {
  return std::none_of(c.replicas.begin(), c.replicas.end(), Healthy) &&
         std::any_of(c.replicas.begin(), c.replicas.end(),
                     [](const ReplicaInfo& r) { return r.state == ReplicaState::kOffloaded; });
}

// What an open returns: the handle meta registered (and the session it
// belongs to), the attributes, and the first chunks of the layout (regular
// files).
struct OpenReply {
  HandleId handle;
  SessionId session;
  Attr attr;
  std::vector<CachedChunk> layout;
};

// One chunk written since the last commit: the version its writes carry and
// the nodes whose replica took them all (empty: every healthy replica).
struct WrittenChunk {
  ChunkId chunk;
  uint64_t version = 0;
  std::vector<NodeId> nodes;
};

struct CommitRequest {
  InodeId ino;
  HandleId handle;                // 0: none (a truncate's commit)
  uint64_t size = 0;              // the file is at least this long afterwards
  std::optional<Timespec> mtime;  // set when written
  std::vector<WrittenChunk> written;
  bool durable = false;  // fsync: the commit reaches stable storage before the reply
};

// Why a replica could not be used.
enum class ReplicaProblem {
  kChecksum,     // a block failed its checksum: repaired
  kStale,        // older than committed, or its file is missing: repaired
  kUnreachable,  // its node did not answer: meta learns that from heartbeats
  // Its node did not answer a write that no other replica took: meta
  // recalls the chunk from the object tier to an up node now if the node
  // is not heartbeating (a writer waits; see ReplicaIo::Write).
  kWriterWaits,
  // A write (or truncation) waits for this chunk, whose replicas are
  // offloaded (keep-local=drop|pressure): meta stages it back now.
  kRecall,
  // A read was served from the tier because the chunk is offloaded (recall
  // on read): meta stages it back where the file's rule keeps it a while.
  kRecallOnRead,
};

class MetaApi {
 public:
  virtual ~MetaApi() = default;

  // The data node on this client's host (invalid when none).
  virtual NodeId local_node() const = 0;
  virtual Result<Attr> GetAttr(InodeId ino) = 0;
  // Chunks [first, first + count) that are allocated, with capabilities for
  // reading (and writing, with `write`: a write handle must be open).
  virtual Result<std::vector<CachedChunk>> GetLayout(InodeId ino, uint64_t first, uint64_t count,
                                                     bool write) = 0;
  // Allocates the chunks at `indices` (existing ones are returned as they
  // are), the first replica on this client's node under placement=local.
  virtual Result<std::vector<CachedChunk>> Allocate(InodeId ino, const std::vector<uint64_t>& indices) = 0;
  virtual Result<Attr> Commit(const CommitRequest& req) = 0;
  // Sets the size; chunks wholly past it are dropped, except those below
  // `keep_chunks` (the client resized them itself).
  virtual Result<Attr> Truncate(InodeId ino, uint64_t size, uint64_t keep_chunks) = 0;
  virtual Status ReportReplica(const ReplicaInfo& replica, ReplicaProblem problem, const Status& why) = 0;
  // ReportReplica in the background: the caller does not wait for meta
  // (a report that finds too many waiting is dropped).
  virtual void ReportReplicaLater(const ReplicaInfo& replica, ReplicaProblem problem) = 0;
};

}  // namespace t0fs::client
