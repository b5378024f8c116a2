// DataClient: libt0fs's access to chunk replicas.
//
// Remote replicas: chunk RPCs over TCP to the node's advertised address
// (node addresses come from meta and are refreshed when a node is unknown).
// Local replicas: descriptors of the chunk files obtained once from the
// local data service over its unix socket (fd passing) and then used
// directly, with the same checksum rules (common/chunk_file.h).
//
// Remote reads are checked here: a block-aligned read asks the node to send
// the bytes unchecked, straight from its page cache, with the blocks' stored
// checksums; they are checked in the caller's buffer before a read returns
// (or a ReadStream read completes). A mismatch asks the node again to check
// them itself, which waits for a writer or fails kDataChecksum
// (docs/design.md, "Remote reads are checked by the client").
//
// Every request carries the chunk's capability. With `retry`, transport
// errors (a data service restarting) are retried until the retry timeout;
// without, one attempt is made (plus one on a fresh connection, in case a
// pooled one went stale; not after a timeout: the node is hung, not the
// connection) so that the caller can fail over to another replica at once.
// Chunk reads and writes are idempotent.
//
// Thread safety: safe for concurrent use.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "client/meta_client.h"
#include "common/capability.h"
#include "common/chunk_file.h"
#include "rpc/channel.h"
#include "t0fs/client.h"

namespace t0fs::client {

class DataClient {
 public:
  DataClient(const ClientOptions& options, std::string secret, MetaClient& meta);
  ~DataClient();

  // Reads from a remote replica into buf; returns the bytes the chunk file
  // holds there (short at its end). A replica never written (version 0)
  // whose file does not exist reads as empty.
  // `direct`: the reader opened with O_DIRECT; the node reads from its drive.
  // `version` (if given): the file's version as the node answered; a read
  // whose pieces saw different versions fails kStale.
  Result<size_t> Read(const ReplicaInfo& r, const Capability& cap, uint64_t offset,
                      std::span<std::byte> buf, bool retry, bool direct = false,
                      uint64_t* version = nullptr);
  Status Write(const ReplicaInfo& r, const Capability& cap, uint64_t offset, std::span<const std::byte> data,
               uint64_t version, bool retry);
  // Writes to several remote replicas at once: all requests are sent before
  // any reply is awaited, and `local_write` (the local replica, may be empty;
  // true when it took the write) runs while they are in flight. Replies are
  // taken as they come; once one replica took the write (the local one or a
  // remote one), the others are waited for kStragglerWait more, then fail
  // with kRpcTimeout (a hung node holds no writer for the reply timeout;
  // its replica misses the write and is repaired). One status per replica,
  // in order.
  std::vector<Status> WriteMany(const std::vector<ReplicaInfo>& replicas, const Capability& cap,
                                uint64_t offset, std::span<const std::byte> data, uint64_t version,
                                const std::function<bool()>& local_write);
  // How long replicas that have not answered a write are waited for once
  // another took it: as long as meta waits for a silent node's heartbeats
  // before it declares it down (node-timeout's default).
  static constexpr std::chrono::seconds kStragglerWait{10};
  // One read of a ReadStream: `buf` receives the replica's bytes at `offset`.
  struct StreamRead {
    ReplicaInfo replica;
    Capability cap;
    uint64_t offset = 0;
    std::span<std::byte> buf;
    bool direct = false;
  };
  // Reads from `node` with up to `depth` requests in flight, each on its own
  // pooled connection: every free connection is given its next read before
  // the oldest reply is awaited, and replies land straight in the reads'
  // buffers (BatchIo). `next` hands out reads (null: none for now); the
  // stream returns once nothing is in flight and `next` has none. `done`
  // gets each read's result as Read would return it, in the order sent.
  // One attempt per read (no retry, no failover): the caller fails over.
  void ReadStream(NodeId node, size_t depth, const std::function<StreamRead*()>& next,
                  const std::function<void(StreamRead*, Result<size_t>)>& done);
  Status Truncate(const ReplicaInfo& r, const Capability& cap, uint64_t length, uint64_t version, bool retry);
  // fsync of a remote replica; with `retry`, transport errors are retried
  // until the retry timeout (the only replica).
  Status Sync(const ReplicaInfo& r, const Capability& cap, bool retry = true);
  // fsync of several remote replicas at once, `local_sync` (may be empty;
  // true when the local replica synced) meanwhile; the straggler rule of
  // WriteMany. One status per replica, in order.
  std::vector<Status> SyncMany(const std::vector<ReplicaInfo>& replicas, const Capability& cap,
                               const std::function<bool()>& local_sync);
  // Opens the local replica's files through the local data service.
  // kDataNoChunk when `create` is false and the chunk has no file yet.
  // `retry` as for remote calls: without, a local data service that is down
  // fails at once (the caller uses another replica).
  // `lazy`: a chunk never written may come back as unnamed files
  // (ChunkFile::unnamed(); data/chunk_store.h OpenLocal), which AdoptLocal
  // names before a version of it is committed.
  Result<std::shared_ptr<ChunkFile>> OpenLocal(const ReplicaInfo& r, const Capability& cap, bool create,
                                               bool writable, bool direct, bool retry, bool lazy = false);
  Status AdoptLocal(const ReplicaInfo& r, const Capability& cap, ChunkFile& file);
  // Lazy OpenLocal of `chunks` (ids reserved from meta, no files yet, all on
  // one volume of this node), in one call: their files, in order (ChunkPool).
  // `reuse` (at most one per chunk): unnamed files this client was handed
  // for chunks of new files that were closed empty; the node gives them to
  // the first chunks where it may (data/chunk_store.h Reuse) — that chunk's
  // file is then the same files under the new id, writer byte not held —
  // and makes new files for the others.
  Result<std::vector<std::shared_ptr<ChunkFile>>> PrepareLocal(
      std::span<const PreparedChunkId> chunks,
      std::span<const std::shared_ptr<ChunkFile>> reuse = {});
  // Reads the object tier's copy of `chunk` at `version` through node `via`
  // (ObjectRead: the node does ranged GETs; protect=object), for a chunk
  // none of whose replicas answers; returns the bytes read (short at the
  // chunk's end). One attempt, as Read without `retry`.
  Result<size_t> ReadObject(NodeId via, ChunkId chunk, uint64_t version, const Capability& cap,
                            uint64_t offset, std::span<std::byte> buf);
  // Requests in flight towards `node` (the read path prefers idle replicas).
  uint64_t Load(NodeId node);
  // A node that failed a request (transport error) is suspect until it
  // answers again: readers try its replicas last, and reads and local opens
  // that need not wait for it (no `retry`: another replica or path exists)
  // fail at once, so a stopped or hung node costs one timeout, not one per
  // request. A background prober opens a connection to it (the Hello
  // handshake, within the connect timeout) kFirstProbe after it failed,
  // then at doubling intervals up to kMaxProbe; the first answer (a probe's
  // or a request's: Reachable) clears it.
  void Unreachable(NodeId node);
  void Reachable(NodeId node);
  bool Suspect(NodeId node);
  static constexpr std::chrono::seconds kFirstProbe{3};
  static constexpr std::chrono::seconds kMaxProbe{30};
  // When a wait for a replica that started at `start` gives up: the
  // client's retry timeout (shortened while the mount stops).
  std::chrono::steady_clock::time_point RetryDeadline(
      std::chrono::steady_clock::time_point start) const {
    return meta_.RetryDeadline(start);
  }

