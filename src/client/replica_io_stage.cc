// The writes of ReplicaIo (replica_io.h) that wait for meta to stage a chunk
// back: from the object tier when no replica's node answers (StageBack), or
// an offloaded chunk (keep-local=drop|pressure, Recall).
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include "client/replica_io.h"
#include "common/logging.h"
#include "rpc/channel.h"

namespace t0fs::client {

Status ReplicaIo::StageBack(InodeState& st, CachedChunk chunk, std::vector<ReplicaInfo> lost,
                            uint64_t offset_in_chunk, std::span<const std::byte> data,
                            uint64_t version, bool direct, Status last) {
  const ChunkId chunk_id = chunk.info.replicas.front().chunk;
  const uint64_t index = chunk.info.index;
  const auto start = std::chrono::steady_clock::now();
  const auto deadline = data_.RetryDeadline(start);
  stats_.stage_back_requests++;
  LOG_WARN(
      "inode {} chunk #{}: no replica takes the write ({}); asking meta to recall chunk {} from "
      "the object "
      "tier (version {}) and waiting for the new replica for up to {}",
      st.ino, index, last.ToString(), chunk_id, chunk.info.object_version,
      FormatDuration(
          Duration{std::chrono::duration_cast<std::chrono::milliseconds>(deadline - start)}));
  for (;;) {
    // Meta acts only once the nodes miss their heartbeats: asked again each
    // round (idempotent there).
    for (const ReplicaInfo& r : lost) {
      Status asked = meta_.ReportReplica(r, ReplicaProblem::kWriterWaits, last);
      if (!asked.ok())
        LOG_DEBUG("asking meta to stage chunk {} back: {}", chunk_id, asked.ToString());
    }
    if (std::chrono::steady_clock::now() + kStageBackPoll >= deadline) return last;
    std::this_thread::sleep_for(kStageBackPoll);
    Status refreshed = layouts_.Refresh(st, index, 1);
    if (!refreshed.ok()) {
      last = refreshed;
      continue;
    }
    ASSIGN_OR_RETURN(std::optional<CachedChunk> fresh, layouts_.ChunkFor(st, index));
    if (!fresh || fresh->info.replicas.empty() || fresh->info.replicas.front().chunk != chunk_id) {
      return Status(
          StatusCode::kIoError,
          fmt::format("inode {} chunk #{}: chunk {} left the layout while a write waited for it",
                      st.ino, index, chunk_id));
    }
    chunk = std::move(*fresh);
    // Every healthy replica (a recalled one, the lost node back), or, when
    // another File of the inode wrote meanwhile, the ones it wrote.
    std::vector<ReplicaInfo> targets = WriteTargets(st, chunk, nullptr);
    if (targets.empty()) continue;
    Status written =
        WriteTo(st, chunk, targets, offset_in_chunk, data, version, direct, /*wait=*/false);
    if (written.ok()) {
      LOG_INFO("inode {} chunk #{}: the write went to a replica after {} ms", st.ino, index,
               std::chrono::duration_cast<std::chrono::milliseconds>(
                   std::chrono::steady_clock::now() - start)
                   .count());
      return written;
    }
    if (!rpc::IsTransportError(written.code())) return written;
    last = written;
    lost = std::move(targets);
  }
}

Result<CachedChunk> ReplicaIo::Recall(InodeId ino, const CachedChunk& chunk,
                                      const FetchChunk& fetch) {
  const ChunkId chunk_id = chunk.info.replicas.front().chunk;
  const uint64_t index = chunk.info.index;
  const auto start = std::chrono::steady_clock::now();
  const auto deadline = data_.RetryDeadline(start);
  stats_.recall_requests++;
  LOG_INFO("inode {} chunk #{}: chunk {} is offloaded (version {}); asking meta to stage it back",
           ino, index, chunk_id, CommittedVersion(chunk.info));
  Status last(StatusCode::kIoError,
              fmt::format("inode {} chunk #{}: chunk {} is offloaded and was not staged back "
                          "within the retry timeout",
                          ino, index, chunk_id));
  CachedChunk current = chunk;
  // Meta plans at once (a pass as soon as it is asked); the node takes the
  // copy with its next heartbeat: looked for every 100-250 ms.
  std::chrono::milliseconds poll{100};
  for (;;) {
    // Asked again each round: the mark lasts RepairPlanner::kRecallFor (10 s).
    for (const ReplicaInfo& r : current.info.replicas) {
      if (r.state != ReplicaState::kOffloaded) continue;
      Status asked = meta_.ReportReplica(r, ReplicaProblem::kRecall, last);
      if (!asked.ok())
        LOG_DEBUG("asking meta to stage chunk {} back: {}", chunk_id, asked.ToString());
      break;  // one mark per chunk
    }
    if (std::chrono::steady_clock::now() + poll >= deadline) return last;
    std::this_thread::sleep_for(poll);
    poll = std::min<std::chrono::milliseconds>(poll * 2, kRecallPoll);
    auto fresh = fetch();
    if (!fresh.ok()) {
      last = fresh.status();
      continue;
    }
    if (!*fresh || (*fresh)->info.replicas.empty() ||
        (*fresh)->info.replicas.front().chunk != chunk_id) {
      return Status(StatusCode::kIoError,
                    fmt::format("inode {} chunk #{}: chunk {} left the layout while it was "
                                "staged back",
                                ino, index, chunk_id));
    }
    current = std::move(**fresh);
    if (std::any_of(current.info.replicas.begin(), current.info.replicas.end(), Healthy)) {
      LOG_INFO("inode {} chunk #{}: staged back after {} ms", ino, index,
               std::chrono::duration_cast<std::chrono::milliseconds>(
                   std::chrono::steady_clock::now() - start)
                   .count());
      return current;
    }
  }
}

}  // namespace t0fs::client
