#include "client/replica_io.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include "common/buffer.h"
#include "common/logging.h"
#include "rpc/channel.h"

namespace t0fs::client {
namespace {

// Which replicas took a write or an fsync, and the first failure.
struct ReplicaOutcome {
  std::vector<NodeId> took;
  Status first_error;
  // Records `r`'s result `s` (a transport error makes its node suspect);
  // false when it failed.
  bool Note(DataClient& data, const ReplicaInfo& r, const Status& s) {
    if (s.ok()) {
      took.push_back(r.node);
      return true;
    }
    if (rpc::IsTransportError(s.code())) data.Unreachable(r.node);
    if (first_error.ok()) first_error = s;
    return false;
  }
};

bool Damaged(StatusCode code) {
  return code == StatusCode::kDataChecksum || code == StatusCode::kCorruption || code == StatusCode::kStale ||
         code == StatusCode::kDataNoChunk;
}

}  // namespace

std::vector<ReplicaInfo> ReadOrder(const std::vector<ReplicaInfo>& replicas,
                                   const std::function<ReplicaRank(const ReplicaInfo&)>& rank) {
  std::vector<std::pair<ReplicaInfo, ReplicaRank>> ranked;
  for (const ReplicaInfo& r : replicas) {
    if (Healthy(r)) ranked.emplace_back(r, rank(r));
  }
  // The local replica first (drive speed, no network), then the least busy;
  // nodes that just failed a request last (DataClient::Suspect).
  std::stable_sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) {
    if (a.second.suspect != b.second.suspect) return b.second.suspect;
    if (a.second.local != b.second.local) return a.second.local;
    return a.second.load < b.second.load;
  });
  std::vector<ReplicaInfo> order;
  order.reserve(ranked.size());
  for (auto& [r, ignored] : ranked) order.push_back(std::move(r));
  return order;
}

bool ReplicaIo::AskRecallOnRead(const CachedChunk& chunk) {
  const ChunkId id = chunk.info.replicas.front().chunk;
  const auto now = std::chrono::steady_clock::now();
  bool again = false;
  {
    std::lock_guard lock(recall_asks_mu_);
    auto [it, inserted] = recall_asks_.try_emplace(id, now);
    if (!inserted) {
      if (now - it->second < kRecallAskEvery) return false;
      it->second = now;
      again = true;
    }
    if (recall_asks_.size() > kMaxRecallAsks) {
      std::erase_if(recall_asks_,
                    [&](const auto& ask) { return now - ask.second >= kRecallAskEvery; });
    }
  }
  stats_.read_recall_requests++;
  meta_.ReportReplicaLater(chunk.info.replicas.front(), ReplicaProblem::kRecallOnRead);
  return again;
}

void ReplicaIo::ReportReplica(const ReplicaInfo& r, ReplicaProblem problem, const Status& why) {
  uint64_t held = 0;
  if (read_warnings_.Allow(&held)) {
    LOG_WARN("chunk {} on node {}: {}; reading another replica{}{}", r.chunk, r.node,
             why.ToString(),
             problem != ReplicaProblem::kUnreachable ? " and reporting this one for repair" : "",
             LogLimit::HeldBackNote(held));
  }
  if (problem == ReplicaProblem::kUnreachable) return;  // meta learns that from heartbeats
  Status st = meta_.ReportReplica(r, problem, why);
  if (!st.ok()) LOG_WARN("reporting chunk {} on node {}: {}", r.chunk, r.node, st.ToString());
}

Result<size_t> ReplicaIo::ReadReplica(InodeState& st, const ReplicaInfo& r, const Capability& cap, uint64_t offset,
                                      std::span<std::byte> buf, bool direct, bool last_resort) {
  if (IsLocal(r)) {
    ASSIGN_OR_RETURN(std::shared_ptr<ChunkFile> file, LocalFile(st, r, cap, false, direct, last_resort));
    if (!file) {
      if (r.version == 0) return size_t{0};  // never written: a hole
      return Status(StatusCode::kDataNoChunk, fmt::format("chunk {} at version {} has no local file", r.chunk,
                                                          r.version));
    }
    if (file->version() < r.version) RETURN_IF_ERROR(file->ReadHeader());
    if (file->version() < r.version) {
      return Status(StatusCode::kStale, fmt::format("local chunk {} is at version {}, committed {}", r.chunk,
                                                    file->version(), r.version));
    }
    ASSIGN_OR_RETURN(size_t n, file->Read(offset, buf));
    stats_.local_reads++;
    stats_.local_read_bytes += n;
    return n;
  }
  ASSIGN_OR_RETURN(size_t n, data_.Read(r, cap, offset, buf, /*retry=*/last_resort, direct));
  stats_.remote_reads++;
  stats_.remote_read_bytes += n;
  return n;
}

