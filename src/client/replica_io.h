// ReplicaIo: the replica room of libt0fs — which replica serves a read,
// the local bypass, failover, replicated writes and fsync of replicas.
//
// - Replica choice (ReadOrder): healthy replicas only; the local one first
//   (drive speed, no network), then the least busy; a node that failed a
//   request (DataClient::Suspect) last and, while another replica answers,
//   not at all, until a background probe or a request finds it answering.
// - Local bypass: a replica on this client's node is read and written
//   through its chunk files (fd passing), cached per (chunk, O_DIRECT) in
//   InodeState::local_files. A missing file is cached as a "known hole"
//   only while the layout says the chunk was never written (version 0):
//   once it says version > 0 the file is looked up again (KnownHoleHolds).
// - Failover reads: on a damaged replica (checksum, stale, missing file)
//   the next one is read and the bad one reported to meta for repair; on an
//   unreachable node the next one too (meta learns that from heartbeats).
//   An expired capability is refreshed once through the layout room.
// - Degraded reads (protect=ec): when no replica answers and the chunk has
//   erasure-coded cells of its committed version, the read is served row by
//   row (ec/rows.h) from cells at exactly that version: from the wanted data
//   cells as they are while every data cell of the row answers; else the
//   row is decoded whole from the first K cells that answer (data cells
//   first) and kept in DecodedRows, where the row's next reads find it. The
//   chunk's read right covers its cells.
// - Reads through the object tier (protect=object): when no replica
//   answers (and no cells decode) and the chunk's copy in the bucket is its
//   committed version, a node meta named (object_readers; this client's own
//   first) reads it with ranged GETs (ObjectRead) — a lost node's files read
//   on at once, while repair recalls them.
// - Replicated writes: every healthy replica the session still writes
//   (InodeState::written_nodes) in parallel; a write succeeds when one took
//   it, and the ones that did are recorded for the commit.
// - Staged-back writes (protect=object): when none of them takes a write
//   because their nodes do not answer, the bucket holds the chunk's
//   committed version and this session wrote nothing to the chunk yet (else
//   its unsynced bytes live only on the lost nodes), the lost node is not
//   waited for (a layout that knows no bucket copy is asked for again once:
//   the file may have been open since before its upload): meta is asked to
//   recall the chunk to an up node now
//   (ReportReplica, kWriterWaits; it does so once the node misses its
//   heartbeats), and the layout is asked again every kStageBackPoll until
//   a healthy replica takes the write, or the retry timeout passes (EIO).
//   The write keeps the session's version (committed + 1): the recalled
//   replica is at the committed version, so it takes it as any healthy
//   replica, and the commit marks the lost one stale.
//   Without a bucket copy, a single replica's node is waited for (the retry
//   timeout), as before.
// - Offloaded chunks (keep-local=drop|pressure): a chunk whose replicas are
//   all offloaded is read through the tier (object or cells) like a lost
//   one; a write or truncation first has meta stage it back (Recall,
//   ReportReplica kRecall) and waits for the healthy replica.
// - Sync: fsync of the replicas written since the last one, remote ones at
//   once; it succeeds when one replica synced (as a write does when one
//   took it), and the others are left to repair.
//
// Locks: takes InodeState::mu only to read or update the inode's fields,
// never across I/O; callers may hold passthrough_mu and commit_mu.
// Thread safety: safe for concurrent use (per inode through InodeState::mu).
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <unordered_map>
#include <vector>

#include "client/data_client.h"
#include "client/decoded_rows.h"
#include "client/inode_state.h"
#include "client/io_stats.h"
#include "client/layout_cache.h"
#include "client/meta_api.h"
#include "common/logging.h"

namespace t0fs::client {

// What read ordering knows of a replica's node.
struct ReplicaRank {
  bool suspect = false;  // failed a request a moment ago
  bool local = false;    // on this client's node (and the bypass is on)
  uint64_t load = 0;     // requests in flight towards it
};

// The healthy replicas of `replicas` in the order a read tries them.
std::vector<ReplicaInfo> ReadOrder(const std::vector<ReplicaInfo>& replicas,
                                   const std::function<ReplicaRank(const ReplicaInfo&)>& rank);

// Whether a write that no replica of `chunk` took (their nodes do not
// answer) may ask meta to stage the chunk back from the object tier: the
// bucket holds its committed version and nodes can read it, and the write's
// session has not written the chunk yet (`session_wrote`: bytes it wrote
// before are on the lost nodes only, not in the bucket).
bool CanStageBack(const ChunkInfo& chunk, bool session_wrote);

// Whether a cached local file (`cached`, null: a known hole) still answers
// for a replica at `version`, for reading or (`for_write`) writing.
bool KnownHoleHolds(const InodeState::LocalFile& cached, bool for_write, uint64_t version);

class ReplicaIo {
 public:
  ReplicaIo(bool local_bypass, MetaApi& meta, DataClient& data, LayoutCache& layouts, IoStats& stats)
      : local_bypass_(local_bypass), meta_(meta), data_(data), layouts_(layouts), stats_(stats) {}

  // Reads one piece that lies within chunk `index` (a hole reads empty).
  Result<size_t> Read(InodeState& st, uint64_t index, uint64_t offset_in_chunk, std::span<std::byte> buf,
                      bool direct);
  // How often a write that waits for a chunk staged back from the object
  // tier asks meta for its layout again.
  static constexpr std::chrono::milliseconds kStageBackPoll{500};
  static constexpr std::chrono::milliseconds kRecallPoll{250};

