// The node side of RepairPlanner (repair.h): the commands a data node
// takes with its heartbeat answer, the chunk checks it is asked for, and
// what its heartbeats report back (copies finished or lost, bad replicas).
#include <fmt/format.h>

#include <algorithm>

#include "common/logging.h"
#include "meta/repair.h"

namespace t0fs::meta {
namespace {
constexpr auto kUnconfirmed =
    std::chrono::seconds(10);  // a sent copy the node does not list is lost
}  // namespace

std::vector<pb::NodeCommand> RepairPlanner::TakeCommands(NodeId node) {
  std::vector<pb::NodeCommand> out;
  bool check = false;
  {
    std::lock_guard lock(mu_);
    auto& q = queued_[node];
    auto now = Clock::now();
    while (!q.empty()) {
      auto it = tasks_.find(ChunkId(q.front().chunk()));
      if (it != tasks_.end()) it->second.sent = now;
      out.push_back(std::move(q.front()));
      q.pop_front();
    }
    check = check_wanted_[node];
    check_wanted_[node] = false;
  }
  if (check) {
    for (pb::NodeCommand& cmd : CheckCommands(node)) out.push_back(std::move(cmd));
  }
  return out;
}

std::vector<pb::NodeCommand> RepairPlanner::CheckCommands(NodeId node) {
  constexpr int kPerCommand = 5000;
  std::vector<pb::NodeCommand> out;
  size_t total = 0;
  for (ChunkId after;;) {
    bool eof = false;
    auto page = store_.ScanReplicas(after, kScanPage, &eof);
    if (!page.ok()) {
      LOG_WARN("check of node {}: {}", node, page.status().ToString());
      RequestCheck(node);  // try again with the next heartbeat
      return {};
    }
    for (const ChunkReplicas& c : *page) {
      after = c.chunk;
      for (const Replica& r : c.replicas) {
        if (r.node != node || r.state != ReplicaState::kHealthy || r.version == 0) continue;
        if (out.empty() || out.back().expected_size() == kPerCommand) {
          out.emplace_back().set_kind(pb::COMMAND_CHECK);
        }
        pb::InventoryItem* item = out.back().add_expected();
        item->set_chunk(c.chunk.value());
        item->set_version(r.version);
        item->set_volume(r.volume.value());
        ++total;
      }
    }
    if (eof || page->empty()) break;
  }
  // One command even for a node that should hold nothing: receiving it is
  // what ends the node's HeartbeatReq.awaiting_check.
  if (out.empty()) out.emplace_back().set_kind(pb::COMMAND_CHECK);
  LOG_INFO("node {}: checking its {} committed replica(s) against their versions", node, total);
  return out;
}

void RepairPlanner::RequestCheck(NodeId node) {
  std::lock_guard lock(mu_);
  check_wanted_[node] = true;
}

void RepairPlanner::OnHeartbeat(NodeId node, const pb::HeartbeatReq& beat) {
  std::vector<pb::CopyResult> finished;
  {
    std::lock_guard lock(mu_);
    auto now = Clock::now();
    // Bytes received by this node's copies, for the rate.
    uint64_t total = beat.copied_bytes_total();
    uint64_t& last = node_bytes_[node];
    uint64_t delta = total >= last ? total - last : total;  // a restarted node counts from 0
    last = total;
    if (delta > 0) {
      stats_.copied_bytes += delta;
      rate_window_.emplace_back(now, delta);
    }
    while (!rate_window_.empty() && now - rate_window_.front().first > std::chrono::minutes(1)) {
      rate_window_.pop_front();
    }
    // Sent copies the node neither lists nor reports: lost (it restarted).
    std::vector<uint64_t> running(beat.copying().begin(), beat.copying().end());
    for (auto& [chunk, t] : tasks_) {
      bool reported = std::any_of(beat.copies().begin(), beat.copies().end(),
                                  [&](const pb::CopyResult& r) { return r.id() == t.id; });
      bool listed = std::find(running.begin(), running.end(), t.id) != running.end();
      if (t.target == node && listed && delta > 0) t.progressed = now;  // the node's copies move
      if (t.target == node && t.sent != Clock::time_point{} && !reported && !listed &&
          now - t.sent > kUnconfirmed) {
        pb::CopyResult lost;
        lost.set_id(t.id);
        lost.set_chunk(t.chunk.value());
        lost.set_ok(false);
        lost.set_error("the node no longer runs this copy");
        finished.push_back(lost);
      }
    }
    for (const pb::CopyResult& r : beat.copies()) finished.push_back(r);
  }
  for (const pb::CopyResult& r : finished) {
    ChunkId chunk(r.chunk());
    Task task;
    {
      std::lock_guard lock(mu_);
      auto it = tasks_.find(chunk);
      if (it == tasks_.end() || it->second.id != r.id()) continue;  // expired meanwhile
      task = std::move(it->second);
      tasks_.erase(it);
    }
    if (task.kind != Task::kCopy) {
      OnProtectResult(node, task, r);
      continue;
    }
    Status st = r.ok() ? store_.CompleteReplica(chunk, node, r.version())
                       : Status(StatusCode::kIoError, r.error());
    std::lock_guard lock(mu_);
    if (st.ok()) {
      ++stats_.copies_done;
      sourceless_pauses_.erase(chunk);
      LOG_DEBUG("repair: chunk {} copied to node {} ({} bytes, version {})", chunk, node, r.bytes(),
                r.version());
    } else if (task.source != Task::kPeer) {
      ++stats_.copies_failed;
      UploadPause& pause = sourceless_pauses_[chunk];
      pause.backoff = std::min<std::chrono::seconds>(
          kMaxSourcelessPause,
          std::max<std::chrono::seconds>(std::chrono::seconds(1), 2 * pause.backoff));
      pause.until = Clock::now() + pause.backoff;
      LOG_WARN("repair: {} of chunk {} to node {} failed: {}; next attempt in {} s",
               task.source == Task::kObjectTier ? "recall" : "rebuild", chunk, node, st.ToString(),
               pause.backoff.count());
      (void)store_.SetReplicaState(chunk, node, ReplicaState::kStale);
    } else {
      ++stats_.copies_failed;
      LOG_WARN("repair: copy of chunk {} to node {} failed: {}", chunk, node, st.ToString());
      (void)store_.SetReplicaState(chunk, node, ReplicaState::kStale);
    }
  }
  for (const pb::ReplicaProblem& p : beat.problems()) {
    if (const ChunkId id(p.chunk()); ec::IsCellId(id)) {
      LOG_ERROR(
          "node {} reports cell {} of chunk {} bad ({}); dropping it to be made again from the "
          "chunk",
          node, ec::CellOfId(id), ec::ChunkOfCell(id), p.detail());
      Status st = store_.DropEcCell(ec::ChunkOfCell(id), ec::CellOfId(id), node, 0);
      if (!st.ok()) LOG_WARN("repair: dropping a bad cell: {}", st.ToString());
      continue;
    }
    LOG_ERROR("node {} reports its replica of chunk {} bad ({}); marking it stale for repair", node,
              p.chunk(), p.detail());
    (void)store_.SetReplicaState(ChunkId(p.chunk()), node, ReplicaState::kStale);
  }
}

}  // namespace t0fs::meta