Result<size_t> ReplicaIo::Read(InodeState& st, uint64_t index, uint64_t offset_in_chunk, std::span<std::byte> buf,
                               bool direct) {
  ASSIGN_OR_RETURN(std::optional<CachedChunk> chunk, layouts_.ChunkFor(st, index));
  if (!chunk) return size_t{0};  // unallocated: a hole
  if (Offloaded(chunk->info) && AskRecallOnRead(*chunk) && layouts_.Refresh(st, index, 1).ok()) {
    // Asked a while ago: the chunk may be back, to be read here at local speed.
    ASSIGN_OR_RETURN(chunk, layouts_.ChunkFor(st, index));
    if (!chunk) return size_t{0};
  }
  auto rank = [&](const ReplicaInfo& r) {
    return ReplicaRank{data_.Suspect(r.node), IsLocal(r), data_.Load(r.node)};
  };
  std::vector<ReplicaInfo> order = ReadOrder(chunk->info.replicas, rank);
  // Cells to decode from (protect=ec) or a copy in the object tier
  // (protect=object) of the committed version: then no replica is the last
  // resort, and a replica's node that does not answer is not waited for.
  bool has_cells = false, has_object = false;
  auto weigh = [&] {
    has_cells = !chunk->info.ec.empty();
    const uint64_t committed = CommittedVersion(chunk->info);
    has_object = committed != 0 && chunk->info.object_version == committed &&
                 !chunk->info.object_readers.empty();
  };
  weigh();
  // When no replica answers: decoded from the cells, else read from the
  // object tier through a node; the read right renewed once if it expired.
  auto fallback = [&]() -> Result<size_t> {
    auto attempt = [&]() -> Result<size_t> {
      Status why(StatusCode::kIoError, "no erasure-coded cells or object copy to read from");
      if (has_cells) {
        Result<size_t> n = DegradedRead(*chunk, offset_in_chunk, buf);
        if (n.ok() || !has_object) return n;
        why = n.status();
        if (why.code() == StatusCode::kDataCapabilityExpired) return why;
      }
      if (has_object) return ObjectRead(*chunk, offset_in_chunk, buf);
      return why;
    };
    Result<size_t> n = attempt();
    if (n.status().code() != StatusCode::kDataCapabilityExpired) return n;
    RETURN_IF_ERROR(layouts_.Refresh(st, index, 1));
    ASSIGN_OR_RETURN(chunk, layouts_.ChunkFor(st, index));
    if (!chunk) return size_t{0};
    weigh();
    return attempt();
  };
  if (order.empty()) {
    Status none(StatusCode::kIoError,
                fmt::format("chunk {} of inode {} has no healthy replica", index, st.ino));
    if (!has_cells && !has_object) return none;
    Result<size_t> n = fallback();
    if (!n.ok()) LOG_WARN("inode {} chunk #{}: {}", st.ino, index, n.status().ToString());
    return n.ok() ? n : none;
  }
  // Every replica's node failed a moment ago: the fallback first, not a
  // replica attempt per read that is bound to fail.
  if ((has_cells || has_object) &&
      std::all_of(order.begin(), order.end(),
                  [&](const ReplicaInfo& r) { return data_.Suspect(r.node); })) {
    Result<size_t> n = fallback();
    if (n.ok()) return n;
  }
  // The replicas in `order`, one attempt each; with `wait_last` the last
  // one's node is waited for (the client's retry timeout). nullopt: none
  // answered, `last` says why.
  Status last;
  bool renewed = false;
  auto round = [&](const std::vector<ReplicaInfo>& replicas,
                   bool wait_last) -> std::optional<Result<size_t>> {
    for (size_t idx = 0; idx < replicas.size(); ++idx) {
      const ReplicaInfo& r = replicas[idx];
      const bool last_resort = wait_last && idx + 1 == replicas.size();
      Result<size_t> n = ReadReplica(st, r, chunk->cap, offset_in_chunk, buf, direct, last_resort);
      if (n.status().code() == StatusCode::kDataCapabilityExpired && !renewed) {
        renewed = true;
        Status refreshed = layouts_.Refresh(st, index, 1);
        if (!refreshed.ok()) return refreshed;
        auto fresh = layouts_.ChunkFor(st, index);
        if (!fresh.ok()) return fresh.status();
        if (!*fresh) return size_t{0};
        chunk = std::move(*fresh);
        n = ReadReplica(st, r, chunk->cap, offset_in_chunk, buf, direct, last_resort);
      }
      if (n.ok()) {
        if (idx > 0) stats_.replica_failovers++;
        data_.Reachable(r.node);
        return n;
      }
      last = n.status();
      if (rpc::IsTransportError(last.code())) data_.Unreachable(r.node);
      if (last.code() == StatusCode::kDataChecksum) stats_.checksum_errors++;
      if (replicas.size() == 1) break;
      if (Damaged(last.code())) {
        ReportReplica(r,
                      last.code() == StatusCode::kDataChecksum ? ReplicaProblem::kChecksum
                                                               : ReplicaProblem::kStale,
                      last);
      } else if (rpc::IsTransportError(last.code())) {
        ReportReplica(r, ReplicaProblem::kUnreachable, last);
      } else {
        break;  // e.g. a permission or argument error: another replica would say the same
      }
    }
    return std::nullopt;
  };
  if (auto n = round(order, /*wait_last=*/false)) return *n;
  auto failed = [&] { return rpc::IsTransportError(last.code()) || Damaged(last.code()); };
  if (last.code() == StatusCode::kDataChecksum)
    LOG_ERROR("inode {} chunk #{}: {}", st.ino, index, last.ToString());
  if (!failed()) return last;
  if (!has_cells && !has_object) {
    // The layout may predate the chunk's cells, its copy in the object tier
    // or a repaired replica (a file open since before): asked again once
    // before waiting for a node.
    if (layouts_.Refresh(st, index, 1).ok()) {
      auto fresh = layouts_.ChunkFor(st, index);
      if (fresh.ok() && *fresh) {
        chunk = std::move(*fresh);
        weigh();
      }
    }
    if (!has_cells && !has_object) {
      if (auto n = round(ReadOrder(chunk->info.replicas, rank), /*wait_last=*/true)) return *n;
      return last;
    }
  }
  Result<size_t> n = fallback();
  if (n.ok()) return n;
  LOG_WARN("inode {} chunk #{}: {} (after: {})", st.ino, index, n.status().ToString(),
           last.ToString());
  return last;
}

