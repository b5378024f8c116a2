#include "meta/meta_metrics.h"

#include <chrono>
#include <memory>
#include <optional>
#include <vector>

#include "common/logging.h"

namespace t0fs::meta {

using metrics::MetricType;
using metrics::SampleSink;

void NodeReports::Update(NodeId node, const pb::HeartbeatReq& beat) {
  std::lock_guard lock(mu_);
  Report& r = reports_[node];
  r.tcp_read_bytes = beat.tcp_read_bytes();
  r.tcp_write_bytes = beat.tcp_write_bytes();
  r.local_opens = beat.local_opens();
  if (r.metrics_address != beat.metrics_address()) r.metrics_address = beat.metrics_address();
  for (const pb::VolumeInfo& v : beat.volumes()) {
    if (v.has_stored_bytes()) r.stored_bytes[v.volume()] = v.stored_bytes();
  }
}

void NodeReports::Fill(NodeId node, pb::NodeStatus* out) const {
  std::lock_guard lock(mu_);
  auto it = reports_.find(node);
  if (it == reports_.end()) return;
  out->set_tcp_read_bytes(it->second.tcp_read_bytes);
  out->set_tcp_write_bytes(it->second.tcp_write_bytes);
  out->set_local_opens(it->second.local_opens);
  out->set_metrics_address(it->second.metrics_address);
  for (pb::VolumeInfo& v : *out->mutable_volumes()) {
    auto stored = it->second.stored_bytes.find(v.volume());
    if (stored != it->second.stored_bytes.end()) v.set_stored_bytes(stored->second);
  }
}

namespace {

using Clock = std::chrono::steady_clock;

// One view of the cluster shared by the families of a scrape: the store is
// read once per scrape, not once per family. The namespace counts scan
// tables, so they are refreshed at most every kCountsEvery.
class ClusterView {
 public:
  static constexpr auto kFresh = std::chrono::milliseconds(500);
  static constexpr auto kCountsEvery = std::chrono::seconds(10);

  ClusterView(MetaStore& store, const NodeHealth& health, RepairPlanner& planner)
      : store_(store), health_(health), planner_(planner) {}

  struct Snapshot {
    std::vector<NodeRecord> nodes;
    std::vector<std::string> states;  // per node: up, suspect, down, draining
    RepairStats repair;
    std::optional<StoreCounts> counts;
  };

  // Runs on the metrics server thread only; mu_ makes it safe anyway.
  const Snapshot& Get() {
    std::lock_guard lock(mu_);
    auto now = Clock::now();
    if (now - taken_ < kFresh) return snap_;
    taken_ = now;
    auto nodes = store_.ListNodes();
    if (nodes.ok()) {
      snap_.nodes = std::move(*nodes);
    } else {
      LOG_WARN("metrics: listing nodes: {}", nodes.status().ToString());
    }
    snap_.states.clear();
    for (const NodeRecord& node : snap_.nodes) {
      Health h = health_.Of(node.node);
      snap_.states.push_back(node.admin_state == NodeAdminState::kDraining && h != Health::kDown
                                 ? "draining"
                                 : NodeHealth::Name(h));
    }
    snap_.repair = planner_.Stats();
    if (now - counts_taken_ >= kCountsEvery || !snap_.counts) {
      counts_taken_ = now;
      auto counts = store_.Counts();
      if (counts.ok()) snap_.counts = *counts;
    }
    return snap_;
  }