 private:
  Result<rpc::Channel*> ChannelFor(NodeId node);
  Result<rpc::Channel*> LocalChannel();
  // Runs `attempt`, retrying transport errors; `describe` names the request
  // in errors and logs (built only when needed). The retries end at the
  // client's retry timeout counted from when `ch` began to fail, not from
  // this request: while a data service stays unreachable (stopped, hung),
  // requests after the first minute fail after one attempt instead of each
  // waiting a minute of its own; the first answer ends it.
  Status Attempt(rpc::Channel* ch, const std::function<std::string()>& describe, bool retry,
                 const std::function<Status()>& attempt);
  // When `ch` began to fail in transport without an answer since: the
  // earlier of the recorded time and `now` (which it records).
  std::chrono::steady_clock::time_point FailingSince(rpc::Channel* ch,
                                                     std::chrono::steady_clock::time_point now);
  void Answered(rpc::Channel* ch);
  std::atomic<uint64_t>& InFlight(NodeId node);

  const ClientOptions options_;
  const std::string secret_;
  MetaClient& meta_;
  rpc::ClientOptions channel_options_;
  std::mutex mu_;  // guards channels_, local_, in_flight_
  std::unordered_map<NodeId, std::unique_ptr<rpc::Channel>> channels_;
  std::unordered_map<NodeId, std::unique_ptr<std::atomic<uint64_t>>> in_flight_;
  std::unique_ptr<rpc::Channel> local_;
  std::string local_path_;
  // One request per replica in flight at once (`request` builds replica
  // r's call; `meanwhile` runs while they are in flight and says whether the
  // local replica took it), replies taken as they come; once one replica
  // took it, the rest get kStragglerWait more (then kRpcTimeout). A pooled
  // connection that failed otherwise gets `again` on a fresh one.
  std::vector<Status> Fanout(
      const std::vector<ReplicaInfo>& replicas,
      const std::function<rpc::CallArgs(const ReplicaInfo&, std::string*, std::string*)>& request,
      const std::function<bool()>& meanwhile,
      const std::function<Status(const ReplicaInfo&)>& again);
  // kRpcConnect (a transport error: callers fail over) while `node` is
  // suspect, for the requests that need not wait for it.
  Status NotSuspect(NodeId node);
  // Probes the suspect nodes when due (see Unreachable) until stopping.
  void ProbeLoop();
  // Whether `node`'s data service answers a new connection's handshake.
  Status Probe(NodeId node);
  struct SuspectNode {
    std::chrono::steady_clock::time_point next_probe;
    std::chrono::steady_clock::duration interval;
  };
  // Drops a suspect node (suspect_mu_ held); `answered`: says so in the log.
  void ForgetSuspect(std::unordered_map<NodeId, SuspectNode>::iterator it, bool answered);
  std::mutex suspect_mu_;  // guards suspect_, probe_stop_, prober_ (starting it)
  std::condition_variable suspect_cv_;
  std::unordered_map<NodeId, SuspectNode> suspect_;
  std::atomic<size_t> suspects_{0};  // suspect_.size(), read without the lock
  bool probe_stop_ = false;
  std::thread prober_;               // started at the first suspect node
  std::mutex failing_mu_;            // guards failing_since_
  std::unordered_map<rpc::Channel*, std::chrono::steady_clock::time_point> failing_since_;
  std::atomic<size_t> failing_{0};  // failing_since_.size(), read without the lock
  // The local data service's calls (open, prepare and name chunk files)
  // touch no data: a reply takes milliseconds, so one that does not come
  // within this is a stopped or hung service, retried as any transport error.
  static constexpr std::chrono::seconds kLocalCallTimeout{10};
};

}  // namespace t0fs::client