bool CanStageBack(const ChunkInfo& chunk, bool session_wrote) {
  const uint64_t committed = CommittedVersion(chunk);
  return !session_wrote && committed != 0 && chunk.object_version == committed &&
         !chunk.object_readers.empty();
}

Status ReplicaIo::Write(InodeState& st, const CachedChunk& chunk, uint64_t offset_in_chunk,
                        std::span<const std::byte> data, uint64_t version, bool direct) {
  const ChunkId chunk_id = chunk.info.replicas.front().chunk;
  bool session_wrote = false;
  std::vector<ReplicaInfo> targets = WriteTargets(st, chunk, &session_wrote);
  if (targets.empty() && !session_wrote && Offloaded(chunk.info)) {
    // Offloaded (keep-local=drop|pressure): staged back first.
    const uint64_t index = chunk.info.index;
    ASSIGN_OR_RETURN(CachedChunk back,
                     Recall(st.ino, chunk, [&]() -> Result<std::optional<CachedChunk>> {
                       RETURN_IF_ERROR(layouts_.Refresh(st, index, 1));
                       return layouts_.ChunkFor(st, index);
                     }));
    targets = WriteTargets(st, back, nullptr);
    return WriteTo(st, back, targets, offset_in_chunk, data, version, direct, /*wait=*/true);
  }
  if (targets.empty()) {
    return Status(
        StatusCode::kIoError,
        fmt::format("chunk {} of inode {}: no replica can take writes", chunk_id, st.ino));
  }
  // Bytes this session wrote since its commit are on these replicas only:
  // nothing else can take the write.
  if (session_wrote) {
    return WriteTo(st, chunk, targets, offset_in_chunk, data, version, direct, /*wait=*/true);
  }
  Status written =
      WriteTo(st, chunk, targets, offset_in_chunk, data, version, direct, /*wait=*/false);
  if (written.ok() || !rpc::IsTransportError(written.code())) return written;
  // No replica answers. When the bucket holds the committed version, meta
  // stages the chunk back (a lost node is not waited for). The layout may
  // predate the chunk's copy there (a file open since before its upload):
  // asked again once.
  CachedChunk current = chunk;
  if (!CanStageBack(current.info, false) && layouts_.Refresh(st, chunk.info.index, 1).ok()) {
    auto fresh = layouts_.ChunkFor(st, chunk.info.index);
    if (fresh.ok() && *fresh && !(*fresh)->info.replicas.empty() &&
        (*fresh)->info.replicas.front().chunk == chunk_id) {
      current = std::move(**fresh);
    }
  }
  if (CanStageBack(current.info, false)) {
    return StageBack(st, current, targets, offset_in_chunk, data, version, direct, written);
  }
  // Nothing to stage back: a single replica's node is waited for (a restart
  // ridden out); with several, the write failed on every one of them.
  if (targets.size() > 1) return written;
  return WriteTo(st, chunk, targets, offset_in_chunk, data, version, direct, /*wait=*/true);
}

