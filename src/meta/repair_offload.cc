// keep-local=drop|pressure of RepairPlanner (repair.h): offloading the
// local copies of chunks the tier holds, and choosing them by the fullness
// of their volumes.
#include <fmt/format.h>

#include <algorithm>

#include "common/logging.h"
#include "meta/repair.h"

namespace t0fs::meta {

bool RepairPlanner::Offload(const ChunkReplicas& c, uint64_t committed,
                            const std::vector<const Replica*>& local, bool pressure) {
  bool any = false;
  for (const Replica* r : local) {
    Status st = store_.OffloadReplica(c.chunk, r->node, committed);
    if (st.ok()) {
      any = true;
      LOG_DEBUG("repair: chunk {} (file inode {}) v{}: the copy on node {} is offloaded{}", c.chunk,
                c.ino, committed, r->node, pressure ? " (volume over tier-high-watermark)" : "");
      if (pressure) pressure_freed_[r->volume].emplace_back(Clock::now(), ChunkBytes(c));
    } else if (st.code() == StatusCode::kBusy || st.code() == StatusCode::kStale) {
      LOG_DEBUG("repair: chunk {}: the copy on node {} stays for now: {}", c.chunk, r->node,
                st.message());
    } else {
      LOG_WARN("repair: chunk {}: offloading the copy on node {}: {}", c.chunk, r->node,
               st.ToString());
    }
  }
  if (any) {
    ++pass_.offloads;
    ++stats_.offloads;
    if (pressure) ++stats_.pressure_offloads;
  }
  return any;
}

void RepairPlanner::FindPressure(const std::vector<NodeRecord>& records) {
  const auto now = Clock::now();
  std::lock_guard lock(mu_);
  pressure_need_.clear();
  for (const NodeRecord& n : records) {
    for (const VolumeRecord& v : n.volumes) {
      auto& freed = pressure_freed_[v.volume];
      while (!freed.empty() && now - freed.front().first > kPressureSettle) freed.pop_front();
      if (v.total_bytes == 0) continue;
      uint64_t used = v.total_bytes - std::min(v.total_bytes, v.free_bytes);
      for (const auto& [when, bytes] : freed) used -= std::min(used, bytes);
      // Percent of the volume, in 128-bit products: volumes of any size.
      const auto pct = [&](uint32_t p) {
        return static_cast<uint64_t>(static_cast<unsigned __int128>(v.total_bytes) * p / 100);
      };
      const uint64_t full =
          static_cast<uint64_t>(static_cast<unsigned __int128>(used) * 100 / v.total_bytes);
      if (used <= pct(config_.tier_high_watermark)) {
        if (over_watermark_.erase(v.volume) != 0) {
          LOG_INFO("repair: volume {} of node {} is {}% full, below tier-high-watermark again",
                   v.volume, n.node, full);
        }
        continue;
      }
      pressure_need_[v.volume] = static_cast<int64_t>(used - pct(config_.tier_low_watermark));
      if (over_watermark_.insert(v.volume).second) {
        LOG_INFO(
            "repair: volume {} of node {} is {}% full (tier-high-watermark {}%): offloading "
            "protected keep-local=pressure copies, least recently used first, down to {}%",
            v.volume, n.node, full, config_.tier_high_watermark, config_.tier_low_watermark);
      }
    }
  }
}

void RepairPlanner::NotePressure(const ChunkReplicas& c, uint64_t committed,
                                 const std::vector<const Replica*>& good) {
  if (pressure_need_.empty()) return;
  const bool over = std::any_of(good.begin(), good.end(), [&](const Replica* r) {
    return pressure_need_.count(r->volume) != 0;
  });
  if (!over) return;
  auto& heap = pass_.pressure;
  heap.push_back({LastUse(c), c, committed});
  std::push_heap(heap.begin(), heap.end());
  if (heap.size() > kMaxPressure) {  // the most recently used waits for a later pass
    std::pop_heap(heap.begin(), heap.end());
    heap.pop_back();
  }
}

void RepairPlanner::PlanPressure() {
  auto& heap = pass_.pressure;
  std::sort_heap(heap.begin(), heap.end());  // the least recently used first
  const auto met = [&] {
    return std::all_of(pressure_need_.begin(), pressure_need_.end(),
                       [](const auto& n) { return n.second <= 0; });
  };
  InodeId last;  // the file offloaded last: it goes whole, whatever the needs
  for (const PassCounts::PressureCandidate& cand : heap) {
    const ChunkReplicas& c = cand.chunk;
    const bool rest_of_file = c.ino == last;
    if (!rest_of_file && met()) break;
    std::vector<const Replica*> local;
    bool helps = false;
    for (const Replica& r : c.replicas) {
      if (r.state != ReplicaState::kHealthy || r.version != cand.committed) continue;
      local.push_back(&r);
      auto need = pressure_need_.find(r.volume);
      helps |= rest_of_file || (need != pressure_need_.end() && need->second > 0);
    }
    if (!helps || tasks_.count(c.chunk) != 0) continue;
    if (!Offload(c, cand.committed, local, /*pressure=*/true)) continue;
    last = c.ino;
    for (const Replica* r : local) {
      auto need = pressure_need_.find(r->volume);
      if (need != pressure_need_.end()) need->second -= static_cast<int64_t>(ChunkBytes(c));
    }
  }
  heap.clear();
}

}  // namespace t0fs::meta