 private:
  MetaStore& store_;
  const NodeHealth& health_;
  RepairPlanner& planner_;
  std::mutex mu_;  // guards the fields below
  Clock::time_point taken_{}, counts_taken_{};
  Snapshot snap_;
};

}  // namespace

void AddMetaMetrics(metrics::Registry& registry, MetaStore& store, const NodeHealth& health,
                    RepairPlanner& planner) {
  auto view = std::make_shared<ClusterView>(store, health, planner);
  auto gauge = [&registry, view](std::string_view name, std::string_view help,
                                 std::vector<std::string> labels,
                                 std::function<void(const ClusterView::Snapshot&, SampleSink&)> fn,
                                 MetricType type = MetricType::kGauge) {
    registry.AddCallback(type, name, help, std::move(labels),
                         [view, fn = std::move(fn)](SampleSink& sink) { fn(view->Get(), sink); });
  };

  gauge("t0fs_meta_node_state",
        "Data node state as a state set: 1 for the node's current state (up, suspect, down, draining), "
        "0 for the others.",
        {"node", "state"}, [](const ClusterView::Snapshot& s, SampleSink& sink) {
          static const char* const kStates[] = {"up", "suspect", "down", "draining"};
          for (size_t node_idx = 0; node_idx < s.nodes.size(); ++node_idx) {
            std::string node = std::to_string(s.nodes[node_idx].node.value());
            for (const char* state : kStates) {
              sink.Add({node, state}, s.states[node_idx] == state ? 1 : 0);
            }
          }
        });
  gauge("t0fs_meta_nodes", "Registered data nodes by state.", {"state"},
        [](const ClusterView::Snapshot& s, SampleSink& sink) {
          for (const char* state : {"up", "suspect", "down", "draining"}) {
            double n = 0;
            for (const std::string& st : s.states) n += st == state ? 1 : 0;
            sink.Add({state}, n);
          }
        });
  gauge("t0fs_meta_node_heartbeat_age_seconds", "Seconds since each node's last heartbeat.", {"node"},
        [&health](const ClusterView::Snapshot& s, SampleSink& sink) {
          for (const NodeRecord& node : s.nodes) {
            auto silence = health.Silence(node.node);
            if (silence == NodeHealth::Clock::duration::max()) continue;  // not seen by this meta yet
            sink.Add({std::to_string(node.node.value())}, std::chrono::duration<double>(silence).count());
          }
        });
  auto per_volume = [](auto field) {
    return [field](const ClusterView::Snapshot& s, SampleSink& sink) {
      for (const NodeRecord& node : s.nodes) {
        for (const VolumeRecord& v : node.volumes) {
          sink.Add({std::to_string(node.node.value()), std::to_string(v.volume.value()), v.path},
                   static_cast<double>(field(v)));
        }
      }
    };
  };
  gauge("t0fs_meta_volume_capacity_bytes", "Volume size as its node last reported it.", {"node", "volume", "path"},
        per_volume([](const VolumeRecord& v) { return v.total_bytes; }));
  gauge("t0fs_meta_volume_available_bytes", "Volume free space as its node last reported it.",
        {"node", "volume", "path"}, per_volume([](const VolumeRecord& v) { return v.free_bytes; }));
  gauge("t0fs_meta_volume_chunks", "Chunk files per volume as its node last reported them.",
        {"node", "volume", "path"}, per_volume([](const VolumeRecord& v) { return v.chunks; }));
  gauge("t0fs_meta_node_replicas", "Chunk replicas meta places on each node (as of the last repair pass).",
        {"node"}, [](const ClusterView::Snapshot& s, SampleSink& sink) {
          for (const auto& [node, count] : s.repair.replicas_per_node) {
            sink.Add({std::to_string(node.value())}, static_cast<double>(count));
          }
        });

  // Repair: backlog as of the last pass, progress since meta started.
  auto repair_gauge = [&](std::string_view name, std::string_view help, auto field,
                          MetricType type = MetricType::kGauge) {
    gauge(name, help, {},
          [field](const ClusterView::Snapshot& s, SampleSink& sink) { sink.Add(static_cast<double>(field(s.repair))); },
          type);
  };
  repair_gauge("t0fs_meta_chunks_below_objective",
               "Repair backlog: chunks with fewer healthy replicas than their objective (last pass).",
               [](const RepairStats& r) { return r.under_replicated; });
  repair_gauge("t0fs_meta_chunks_above_objective", "Chunks with more replicas than their objective (last pass).",
               [](const RepairStats& r) { return r.over_replicated; });
  repair_gauge("t0fs_meta_stale_replicas", "Replicas that missed writes or are damaged, awaiting repair.",
               [](const RepairStats& r) { return r.stale_replicas; });
  repair_gauge("t0fs_meta_chunks_unavailable", "Chunks with no readable replica at all (data unavailable).",
               [](const RepairStats& r) { return r.unavailable; });
  repair_gauge(
      "t0fs_meta_protect_waiting_files",
      "Files below their protection goal (protect=), waiting for background copies (last pass).",
      [](const RepairStats& r) { return r.protect.waiting_files; });
  repair_gauge("t0fs_meta_protect_waiting_bytes",
               "Bytes of those files not yet protected (last pass).",
               [](const RepairStats& r) { return r.protect.waiting_bytes; });
  repair_gauge("t0fs_meta_protect_oldest_age_seconds",
               "How long the longest-waiting unprotected data has waited.",
               [](const RepairStats& r) { return r.protect.oldest_age_s; });
  repair_gauge("t0fs_meta_protect_overdue_files",
               "Files unprotected for longer than their within= deadline (alert on > 0).",
               [](const RepairStats& r) { return r.protect.overdue_files; });
  repair_gauge("t0fs_meta_offloaded_chunks",
               "Chunks whose local copies were offloaded (keep-local=drop|pressure): held by the "
               "object tier or their cells only (last pass).",
               [](const RepairStats& r) { return r.offloaded_chunks; });
  repair_gauge("t0fs_meta_offloaded_bytes", "Bytes of those chunks (last pass).",
               [](const RepairStats& r) { return r.offloaded_bytes; });
  gauge(
      "t0fs_meta_offloads_total",
      "Chunks whose local copies were offloaded since meta started, by rule: drop "
      "(keep-local=drop) or pressure (a volume over tier-high-watermark).",
      {"rule"},
      [](const ClusterView::Snapshot& s, SampleSink& sink) {
        sink.Add({"drop"}, static_cast<double>(s.repair.offloads - s.repair.pressure_offloads));
        sink.Add({"pressure"}, static_cast<double>(s.repair.pressure_offloads));
      },
      MetricType::kCounter);
  repair_gauge("t0fs_meta_repair_copies_running", "Repair copies ordered and not finished.",
               [](const RepairStats& r) { return r.copies_running; });
  gauge("t0fs_meta_repair_copies_total", "Repair copies finished since meta started, by result.", {"result"},
        [](const ClusterView::Snapshot& s, SampleSink& sink) {
          sink.Add({"ok"}, static_cast<double>(s.repair.copies_done));
          sink.Add({"failed"}, static_cast<double>(s.repair.copies_failed));
        },
        MetricType::kCounter);
  repair_gauge("t0fs_meta_repair_bytes_total", "Bytes copied by repair since meta started.",
               [](const RepairStats& r) { return r.copied_bytes; }, MetricType::kCounter);
  gauge(
      "t0fs_meta_object_uploads_total",
      "Chunk versions copied to the object tier (protect=object) since meta started, by result.",
      {"result"},
      [](const ClusterView::Snapshot& s, SampleSink& sink) {
        sink.Add({"ok"}, static_cast<double>(s.repair.uploads_done));
        sink.Add({"failed"}, static_cast<double>(s.repair.uploads_failed));
      },
      MetricType::kCounter);
  repair_gauge(
      "t0fs_meta_object_recalls_total",
      "Copies of chunks back from the object tier, ordered since meta started.",
      [](const RepairStats& r) { return r.recalls; }, MetricType::kCounter);
  repair_gauge(
      "t0fs_meta_object_urgent_recalls_total",
      "Recalls from the object tier started at once, without waiting for repair-grace, because a "
      "writer waited for a chunk no up node held (counted in t0fs_meta_object_recalls_total too).",
      [](const RepairStats& r) { return r.urgent_recalls; }, MetricType::kCounter);
  gauge(
      "t0fs_meta_ec_encodes_total",
      "Encode commands (protect=ec: a replica cut into erasure-coded cells) since meta started, "
      "by result.",
      {"result"},
      [](const ClusterView::Snapshot& s, SampleSink& sink) {
        sink.Add({"ok"}, static_cast<double>(s.repair.ec_encodes_done));
        sink.Add({"failed"}, static_cast<double>(s.repair.ec_encodes_failed));
      },
      MetricType::kCounter);
  gauge(
      "t0fs_meta_ec_verifies_total",
      "Parity checks (protect=ec: a replica encoded again and compared with every cell) since "
      "meta started, by result: clean, mismatch (a bad cell found, made again) or failed.",
      {"result"},
      [](const ClusterView::Snapshot& s, SampleSink& sink) {
        sink.Add({"clean"}, static_cast<double>(s.repair.ec_verifies_clean));
        sink.Add({"mismatch"}, static_cast<double>(s.repair.ec_verifies_mismatch));
        sink.Add({"failed"}, static_cast<double>(s.repair.ec_verifies_failed));
      },
      MetricType::kCounter);
  repair_gauge(
      "t0fs_meta_ec_bad_cells_total",
      "Erasure-coded cells parity checks found bad (other bytes, length or version, or gone) "
      "since meta started; each is made again.",
      [](const RepairStats& r) { return r.ec_bad_cells; }, MetricType::kCounter);
  repair_gauge(
      "t0fs_meta_ec_rebuilds_total",
      "Copies of chunks rebuilt from their erasure-coded cells, ordered since meta started.",
      [](const RepairStats& r) { return r.ec_rebuilds; }, MetricType::kCounter);

  auto count_gauge = [&](std::string_view name, std::string_view help, auto field) {
    gauge(name, help, {}, [field](const ClusterView::Snapshot& s, SampleSink& sink) {
      if (s.counts) sink.Add(static_cast<double>(field(*s.counts)));
    });
  };
  gauge("t0fs_meta_inodes", "Namespace size by type (refreshed at most every 10 s).", {"type"},
        [](const ClusterView::Snapshot& s, SampleSink& sink) {
          if (!s.counts) return;
          sink.Add({"file"}, static_cast<double>(s.counts->files));
          sink.Add({"dir"}, static_cast<double>(s.counts->directories));
        });
  count_gauge("t0fs_meta_chunks", "Chunks in layouts (refreshed at most every 10 s).",
              [](const StoreCounts& c) { return c.chunks; });
  count_gauge("t0fs_meta_logical_bytes", "Sum of file sizes (refreshed at most every 10 s).",
              [](const StoreCounts& c) { return c.logical_bytes; });
  count_gauge("t0fs_meta_sessions", "Client sessions.", [](const StoreCounts& c) { return c.sessions; });
  count_gauge("t0fs_meta_open_handles", "Files open by clients.", [](const StoreCounts& c) { return c.open_handles; });
  count_gauge("t0fs_meta_garbage_chunks", "Chunks of freed files awaiting removal on their nodes.",
              [](const StoreCounts& c) { return c.garbage_chunks; });
}

}  // namespace t0fs::meta