std::vector<ReplicaInfo> ReplicaIo::WriteTargets(InodeState& st, const CachedChunk& chunk,
                                                 bool* session_wrote) {
  const ChunkId chunk_id = chunk.info.replicas.front().chunk;
  // The replicas this session writes: the healthy ones at its first write,
  // minus any that failed since.
  std::vector<ReplicaInfo> targets;
  std::lock_guard lock(st.mu);
  auto it = st.written_nodes.find(chunk_id);
  const bool restricted = it != st.written_nodes.end() && !it->second.empty();
  if (session_wrote != nullptr) *session_wrote = restricted;
  for (const ReplicaInfo& r : chunk.info.replicas) {
    if (!Healthy(r)) continue;
    if (restricted && std::find(it->second.begin(), it->second.end(), r.node) == it->second.end())
      continue;
    targets.push_back(r);
  }
  return targets;
}

Status ReplicaIo::WriteTo(InodeState& st, const CachedChunk& chunk,
                          const std::vector<ReplicaInfo>& targets, uint64_t offset_in_chunk,
                          std::span<const std::byte> data, uint64_t version, bool direct,
                          bool wait) {
  const ChunkId chunk_id = chunk.info.replicas.front().chunk;
  std::vector<ReplicaInfo> remote;
  const ReplicaInfo* local = nullptr;
  for (const ReplicaInfo& r : targets) {
    if (IsLocal(r)) {
      local = &r;
    } else {
      remote.push_back(r);
    }
  }
  // One replica: nobody to fail over to, so ride out a restart (`wait`).
  const bool ride_out = wait && targets.size() == 1;
  Status local_status;
  auto write_local = [&] {
    if (local == nullptr) return false;
    auto file = LocalFile(st, *local, chunk.cap, true, direct, /*retry=*/ride_out);
    local_status = file.ok() ? (*file)->Write(offset_in_chunk, data, version) : file.status();
    if (local_status.ok()) stats_.local_write_bytes += data.size();
    return local_status.ok();
  };
  std::vector<Status> remote_status;
  if (targets.size() == 1 && local == nullptr) {
    remote_status.push_back(
        data_.Write(remote.front(), chunk.cap, offset_in_chunk, data, version, /*retry=*/ride_out));
  } else if (remote.empty()) {
    (void)write_local();  // the only replica is this node's: no network at all
  } else {
    // Sends to the remote replicas, writes the local one meanwhile, then waits.
    remote_status =
        data_.WriteMany(remote, chunk.cap, offset_in_chunk, data, version,
                        local != nullptr ? std::function<bool()>(write_local) : nullptr);
  }
  ReplicaOutcome outcome;
  auto account = [&](const ReplicaInfo& r, const Status& s) {
    if (s.code() == StatusCode::kStale) {
      // No file at the layout's version on that node: meta repairs it (or
      // ignores the report when the layout was stale, e.g. an offloaded row).
      Status reported = meta_.ReportReplica(r, ReplicaProblem::kStale, s);
      if (!reported.ok())
        LOG_WARN("reporting chunk {} on node {}: {}", r.chunk, r.node, reported.ToString());
    }
    if (!outcome.Note(data_, r, s) && targets.size() > 1) {
      stats_.replica_write_failures++;
      uint64_t held = 0;
      if (write_warnings_.Allow(&held)) {
        LOG_WARN("chunk {} on node {} missed a write ({}); it will be repaired{}", r.chunk, r.node,
                 s.ToString(), LogLimit::HeldBackNote(held));
      }
    }
  };
  if (local != nullptr) account(*local, local_status);
  for (size_t idx = 0; idx < remote.size(); ++idx) {
    if (remote_status[idx].ok()) stats_.remote_write_bytes += data.size();
    account(remote[idx], remote_status[idx]);
  }
  if (outcome.took.empty()) return outcome.first_error;
  std::lock_guard lock(st.mu);
  st.written_nodes[chunk_id] = outcome.took;
  st.unsynced[chunk_id] = chunk.info.index;
  return Status::Ok();
}

