// The protection half of RepairPlanner (repair.h): the uploads of
// protect=object and the encodes and parity checks of protect=ec, which a
// node runs from a replica of its own, the pause of a node whose uploads or encodes fail, and
// the rights signed for copies.
#include <fmt/format.h>

#include <algorithm>

#include "common/capability.h"
#include "common/logging.h"
#include "ec/cells.h"
#include "ec/stripe_layout.h"
#include "meta/placement.h"
#include "meta/repair.h"

namespace t0fs::meta {
namespace {
// The slowest copy a read right is signed for (far below any link meant to
// carry repair): a copy of N bytes gets max(copy-timeout, N / this).
constexpr uint64_t kMinCopyRate = 16u << 20;

// The unit of a new ec:K+M stripe: a chunk spread over its K data cells in
// whole pages, at most ec::kDefaultUnit.
uint64_t EcUnit(uint64_t chunk_size, uint32_t k) {
  const uint64_t share = (chunk_size / k + ec::kUnitAlign - 1) / ec::kUnitAlign * ec::kUnitAlign;
  return std::clamp<uint64_t>(share, ec::kUnitAlign, ec::kDefaultUnit);
}

// A command run by `source`'s node on its replica at `version`.
pb::NodeCommand ReplicaCommand(uint64_t id, pb::NodeCommandKind kind, ChunkId chunk,
                               const Replica& source, uint64_t version) {
  pb::NodeCommand cmd;
  cmd.set_id(id);
  cmd.set_kind(kind);
  cmd.set_chunk(chunk.value());
  cmd.set_volume(source.volume.value());
  cmd.set_version(version);
  return cmd;
}
}  // namespace

std::chrono::seconds RepairPlanner::PauseNode(NodeId node) {
  UploadPause& pause = upload_pauses_[node];
  pause.backoff = std::min<std::chrono::seconds>(
      kMaxUploadPause, std::max<std::chrono::seconds>(std::chrono::seconds(1), 2 * pause.backoff));
  pause.until = Clock::now() + pause.backoff;
  return pause.backoff;
}

pb::Capability RepairPlanner::CopyCap(ChunkId chunk, uint32_t rights, uint64_t bytes) const {
  const uint64_t cap_ms = std::max<uint64_t>(
      static_cast<uint64_t>(config_.copy_timeout.value.count()), bytes / (kMinCopyRate / 1000));
  Capability cap = SignCapability(cap_key_, chunk, rights, WallMillis() + cap_ms);
  pb::Capability out;
  out.set_mac(cap.mac);
  out.set_expiry_ms(cap.expiry_ms);
  out.set_rights(cap.rights);
  return out;
}

void RepairPlanner::PlanEncode(const ChunkReplicas& c, uint64_t committed,
                               const ec::EcStripe& stripe,
                               const std::vector<const Replica*>& sources,
                               const std::map<NodeId, Choice>& nodes) {
  const Protection& p = c.objective.protect;
  const uint32_t cells = p.copies + p.parity;
  // Keep the cells of the same code and version on nodes not lost; make
  // the others.
  ec::EcStripe made{p.copies,  p.parity, EcUnit(c.chunk_size, p.copies),
                    committed, 0,        std::vector<ec::CellPlace>(cells)};
  std::vector<uint32_t> wanted;
  std::vector<NodeId> holding;  // nodes with a kept cell: each cell on its own node
  const bool same = stripe.k == made.k && stripe.m == made.m && stripe.version == committed &&
                    stripe.cells.size() == cells;
  if (same) made.unit = stripe.unit;
  for (uint32_t i = 0; i < cells; ++i) {
    if (same) {
      auto it = nodes.find(stripe.cells[i].node);
      if (it != nodes.end() && !it->second.lost) {
        holding.push_back(stripe.cells[i].node);
        continue;
      }
    }
    wanted.push_back(i);
  }
  if (wanted.empty()) return;
  const Replica* source = FreeSource(sources, committed, nodes);
  if (source == nullptr) return;  // a later pass
  const Clock::time_point now = Clock::now();
  std::vector<NodeChoice> choices;
  for (const auto& [id, n] : nodes) {
    choices.push_back(NodeChoice{n.record, n.usable, 0, n.health == Health::kSuspect});
  }
  PlacementRequest req;
  req.replicas = static_cast<uint32_t>(wanted.size());
  req.placement = Placement::kSpread;
  req.allowed = c.objective.nodes;
  req.chunk_size = c.chunk_size / p.copies;
  req.exclude = holding;
  auto targets = ChooseTargets(choices, req);
  if (!targets.ok() || targets->size() < wanted.size()) {
    if (now - ec_short_logged_ >= std::chrono::minutes(1)) {
      ec_short_logged_ = now;
      LOG_WARN(
          "protect: chunk {} (file inode {}) needs {} more node(s) for its ec:{}+{} cells (each "
          "cell on its own usable node); it waits: {}",
          c.chunk, c.ino, wanted.size(), p.copies, p.parity,
          targets.ok() ? "not enough nodes" : targets.status().ToString());
    }
    return;
  }
  Task task{next_task_id_++, c.chunk, source->node, now, {}, now, Task::kEncode, {}};
  pb::NodeCommand cmd = ReplicaCommand(task.id, pb::COMMAND_EC_ENCODE, c.chunk, *source, committed);
  cmd.mutable_ec()->set_k(made.k);
  cmd.mutable_ec()->set_m(made.m);
  cmd.mutable_ec()->set_unit(made.unit);
  for (size_t j = 0; j < wanted.size(); ++j) {
    const ReplicaTarget& t = (*targets)[j];
    made.cells[wanted[j]] = ec::CellPlace{t.node, t.volume};
    pb::EcCell* cell = cmd.add_ec_cells();
    cell->set_cell(wanted[j]);
    cell->set_node(t.node.value());
    cell->set_address(nodes.at(t.node).record->address);
    cell->set_volume(t.volume.value());
    *cell->mutable_cap() =
        CopyCap(ec::CellChunkId(c.chunk, wanted[j]), kCapWrite, ChunkBytes(c) / p.copies);
  }
  if (Status st = store_.WithdrawEcGarbage(c.chunk, made); !st.ok()) {
    LOG_WARN("protect: chunk {}: {}; its encode waits", c.chunk, st.ToString());
    return;
  }
  task.made = std::move(made);
  tasks_[c.chunk] = std::move(task);
  queued_[source->node].push_back(std::move(cmd));
  LOG_DEBUG("protect: chunk {} version {}: encode {} of {} cells from node {}", c.chunk, committed,
            wanted.size(), cells, source->node);
}

std::optional<RepairPlanner::Clock::time_point> RepairPlanner::VerifyDueSince(
    const ChunkReplicas& c) {
  const auto interval = config_.ec_verify_interval.value;
  if (interval.count() <= 0) return std::nullopt;
  // Counted from when this meta first saw the stripe complete: a meta that
  // starts does not check every stripe of the cluster at once.
  const Clock::time_point now = Clock::now();
  auto seen = ec_checked_.find(c.chunk);
  const Clock::time_point checked = seen != ec_checked_.end() ? seen->second : now;
  pass_.ec_checked[c.chunk] = checked;
  if (now - checked < interval) return std::nullopt;
  return checked;
}

void RepairPlanner::PlanVerify(const VerifyDue& due, const std::map<NodeId, Choice>& nodes) {
  const ChunkReplicas& c = due.chunk;
  const ec::EcStripe& stripe = due.stripe;
  if (tasks_.count(c.chunk) != 0) return;
  const uint64_t limit = std::max<uint32_t>(1, config_.copies_per_node);
  // A node that may run the check now: up, not checking another stripe,
  // below its share of tasks.
  const auto free_to_check = [&](NodeId id) {
    auto node = nodes.find(id);
    if (node == nodes.end() || node->second.health != Health::kUp) return false;
    uint64_t load = 0;
    for (auto& [chunk, task] : tasks_) {
      if (task.target != id) continue;
      if (task.kind == Task::kVerify) return false;
      ++load;
    }
    return load + (limit > 1 ? 1 : 0) < limit;
  };
  std::optional<Replica> source;
  for (const Replica& r : c.replicas) {
    if (r.state == ReplicaState::kHealthy && r.version == due.committed && free_to_check(r.node)) {
      source = r;
      break;
    }
  }
  // No replica (keep-local=drop|pressure offloaded every one): a node of a
  // data cell reads the data from the k data cells and checks the parity
  // cells against their code.
  const bool offloaded = !c.replicas.empty() &&
                         std::all_of(c.replicas.begin(), c.replicas.end(), [](const Replica& r) {
                           return r.state == ReplicaState::kOffloaded;
                         });
  if (!source && offloaded) {
    for (uint32_t i = 0; i < stripe.k && i < stripe.cells.size(); ++i) {
      if (free_to_check(stripe.cells[i].node)) {
        source = Replica{stripe.cells[i].node, stripe.cells[i].volume, c.chunk, due.committed,
                         ReplicaState::kHealthy};
        break;
      }
    }
  }
  if (!source) return;  // a later pass
  for (const ec::CellPlace& place : stripe.cells) {
    if (nodes.count(place.node) == 0) return;
  }
  const Clock::time_point now = Clock::now();
  Task task{next_task_id_++, c.chunk, source->node, now, {}, now, Task::kVerify, stripe};
  pb::NodeCommand cmd =
      ReplicaCommand(task.id, pb::COMMAND_EC_VERIFY, c.chunk, *source, due.committed);
  cmd.set_from_cells(offloaded);
  std::vector<uint32_t> every(stripe.cells.size());
  for (uint32_t i = 0; i < every.size(); ++i) every[i] = i;
  AddCellsToRead(cmd, c.chunk, stripe, every, nodes);
  tasks_[c.chunk] = std::move(task);
  queued_[source->node].push_back(std::move(cmd));
  LOG_DEBUG("protect: chunk {} version {}: parity check of its {} cells by node {}{}", c.chunk,
            due.committed, stripe.cells.size(), source->node,
            cmd.from_cells() ? " (offloaded: from its data cells)" : "");
}

void RepairPlanner::AddCellsToRead(pb::NodeCommand& cmd, ChunkId chunk, const ec::EcStripe& stripe,
                                   const std::vector<uint32_t>& cells,
                                   const std::map<NodeId, Choice>& nodes) const {
  cmd.mutable_ec()->set_k(stripe.k);
  cmd.mutable_ec()->set_m(stripe.m);
  cmd.mutable_ec()->set_unit(stripe.unit);
  cmd.mutable_ec()->set_length(stripe.length);
  for (uint32_t i : cells) {
    const ec::CellPlace& place = stripe.cells[i];
    pb::EcCell* cell = cmd.add_ec_cells();
    cell->set_cell(i);
    cell->set_node(place.node.value());
    cell->set_address(nodes.at(place.node).record->address);
    cell->set_volume(place.volume.value());
    *cell->mutable_cap() = CopyCap(ec::CellChunkId(chunk, i), kCapRead, stripe.length);
  }
}

void RepairPlanner::PlanUpload(const ChunkReplicas& c, uint64_t committed,
                               const std::vector<const Replica*>& sources,
                               const std::map<NodeId, Choice>& nodes) {
  const Replica* source = FreeSource(sources, committed, nodes);
  if (source != nullptr) {
    const Clock::time_point now = Clock::now();
    Task task{next_task_id_++, c.chunk, source->node, now, {}, now, Task::kUpload, {}};
    tasks_[c.chunk] = task;
    pb::NodeCommand cmd = ReplicaCommand(task.id, pb::COMMAND_UPLOAD, c.chunk, *source, committed);
    cmd.set_object_key(object_tier_->Key(c.chunk, committed));
    queued_[source->node].push_back(std::move(cmd));
    LOG_DEBUG("protect: chunk {} version {}: upload from node {}", c.chunk, committed,
              source->node);
  }
}

const Replica* RepairPlanner::FreeSource(const std::vector<const Replica*>& sources,
                                         uint64_t committed,
                                         const std::map<NodeId, Choice>& nodes) {
  const uint32_t per_node_limit = std::max<uint32_t>(1, config_.copies_per_node);
  const Clock::time_point now = Clock::now();
  for (const Replica* r : sources) {
    if (r->version != committed || nodes.at(r->node).health != Health::kUp) continue;
    if (auto paused = upload_pauses_.find(r->node);
        paused != upload_pauses_.end() && now < paused->second.until) {
      continue;
    }
    uint64_t load = 0;
    for (auto& [chunk, task] : tasks_) load += task.target == r->node;
    if (load < per_node_limit) return r;
  }
  return nullptr;
}

void RepairPlanner::OnProtectResult(NodeId node, Task& task, const pb::CopyResult& r) {
  const ChunkId chunk(r.chunk());
  if (task.kind == Task::kVerify) {
    const ec::EcStripe& stripe = task.made;
    for (uint32_t cell : r.bad_cells()) {
      if (cell >= stripe.cells.size()) continue;
      LOG_ERROR(
          "protect: parity check by node {}: cell {} of chunk {} version {} on node {} is not the "
          "code of the chunk's data; dropping it to be made again",
          node, cell, chunk, stripe.version, stripe.cells[cell].node);
      Status st = store_.DropEcCell(chunk, cell, stripe.cells[cell].node, stripe.version);
      if (!st.ok()) LOG_WARN("protect: dropping a bad cell: {}", st.ToString());
    }
    std::lock_guard lock(mu_);
    const Clock::time_point now = Clock::now();
    ec_checked_[chunk] = now;
    if (auto it = pass_.ec_checked.find(chunk); it != pass_.ec_checked.end()) it->second = now;
    if (!r.ok()) {
      ++stats_.ec_verifies_failed;
      LOG_WARN("protect: parity check of chunk {} by node {} failed: {}; next in {}", chunk, node,
               r.error(), FormatDuration(config_.ec_verify_interval));
    } else if (r.bad_cells_size() > 0) {
      ++stats_.ec_verifies_mismatch;
      stats_.ec_bad_cells += static_cast<uint64_t>(r.bad_cells_size());
    } else {
      ++stats_.ec_verifies_clean;
    }
    return;
  }
  if (task.kind == Task::kEncode) {
    task.made.length = r.bytes();
    Status st = store_.RecordEcCells(chunk, task.made, r.ok());
    if (st.ok() && !r.ok()) st = Status(StatusCode::kIoError, r.error());
    std::lock_guard lock(mu_);
    if (st.ok()) {
      ++stats_.ec_encodes_done;
      upload_pauses_.erase(node);
      LOG_DEBUG("protect: chunk {} version {}: {} erasure-coded cell(s) written by node {}", chunk,
                r.version(), task.made.placed(), node);
      return;
    }
    ++stats_.ec_encodes_failed;
    const std::chrono::seconds paused = PauseNode(node);
    LOG_WARN("protect: encode of chunk {} by node {} failed: {}; its encodes pause {}s", chunk,
             node, st.ToString(), paused.count());
    return;
  }
  if (task.kind == Task::kUpload) {
    Status st = r.ok() ? store_.SetObjectVersion(chunk, r.version())
                       : Status(StatusCode::kIoError, r.error());
    std::lock_guard lock(mu_);
    if (st.ok()) {
      ++stats_.uploads_done;
      if (upload_failing_) LOG_INFO("protect: uploads to the object tier succeed again");
      upload_failing_ = false;
      upload_pauses_.erase(node);
      LOG_DEBUG("protect: chunk {} version {} in the object tier ({} bytes, node {})", chunk,
                r.version(), r.bytes(), node);
      return;
    }
    ++stats_.uploads_failed;
    PauseNode(node);
    // The first failure after a success, then one line a minute with
    // the count: a bucket that refuses every upload does not flood the
    // log (t0fs status counts what waits).
    ++uploads_failed_unlogged_;
    const Clock::time_point now = Clock::now();
    if (!upload_failing_ || now - upload_failure_logged_ >= kMaxUploadPause) {
      LOG_WARN(
          "protect: upload of chunk {} to the object tier by node {} failed: {} ({} failed "
          "upload(s) since the last line); data stays on the node; its uploads pause (up to {}s "
          "after repeated failures) and retry",
          chunk, node, st.ToString(), uploads_failed_unlogged_, kMaxUploadPause.count());
      upload_failing_ = true;
      upload_failure_logged_ = now;
      uploads_failed_unlogged_ = 0;
    }
    return;
  }
}

}  // namespace t0fs::meta
