#include "meta/repair.h"

#include <fmt/format.h>

#include <algorithm>

#include "common/capability.h"
#include "common/logging.h"
#include "ec/cells.h"
#include "meta/placement.h"

namespace t0fs::meta {

struct RepairPlanner::Choice {
  const NodeRecord* record = nullptr;
  Health health = Health::kDown;
  bool draining = false;
  bool lost = false;    // down for longer than repair-grace: its replicas are gone
  bool usable = false;  // can take new data: up or suspect, not draining
};

uint64_t RepairPlanner::ChunkBytes(const ChunkReplicas& c) {
  const uint64_t start = c.index * c.chunk_size;
  return c.file_size > start ? std::min(c.chunk_size, c.file_size - start) : 0;
}

namespace {
constexpr size_t kScanPage = 1000;
// Protection copies a pass keeps for after the repairs: the oldest waits.
// More than the copy slots of a pass would ever start.
constexpr size_t kMaxDeferred = 4096;
}  // namespace

RepairPlanner::RepairPlanner(MetaStore& store, NodeHealth& health, const MetaConfig& config,
                             std::string cap_key, const ObjectTier* object_tier)
    : store_(store),
      health_(health),
      config_(config),
      cap_key_(std::move(cap_key)),
      object_tier_(object_tier) {}

uint64_t RepairPlanner::LoadOf(NodeId node) {
  std::lock_guard lock(mu_);
  uint64_t load = 0;
  for (auto& [chunk, task] : tasks_) load += task.target == node;
  return load;
}

bool RepairPlanner::MarkUrgent(ChunkId chunk, std::chrono::seconds lasting) {
  // In the store, not here: the server that plans may be another one.
  const Timespec now = WallNow();
  const Timespec until{now.sec + lasting.count(), now.nsec};
  auto added = store_.MarkUrgent(chunk, until, now, kMaxUrgent);
  if (!added.ok() && added.status().code() == StatusCode::kBusy) {
    LOG_WARN("repair: {} chunks wait for writers already; chunk {} waits for repair-grace",
             kMaxUrgent, chunk);
    return false;
  }
  if (!added.ok()) {
    LOG_WARN("repair: marking chunk {} for its waiting writer: {}; it waits for repair-grace",
             chunk, added.status().ToString());
    return false;
  }
  return *added;
}

void RepairPlanner::RunPass() {
  auto listed = store_.ListNodes();
  if (!listed.ok()) {
    LOG_WARN("repair: cannot list nodes: {}", listed.status().ToString());
    return;
  }
  std::vector<NodeRecord> records = std::move(listed).value();
  std::map<NodeId, Choice> nodes;
  for (const NodeRecord& r : records) {
    Choice c;
    c.record = &r;
    c.health = health_.Of(r.node);
    c.draining = r.admin_state == NodeAdminState::kDraining;
    c.lost = health_.Lost(r.node, config_.repair_grace.value);
    c.usable = c.health != Health::kDown && !c.draining;
    nodes[r.node] = c;
  }
  ExpireTasks();
  FindPressure(records);
  auto urgent = store_.UrgentChunks(WallNow());
  if (!urgent.ok())
    LOG_WARN("repair: reading the chunks writers wait for: {}", urgent.status().ToString());
  bool truncated = false;
  auto newest = store_.KeptNewest(kMaxKeptNewest, &truncated);
  if (!newest.ok())
    LOG_WARN("repair: reading what keep-newest keeps local: {}", newest.status().ToString());
  {
    std::lock_guard lock(mu_);
    pass_ = PassCounts{};
    if (urgent.ok())
      urgent_ =
          std::unordered_set<ChunkId>(urgent->begin(), urgent->end());  // else the last pass's
    if (newest.ok()) {                                                  // else the last pass's
      kept_newest_ = std::unordered_set<InodeId>(newest->begin(), newest->end());
      if (truncated && !kept_newest_truncated_) {
        LOG_WARN(
            "repair: keep-newest rules keep more than {} files local; the rest follow keep-local",
            kMaxKeptNewest);
      }
      kept_newest_truncated_ = truncated;
    }
  }
  const int64_t now_s = WallNow().sec;
  DeferredQueue deferred;
  for (ChunkId after;;) {
    bool eof = false;
    auto page = store_.ScanReplicas(after, kScanPage, &eof);
    if (!page.ok()) {
      LOG_WARN("repair: scan: {}", page.status().ToString());
      return;
    }
    for (const ChunkReplicas& c : *page) {
      PlanChunk(c, nodes, now_s, &deferred);
      after = c.chunk;
    }
    if (eof || page->empty()) break;
  }
  // Protection copies after every repair of lost redundancy, the longest
  // waiting first (the copy slots per node are shared).
  std::sort_heap(deferred.begin(), deferred.end(), YoungestOnTop());
  for (const Deferred& d : deferred) PlanChunk(d.chunk, nodes, now_s, nullptr);
  std::lock_guard lock(mu_);
  PlanPressure();
  if (pass_.offloads > 0) {
    LOG_INFO("repair: offloaded the local copies of {} chunk(s) held by the tier (keep-local)",
             pass_.offloads);
  }
  // Parity checks last, the longest unchecked first: they use only slots
  // the repairs and encodes left.
  std::sort(pass_.verify_due.begin(), pass_.verify_due.end(),
            [](const VerifyDue& a, const VerifyDue& b) { return a.checked < b.checked; });
  for (const VerifyDue& due : pass_.verify_due) PlanVerify(due, nodes);
  pass_.verify_due.clear();
  waiting_since_ = std::move(pass_.waiting_since);
  pass_.waiting_since.clear();
  ec_checked_ = std::move(pass_.ec_checked);
  pass_.ec_checked.clear();
  pass_.waiting_files.clear();
  pass_.overdue_files.clear();
  last_pass_ = pass_;
}

int64_t RepairPlanner::NotePending(const ChunkReplicas& c, size_t good, uint64_t committed,
                                   bool ec_complete, int64_t now_s) {
  const Protection& p = c.objective.protect;
  switch (p.kind) {
    case ProtectKind::kReplicas:
      if (good >= p.copies) return -1;
      break;
    case ProtectKind::kObject:
      // Never written: nothing to protect.
      if (committed == 0 || c.object_version == committed) return -1;
      break;
    case ProtectKind::kEc:
      if (committed == 0 || ec_complete) return -1;
      break;
    default:
      return -1;
  }
  // Waiting since the file last changed (its ctime: a copy that sets an old
  // mtime does not make it overdue), or since a pass first saw it
  // unprotected if earlier (a file kept open and written keeps moving its
  // ctime; the first sighting is lost with a meta restart).
  int64_t since = c.ctime.sec;
  auto seen = waiting_since_.find(c.chunk);
  if (seen != waiting_since_.end()) since = std::min(since, seen->second);
  pass_.waiting_since[c.chunk] = seen != waiting_since_.end() ? seen->second : now_s;
  const int64_t age = std::max<int64_t>(0, now_s - since);
  pass_.protect.waiting_bytes += ChunkBytes(c);
  pass_.protect.oldest_age_s =
      std::max<uint64_t>(pass_.protect.oldest_age_s, static_cast<uint64_t>(age));
  if (pass_.waiting_files.insert(c.ino).second) ++pass_.protect.waiting_files;
  if (age > static_cast<int64_t>(p.within_s) && pass_.overdue_files.insert(c.ino).second) {
    ++pass_.protect.overdue_files;
  }
  return age;
}

void RepairPlanner::PlanChunk(const ChunkReplicas& c, const std::map<NodeId, Choice>& nodes,
                              int64_t now_s, DeferredQueue* defer) {
  const bool first = defer != nullptr;  // the scan, which counts; else a deferred protection copy
  bool has_task = false;
  bool marked = false;  // a writer waits for it (MarkUrgent)
  bool newest = false;  // a keep-newest rule keeps it local
  {
    std::lock_guard lock(mu_);
    has_task = tasks_.count(c.chunk) != 0;  // one task at a time per chunk
    marked = urgent_.count(c.chunk) != 0;
    newest = kept_newest_.count(c.ino) != 0;
  }
  const uint32_t synced = std::max<uint32_t>(1, c.objective.replicas);
  std::vector<const Replica*> good, sources, extras_stale, extras_lost, extras_draining, offloaded;
  uint64_t committed = 0;
  bool has_stale = false;
  for (const Replica& r : c.replicas) {
    if (r.state == ReplicaState::kHealthy || r.state == ReplicaState::kOffloaded) {
      committed = std::max(committed, r.version);
    }
  }
  // A writer waits and the bucket holds the committed version: replicas on
  // nodes that miss heartbeats are lost now (the recall is what it waits
  // for), not after repair-grace.
  const bool urgent =
      marked && object_tier_ != nullptr && committed != 0 && c.object_version == committed;
  for (const Replica& r : c.replicas) {
    auto it = nodes.find(r.node);
    const Choice* node = it == nodes.end() ? nullptr : &it->second;
    if (r.state == ReplicaState::kOffloaded) {
      offloaded.push_back(&r);
      continue;
    }
    if (r.state == ReplicaState::kPending) {
      if (has_task) continue;  // the copy in flight
      // No task: a copy that was lost, e.g. a meta restart.
      (void)store_.SetReplicaState(c.chunk, r.node, ReplicaState::kStale);
      extras_stale.push_back(&r);
      continue;
    }
    if (r.state == ReplicaState::kStale) {
      has_stale = true;
      extras_stale.push_back(&r);
      continue;
    }
    if (node == nullptr || node->lost || (urgent && node->health != Health::kUp)) {
      extras_lost.push_back(&r);
      continue;
    }
    if (node->health != Health::kDown) sources.push_back(&r);
    if (node->draining) {
      extras_draining.push_back(&r);
      continue;
    }
    good.push_back(&r);
  }
  // The erasure-coded cells (protect=ec) of the committed version: on
  // nodes not lost (complete when all K+M are), and readable now (a rebuild
  // needs K).
  ec::EcStripe stripe;
  if (!c.ec.empty()) {
    auto parsed = ec::ParseStripe(c.ec);
    if (parsed.ok()) {
      stripe = std::move(parsed).value();
    } else {
      LOG_WARN("repair: chunk {}: {}", c.chunk, parsed.status().ToString());
    }
  }
  std::vector<uint32_t> readable_cells;
  bool ec_complete = false;
  if (!stripe.empty() && committed != 0 && stripe.version == committed) {
    uint32_t kept = 0;
    for (uint32_t i = 0; i < stripe.cells.size(); ++i) {
      auto it = nodes.find(stripe.cells[i].node);
      if (it == nodes.end() || it->second.lost) continue;
      ++kept;
      if (it->second.health != Health::kDown) readable_cells.push_back(i);
    }
    const Protection& p = c.objective.protect;
    ec_complete = kept == stripe.cells.size() && stripe.k == p.copies && stripe.m == p.parity;
  }
  const Protection& p = c.objective.protect;
  // The tier holds the committed version (the object, or every cell on a
  // node not lost): the local copies may go (keep-local).
  const bool in_tier =
      committed != 0 && ((p.kind == ProtectKind::kObject && object_tier_ != nullptr &&
                          c.object_version == committed) ||
                         (p.kind == ProtectKind::kEc && ec_complete));
  std::lock_guard lock(mu_);
  const int64_t waited = first ? NotePending(c, good.size(), committed, ec_complete, now_s) : 0;
  if (first && good.empty() && !offloaded.empty()) {
    ++pass_.offloaded_chunks;
    pass_.offloaded_bytes += ChunkBytes(c);
  }
  if (has_task) return;
  // The copies to reach now and to keep (the durability ladder): the
  // writer's `replicas`, raised to the protection's copies once the file has
  // no writer or has waited `within` — and never trimmed below those.
  uint32_t want = synced, keep = synced;
  if (p.kind == ProtectKind::kReplicas) {
    keep = std::max(synced, p.copies);
    const bool due = !c.writer_open || waited >= static_cast<int64_t>(p.within_s);
    if (!first || (waited >= 0 && due)) want = keep;  // (deferred: it was due)
  }
  // keep-local=drop|pressure: the local copies of a chunk the tier holds
  // go (never while the file is open, for reading too, or a writer waits
  // for the chunk: MarkUrgent), and an offloaded chunk stays so until a
  // writer asks.
  // (keep-newest=N on a directory above: its newest entries stay.)
  const bool may_offload =
      in_tier && !marked && !newest && !c.open && p.keep_local != KeepLocal::kKeep;
  const bool holders =
      !good.empty() || !extras_draining.empty();  // rows that can carry the version
  // (after=: once the file has gone that long unused: LastUse.)
  const bool aged =
      p.drop_after_s == 0 || now_s - LastUse(c) >= static_cast<int64_t>(p.drop_after_s);
  const bool drop_now = may_offload && p.keep_local == KeepLocal::kDrop && holders && aged;
  const bool stays_offloaded = good.empty() && !offloaded.empty() && in_tier && !marked &&
                               !newest && p.keep_local != KeepLocal::kKeep;
  if (drop_now || stays_offloaded) want = keep = 0;
  if (first && may_offload && p.keep_local == KeepLocal::kPressure && !good.empty()) {
    NotePressure(c, committed, good);
  }
  if (first) {
    for (const Replica& r : c.replicas) {
      if (r.state != ReplicaState::kOffloaded) ++pass_.replicas_per_node[r.node];
    }
    if (has_stale) ++pass_.stale_replicas;
  }
  if (good.size() < want) {
    if (first && good.size() >= synced) {  // a protection copy: after the repairs
      defer->push_back(Deferred{waited, c});
      std::push_heap(defer->begin(), defer->end(), YoungestOnTop());
      if (defer->size() > kMaxDeferred) {  // the youngest waits for a later pass
        std::pop_heap(defer->begin(), defer->end(), YoungestOnTop());
        defer->pop_back();
      }
      return;
    }
    if (first) ++pass_.under_replicated;
    // No node holds it any more: recalled from the object tier, when that
    // has the committed version.
    const bool recall = sources.empty() && object_tier_ != nullptr && committed != 0 &&
                        c.object_version == committed;
    // Or rebuilt from K of its erasure-coded cells.
    const bool rebuild =
        sources.empty() && !recall && !stripe.empty() && readable_cells.size() >= stripe.k;
    if (sources.empty() && !recall && !rebuild) {
      if (first) ++pass_.unavailable;
      return;
    }
    if (sources.empty()) {  // a recall or rebuild failed a moment ago: not yet again
      auto paused = sourceless_pauses_.find(c.chunk);
      if (paused != sourceless_pauses_.end() && Clock::now() < paused->second.until) return;
    }
    // A source that is not draining spares the node being emptied.
    std::stable_sort(sources.begin(), sources.end(), [&](const Replica* a, const Replica* b) {
      return !nodes.at(a->node).draining && nodes.at(b->node).draining;
    });
    uint32_t per_node_limit = std::max<uint32_t>(1, config_.copies_per_node);
    std::vector<NodeChoice> choices;
    for (const auto& [id, n] : nodes) {
      uint64_t load = 0;
      for (auto& [chunk, task] : tasks_) load += task.target == id;
      choices.push_back(NodeChoice{n.record, n.usable && load < per_node_limit, load,
                                   n.health == Health::kSuspect});
    }
    PlacementRequest req;
    req.replicas = 1;
    req.placement = Placement::kSpread;
    req.allowed = c.objective.nodes;
    req.chunk_size = c.chunk_size;
    for (const Replica& r : c.replicas) {  // a stale or offloaded copy's node may take it again
      if (r.state != ReplicaState::kStale && r.state != ReplicaState::kOffloaded) {
        req.exclude.push_back(r.node);
      }
    }
    auto targets = ChooseTargets(choices, req);
    if (!targets.ok()) {
      // No fresh node: overwrite a stale copy in place (e.g. two nodes, one
      // of which came back with old data).
      req.exclude.clear();
      for (const Replica& r : c.replicas) {
        if (r.state == ReplicaState::kHealthy) req.exclude.push_back(r.node);
      }
      targets = ChooseTargets(choices, req);
    }
    if (!targets.ok()) return;  // nowhere to put it now; a later pass retries
    const ReplicaTarget& target = targets->front();
    Status added = store_.AddPendingReplica(c.chunk, target.node, target.volume);
    if (!added.ok()) {
      LOG_WARN("repair: chunk {}: cannot add a replica on node {}: {}", c.chunk, target.node, added.ToString());
      return;
    }
    const Clock::time_point now = Clock::now();
    Task task{next_task_id_++, c.chunk, target.node, now, {}, now, Task::kCopy, {}};
    task.source = recall ? Task::kObjectTier : rebuild ? Task::kCells : Task::kPeer;
    tasks_[c.chunk] = task;
    pb::NodeCommand cmd;
    cmd.set_id(task.id);
    cmd.set_kind(pb::COMMAND_COPY);
    cmd.set_chunk(c.chunk.value());
    cmd.set_volume(target.volume.value());
    cmd.set_version(committed);
    if (recall) {
      cmd.set_object_key(object_tier_->Key(c.chunk, committed));
      ++stats_.recalls;
      if (urgent) ++stats_.urgent_recalls;
      queued_[target.node].push_back(std::move(cmd));
      LOG_INFO(
          "repair: chunk {} (file inode {}) has no copy on any {}node: recalling version {} "
          "from the object tier to node {}{}",
          c.chunk, c.ino, urgent ? "up " : "", committed, target.node,
          urgent ? " now (a writer waits for it)" : "");
      return;
    }
    if (rebuild) {
      AddCellsToRead(cmd, c.chunk, stripe, readable_cells, nodes);
      ++stats_.ec_rebuilds;
      queued_[target.node].push_back(std::move(cmd));
      LOG_INFO(
          "repair: chunk {} (file inode {}) has no copy on any node: rebuilding version {} from "
          "{} of its {} erasure-coded cells on node {}",
          c.chunk, c.ino, committed, readable_cells.size(), stripe.cells.size(), target.node);
      return;
    }
    const Replica* source = sources.front();
    cmd.set_source_node(source->node.value());
    cmd.set_source_address(nodes.at(source->node).record->address);
    cmd.set_source_volume(source->volume.value());
    *cmd.mutable_cap() = CopyCap(c.chunk, kCapRead, ChunkBytes(c));
    queued_[target.node].push_back(std::move(cmd));
    LOG_DEBUG("repair: chunk {} ({} of {} good): copy from node {} to node {}", c.chunk, good.size(), want,
              source->node, target.node);
    return;
  }
  // Enough good copies: everything else leaves the layout. Stale and lost
  // replicas at once; a healthy one (on a draining node, or a surplus) only
  // while no writer has the file open: the writer's bytes not yet committed
  // may be on it alone (a copy made during the write holds the committed
  // version), and its commit would make the others stale.
  std::vector<const Replica*> drop, drop_unless_writer;
  drop.insert(drop.end(), extras_stale.begin(), extras_stale.end());
  drop.insert(drop.end(), extras_lost.begin(), extras_lost.end());
  drop_unless_writer.insert(drop_unless_writer.end(), extras_draining.begin(),
                            extras_draining.end());
  // A writer's bytes may be on one of them only until its commit (MarkUrgent).
  // (keep-local=drop offloads them all below instead.)
  if (!drop_now && good.size() > keep && !marked) {
    ++pass_.over_replicated;
    // Surplus: first those outside the allowed nodes, then the newest.
    std::stable_sort(good.begin(), good.end(), [&](const Replica* a, const Replica* b) {
      auto allowed = [&](const Replica* r) {
        return c.objective.nodes.empty() ||
               std::find(c.objective.nodes.begin(), c.objective.nodes.end(), r->node) != c.objective.nodes.end();
      };
      return allowed(a) && !allowed(b);
    });
    drop_unless_writer.insert(drop_unless_writer.end(), good.begin() + keep, good.end());
  }
  // Offloaded rows left behind: older than the committed version, or all
  // of them once a healthy replica stays (the chunk was staged back).
  for (const Replica* r : offloaded) {
    if (r->version < committed || (!good.empty() && !drop_now)) drop.push_back(r);
  }
  if (drop_now) {
    // The healthy copies, those on draining nodes too, become offloaded.
    std::vector<const Replica*> local = good;
    local.insert(local.end(), extras_draining.begin(), extras_draining.end());
    drop_unless_writer.clear();
    Offload(c, committed, local, /*pressure=*/false);
  }
  for (const Replica* r : drop) {
    Status st = store_.DropReplica(c.chunk, r->node);
    if (!st.ok()) LOG_WARN("repair: chunk {}: drop replica on node {}: {}", c.chunk, r->node, st.ToString());
  }
  for (const Replica* r : drop_unless_writer) {
    Status st = store_.DropReplica(c.chunk, r->node, /*unless_writer=*/true);
    if (st.code() == StatusCode::kBusy) {
      LOG_DEBUG("repair: chunk {}: replica on node {} kept until the writer closes: {}", c.chunk,
                r->node, st.message());
    } else if (!st.ok()) {
      LOG_WARN("repair: chunk {}: drop replica on node {}: {}", c.chunk, r->node, st.ToString());
    }
  }
  // The object tier's copy: once the file has no writer or waited `within`.
  if (p.kind == ProtectKind::kObject && object_tier_ != nullptr && waited >= 0 &&
      (!c.writer_open || waited >= static_cast<int64_t>(p.within_s))) {
    PlanUpload(c, committed, sources, nodes);
  }
  // Cells of a goal that is gone (the objective changed): the replicas
  // here are enough for what it asks now.
  if (p.kind != ProtectKind::kEc && !c.ec.empty()) {
    Status st = store_.ClearEcCells(c.chunk);
    if (!st.ok()) LOG_WARN("repair: chunk {}: clearing its cells: {}", c.chunk, st.ToString());
  }
  if (p.kind == ProtectKind::kEc && !ec_complete && waited >= 0 &&
      (!c.writer_open || waited >= static_cast<int64_t>(p.within_s))) {
    PlanEncode(c, committed, stripe, sources, nodes);
  }
  if (p.kind == ProtectKind::kEc && ec_complete && first &&
      readable_cells.size() == stripe.cells.size()) {
    if (auto checked = VerifyDueSince(c)) {
      pass_.verify_due.push_back(VerifyDue{*checked, c, committed, std::move(stripe)});
    }
  }
}

void RepairPlanner::ExpireTasks() {
  std::vector<Task> expired;
  {
    std::lock_guard lock(mu_);
    auto now = Clock::now();
    for (auto it = tasks_.begin(); it != tasks_.end();) {
      const Task& t = it->second;
      bool timed_out = now - t.progressed > config_.copy_timeout.value;
      bool target_down = health_.Of(t.target) == Health::kDown;
      if (timed_out || target_down) {
        expired.push_back(t);
        ++stats_.copies_failed;
        it = tasks_.erase(it);
      } else {
        ++it;
      }
    }
    for (const Task& t : expired) {
      auto& q = queued_[t.target];
      q.erase(std::remove_if(q.begin(), q.end(), [&](const pb::NodeCommand& c) { return c.id() == t.id; }), q.end());
    }
  }
  for (const Task& t : expired) {
    if (t.kind == Task::kUpload) {
      LOG_WARN("protect: upload of chunk {} by node {} did not finish; retrying later", t.chunk,
               t.target);
      continue;
    }
    if (t.kind == Task::kVerify) {
      LOG_WARN("protect: parity check of chunk {} by node {} did not finish", t.chunk, t.target);
      continue;
    }
    if (t.kind == Task::kEncode) {
      LOG_WARN("protect: encode of chunk {} by node {} did not finish; retrying later", t.chunk,
               t.target);
      (void)store_.RecordEcCells(t.chunk, t.made, false);
      continue;
    }
    LOG_WARN("repair: copy of chunk {} to node {} did not finish; retrying later", t.chunk, t.target);
    (void)store_.SetReplicaState(t.chunk, t.target, ReplicaState::kStale);
  }
}

RepairStats RepairPlanner::Stats() {
  std::lock_guard lock(mu_);
  RepairStats s = stats_;
  s.under_replicated = last_pass_.under_replicated;
  s.over_replicated = last_pass_.over_replicated;
  s.stale_replicas = last_pass_.stale_replicas;
  s.unavailable = last_pass_.unavailable;
  s.replicas_per_node = last_pass_.replicas_per_node;
  s.protect = last_pass_.protect;
  s.offloaded_chunks = last_pass_.offloaded_chunks;
  s.offloaded_bytes = last_pass_.offloaded_bytes;
  s.copies_running = tasks_.size();
  uint64_t bytes = 0;
  for (auto& [when, delta] : rate_window_) bytes += delta;
  s.copy_rate_bps = rate_window_.empty() ? 0.0 : static_cast<double>(bytes) / 60.0;
  return s;
}

}  // namespace t0fs::meta