Status ReplicaIo::Sync(InodeState& st) {
  std::unordered_map<ChunkId, uint64_t> unsynced;
  {
    std::lock_guard lock(st.mu);
    unsynced.swap(st.unsynced);
  }
  for (auto& [chunk_id, index] : unsynced) {
    Status result = SyncChunk(st, chunk_id, index);
    if (!result.ok()) {
      std::lock_guard lock(st.mu);
      st.unsynced.emplace(chunk_id, index);  // fsync again next time
      return result;
    }
  }
  return Status::Ok();
}

Status ReplicaIo::SyncChunk(InodeState& st, ChunkId chunk_id, uint64_t index) {
  ASSIGN_OR_RETURN(std::optional<CachedChunk> chunk, layouts_.ChunkFor(st, index));
  if (!chunk) return Status::Ok();
  std::vector<NodeId> nodes;
  {
    std::lock_guard lock(st.mu);
    auto it = st.written_nodes.find(chunk_id);
    if (it != st.written_nodes.end()) nodes = it->second;
  }
  const ReplicaInfo* local = nullptr;
  std::vector<ReplicaInfo> remote;
  for (const ReplicaInfo& r : chunk->info.replicas) {
    if (!nodes.empty() && std::find(nodes.begin(), nodes.end(), r.node) == nodes.end()) continue;
    if (!Healthy(r)) continue;
    if (IsLocal(r)) {
      local = &r;
    } else {
      remote.push_back(r);
    }
  }
  Status local_status;
  auto sync_local = [&] {
    if (local == nullptr) return false;
    for (bool direct : {false, true}) {
      std::shared_ptr<ChunkFile> file;
      {
        std::lock_guard lock(st.mu);
        auto it = st.local_files.find(std::make_pair(local->chunk.value(), direct));
        if (it != st.local_files.end()) file = it->second.file;
      }
      if (file && local_status.ok()) local_status = file->Sync();
    }
    return local_status.ok();
  };
  std::vector<Status> remote_status;
  if (remote.empty()) {
    (void)sync_local();
  } else if (remote.size() == 1 && local == nullptr) {
    remote_status.push_back(data_.Sync(remote.front(), chunk->cap));  // the only one: waited for
  } else {
    remote_status = data_.SyncMany(remote, chunk->cap,
                                   local != nullptr ? std::function<bool()>(sync_local) : nullptr);
  }
  // Synced where it could be: a replica that did not sync leaves the
  // session's write set (the commit marks it stale, and repair copies it
  // from one that did), as a replica that missed a write does.
  ReplicaOutcome synced;
  if (local != nullptr) synced.Note(data_, *local, local_status);
  for (size_t idx = 0; idx < remote.size(); ++idx)
    synced.Note(data_, remote[idx], remote_status[idx]);
  if (synced.took.empty()) return synced.first_error;
  if (!synced.first_error.ok()) {
    stats_.replica_write_failures++;
    uint64_t held = 0;
    if (sync_warnings_.Allow(&held)) {
      LOG_WARN("chunk {}: fsync reached {} of {} replica(s) ({}); the others will be repaired{}",
               chunk_id, synced.took.size(), remote.size() + (local != nullptr ? 1 : 0),
               synced.first_error.ToString(), LogLimit::HeldBackNote(held));
    }
    std::lock_guard lock(st.mu);
    st.written_nodes[chunk_id] = synced.took;
  }
  return Status::Ok();
}

}  // namespace t0fs::client