  // Writes one piece to every healthy replica the session writes (in
  // parallel); succeeds when at least one took it. Replicas that failed
  // leave the session's write set (and are reported stale at commit).
  // When none took it, see "Staged-back writes" above. When none took it
  // because their nodes have no file at the layout's version (kStale: the
  // layout predates an offload or a drop, or the nodes lost the files, or
  // meta dropped the chunk), the caller asks for the layout again and writes
  // once more (FileImpl::WriteAt).
  Status Write(InodeState& st, const CachedChunk& chunk, uint64_t offset_in_chunk,
               std::span<const std::byte> data, uint64_t version, bool direct);
  // fsync of every replica written since the last Sync.
  Status Sync(InodeState& st);

  // Whether `r` is this client's node's replica and the bypass is on.
  bool IsLocal(const ReplicaInfo& r) const;
  // The local replica's chunk file (cached; null: a known hole, for reads).
  // `lazy`: a new chunk's files may stay unnamed (DataClient::OpenLocal).
  Result<std::shared_ptr<ChunkFile>> LocalFile(InodeState& st, const ReplicaInfo& r, const Capability& cap,
                                               bool for_write, bool direct, bool retry, bool lazy = false);
  // Names this inode's unnamed local files of the chunks in `written`
  // (AdoptLocal): called before their versions are committed, so that every
  // committed version has files with names behind it. kStale: a chunk
  // left this node (its writes are lost: another client truncated it away).
  Status NameLocalFiles(InodeState& st, std::span<const WrittenChunk> written);
  // A new file's chunk 0 whose files this client prepared (ChunkPool): the
  // local replica's files from now on, as a lazy open's would be.
  void UsePrepared(InodeState& st, const std::shared_ptr<ChunkFile>& file);

  // A chunk with no healthy replica and offloaded ones (keep-local=drop|
  // pressure): asks meta to stage it back and waits, asking `fetch` for the
  // chunk's current layout after 100 ms, then every kRecallPoll, until it
  // names a healthy
  // replica (returned) or the retry timeout passes (EIO).
  using FetchChunk = std::function<Result<std::optional<CachedChunk>>()>;
  Result<CachedChunk> Recall(InodeId ino, const CachedChunk& chunk, const FetchChunk& fetch);

 private:
  // fsync of one chunk's replicas written since the last Sync, remote ones
  // at once (DataClient::SyncMany). Succeeds when one replica synced; the
  // ones that did not leave the session's write set (stale at the commit,
  // then repaired).
  Status SyncChunk(InodeState& st, ChunkId chunk_id, uint64_t index);
  Result<size_t> ReadReplica(InodeState& st, const ReplicaInfo& r, const Capability& cap, uint64_t offset,
                             std::span<std::byte> buf, bool direct, bool last_resort);
  void ReportReplica(const ReplicaInfo& r, ReplicaProblem problem, const Status& why);
  // Recall on read: a read of offloaded `chunk` (served from the tier) asks
  // meta to stage it back, in the background and at most every
  // kRecallAskEvery per chunk (meta decides by the file's keep-local rule).
  // True when this chunk asked at least kRecallAskEvery ago: its layout is
  // worth asking for again (the chunk may be back, to be read locally).
  bool AskRecallOnRead(const CachedChunk& chunk);
  static constexpr std::chrono::seconds kRecallAskEvery{5};
  static constexpr size_t kMaxRecallAsks = 4096;
  // The healthy replicas of `chunk` this session writes (all, or those in
  // written_nodes); `session_wrote` (if given): written_nodes restricts them.
  std::vector<ReplicaInfo> WriteTargets(InodeState& st, const CachedChunk& chunk,
                                        bool* session_wrote);
  // One write of the piece to `targets` (in parallel); `wait`: a single
  // target's node is waited for (the retry timeout). Records the replicas
  // that took it; the first error when none did.
  Status WriteTo(InodeState& st, const CachedChunk& chunk, const std::vector<ReplicaInfo>& targets,
                 uint64_t offset_in_chunk, std::span<const std::byte> data, uint64_t version,
                 bool direct, bool wait);
  // The write no replica in `lost` took (`last`): asks meta to stage the
  // chunk back and writes to the first healthy replica the layout names,
  // asking every kStageBackPoll until the retry timeout.
  Status StageBack(InodeState& st, CachedChunk chunk, std::vector<ReplicaInfo> lost,
                   uint64_t offset_in_chunk, std::span<const std::byte> data, uint64_t version,
                   bool direct, Status last);
  // The bytes [offset, offset + buf.size()) of `chunk` (short at its end),
  // decoded from its cells; an error when it has none of its committed
  // version or fewer than K answer.
  Result<size_t> DegradedRead(const CachedChunk& chunk, uint64_t offset, std::span<std::byte> buf);
  // The same bytes read from the chunk's copy in the object tier through
  // one of its object readers (ObjectRead); an error when none answers.
  Result<size_t> ObjectRead(const CachedChunk& chunk, uint64_t offset, std::span<std::byte> buf);

  const bool local_bypass_;
  MetaApi& meta_;
  DataClient& data_;
  LayoutCache& layouts_;
  IoStats& stats_;
  DecodedRows rows_;  // rows degraded reads decoded lately
  // Warnings about a replica that every request meets (a hung or lost
  // node): a few per interval and kind, then a count.
  // Recall on read: when each offloaded chunk read here last asked meta
  // to stage it back (AskRecallOnRead).
  std::mutex recall_asks_mu_;
  std::unordered_map<ChunkId, std::chrono::steady_clock::time_point> recall_asks_;
  LogLimit read_warnings_{5, std::chrono::seconds(10)};
  LogLimit write_warnings_{5, std::chrono::seconds(10)};
  LogLimit sync_warnings_{5, std::chrono::seconds(10)};
};

}  // namespace t0fs::client
