// `t0fs status`: nodes, volumes, capacity, files and chunks of a cluster.
// `t0fs status --watch`: the same, refreshed every --interval, with each
// node's traffic as rates (the delta of its counters between two frames).
#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "cli/admin.h"
#include "cli/command_util.h"
#include "cli/commands.h"
#include "cli/local_mounts.h"
#include "cli/signals.h"
#include "common/config.h"
#include "t0fs/admin.h"

namespace t0fs::cli {
namespace {

// What t0fs's chunk files take on a node's volumes, as its nodes last
// counted; nullopt until every volume has been counted.
std::optional<uint64_t> StoredBytes(const client::NodeStatus& n) {
  uint64_t sum = 0;
  for (const client::VolumeStatus& v : n.volumes) {
    if (!v.stored_bytes) return std::nullopt;
    sum += *v.stored_bytes;
  }
  return sum;
}
std::string Stored(std::optional<uint64_t> bytes) {
  return bytes ? FormatByteSize(*bytes) : "-";
}

nlohmann::json ToJson(const client::ClusterStatus& s, const std::string& meta,
                      const std::vector<LocalMount>& mounts) {
  nlohmann::json nodes = nlohmann::json::array();
  for (const client::NodeStatus& n : s.nodes) {
    nlohmann::json vols = nlohmann::json::array();
    for (const client::VolumeStatus& v : n.volumes) {
      vols.push_back(
          {{"volume", v.volume.value()},
           {"path", v.path},
           {"total_bytes", v.total_bytes},
           {"free_bytes", v.free_bytes},
           {"chunks", v.chunks},
           {"stored_bytes", v.stored_bytes ? nlohmann::json(*v.stored_bytes) : nlohmann::json()}});
    }
    nodes.push_back({{"node", n.node.value()},
                     {"state", n.state},
                     {"lost", n.lost},
                     {"address", n.address},
                     {"hostname", n.hostname},
                     {"last_heartbeat_ms_ago", n.last_heartbeat_ms_ago},
                     {"replicas", n.replicas},
                     {"volumes", vols},
                     {"metrics_address", n.metrics_address},
                     {"traffic",
                      {{"tcp_read_bytes", n.tcp_read_bytes},
                       {"tcp_write_bytes", n.tcp_write_bytes},
                       {"local_opens", n.local_opens}}}});
  }
  return {{"meta", meta},
          {"cluster_id", s.cluster_id},
          {"nodes", nodes},
          {"meta_metrics_address", s.metrics_address},
          {"files", s.files},
          {"directories", s.directories},
          {"chunks", s.chunks},
          {"logical_bytes", s.logical_bytes},
          {"sessions", s.sessions},
          {"open_handles", s.open_handles},
          {"garbage_chunks", s.garbage_chunks},
          {"mounts_here", LocalMountsJson(mounts)},
          {"repair",
           {{"under_replicated", s.under_replicated},
            {"over_replicated", s.over_replicated},
            {"stale_replicas", s.stale_replicas},
            {"copies_running", s.copies_running},
            {"copies_done", s.copies_done},
            {"copies_failed", s.copies_failed},
            {"copied_bytes", s.copied_bytes},
            {"copy_rate_bps", s.copy_rate_bps},
            {"unavailable", s.unavailable}}},
          {"protection",
           {{"waiting_files", s.protect_waiting_files},
            {"waiting_bytes", s.protect_waiting_bytes},
            {"oldest_age_s", s.protect_oldest_age_s},
            {"overdue_files", s.protect_overdue_files},
            {"offloaded_chunks", s.offloaded_chunks},
            {"offloaded_bytes", s.offloaded_bytes}}}};
}

// The durability ladder's backlog (files below their protect= goal).
std::string ProtectionLine(const client::ClusterStatus& s) {
  std::string line =
      s.protect_waiting_files == 0
          ? std::string("protection: every file with a protect= goal has reached it")
          : fmt::format(
                "protection: {} file(s), {} waiting for their protect= copies, the oldest for "
                "{}s; {} past their deadline",
                s.protect_waiting_files, FormatByteSize(s.protect_waiting_bytes),
                s.protect_oldest_age_s, s.protect_overdue_files);
  if (s.offloaded_chunks > 0) {
    line += fmt::format("; {} chunk(s), {}, offloaded to the tier (keep-local)", s.offloaded_chunks,
                        FormatByteSize(s.offloaded_bytes));
  }
  return line;
}

void PrintTable(const client::ClusterStatus& s, const std::string& meta, const std::vector<LocalMount>& mounts) {
  fmt::print("cluster {} (meta {})\n\n", s.cluster_id, meta);
  fmt::print("{:<6} {:<9} {:<22} {:<16} {:>7} {:>11} {:>11} {:>9} {:>10}\n", "NODE", "STATE",
             "ADDRESS", "HOST", "VOLUMES", "STORED", "FREE", "REPLICAS", "LAST SEEN");
  uint64_t total = 0, free = 0;
  std::optional<uint64_t> stored = 0;
  for (const client::NodeStatus& n : s.nodes) {
    uint64_t node_total = 0, node_free = 0;
    for (const client::VolumeStatus& v : n.volumes) {
      node_total += v.total_bytes;
      node_free += v.free_bytes;
    }
    total += node_total;
    free += node_free;
    const std::optional<uint64_t> node_stored = StoredBytes(n);
    stored = stored && node_stored ? std::optional<uint64_t>(*stored + *node_stored) : std::nullopt;
    fmt::print("{:<6} {:<9} {:<22} {:<16} {:>7} {:>11} {:>11} {:>9} {:>9.1f}s\n", n.node.value(),
               n.lost ? "lost" : n.state, n.address, n.hostname.substr(0, 16), n.volumes.size(),
               Stored(node_stored), FormatByteSize(node_free), n.replicas,
               n.last_heartbeat_ms_ago / 1000.0);
    for (const client::VolumeStatus& v : n.volumes) {
      fmt::print("         volume {} {}: t0fs {} in {} chunk file(s); {} of {} free\n",
                 v.volume.value(), v.path, Stored(v.stored_bytes), v.chunks,
                 FormatByteSize(v.free_bytes), FormatByteSize(v.total_bytes));
    }
  }
  if (s.nodes.empty()) fmt::print("(no data nodes registered)\n");
  fmt::print("\ncapacity: t0fs stores {} on its volumes; their file systems have {} free of {}\n",
             Stored(stored), FormatByteSize(free), FormatByteSize(total));
  fmt::print("files {}, directories {}, chunks {}, data {}\n", s.files, s.directories, s.chunks,
             FormatByteSize(s.logical_bytes));
  fmt::print("client sessions {}, open files {}, chunks awaiting removal {}\n", s.sessions, s.open_handles,
             s.garbage_chunks);
  if (!s.metrics_address.empty()) fmt::print("metrics: meta http://{}/metrics\n", s.metrics_address);
  for (const client::NodeStatus& n : s.nodes) {
    if (!n.metrics_address.empty()) {
      fmt::print("metrics: node {} http://{}/metrics\n", n.node.value(), n.metrics_address);
    }
  }
  for (const std::string& line : LocalMountLines(mounts)) fmt::print("{}\n", line);
  if (s.under_replicated == 0 && s.copies_running == 0 && s.stale_replicas == 0) {
    fmt::print("repair: every chunk meets its objective ({} copies done, {} copied)\n", s.copies_done,
               FormatByteSize(s.copied_bytes));
  } else {
    fmt::print("repair: {} chunk(s) under-replicated, {} stale replica(s), {} copies running, {} done, {} failed; "
               "{} copied, {}/s over the last minute\n",
               s.under_replicated, s.stale_replicas, s.copies_running, s.copies_done, s.copies_failed,
               FormatByteSize(s.copied_bytes), FormatByteSize(static_cast<uint64_t>(s.copy_rate_bps)));
  }
  fmt::print("{}\n", ProtectionLine(s));
}

// ---------------------------------------------------------------- --watch

// Counters of one node in one frame, and the rates between two frames.
struct NodeCounters {
  uint64_t tcp_read = 0, tcp_write = 0, local_opens = 0;
};
struct NodeRates {
  double tcp_read = 0, tcp_write = 0, local_opens = 0;  // per second
  bool known = false;  // false on the first frame, or after the node (or meta) restarted
};

// A counter that went down was reset (node or meta restart): no rate this frame.
NodeRates RatesBetween(const NodeCounters& before, const NodeCounters& now, double seconds) {
  NodeRates r;
  if (seconds <= 0 || now.tcp_read < before.tcp_read || now.tcp_write < before.tcp_write ||
      now.local_opens < before.local_opens) {
    return r;
  }
  r.tcp_read = static_cast<double>(now.tcp_read - before.tcp_read) / seconds;
  r.tcp_write = static_cast<double>(now.tcp_write - before.tcp_write) / seconds;
  r.local_opens = static_cast<double>(now.local_opens - before.local_opens) / seconds;
  r.known = true;
  return r;
}

std::string Rate(double bytes_per_second, bool known) {
  if (!known) return "-";
  return FormatByteSize(static_cast<uint64_t>(bytes_per_second)) + "/s";
}

class Watcher {
 public:
  Watcher(const std::string& meta, bool json) : meta_(meta), json_(json), tty_(::isatty(STDOUT_FILENO) == 1) {}

  void Frame(const client::ClusterStatus& s, const std::vector<LocalMount>& mounts) {
    auto now = std::chrono::steady_clock::now();
    double seconds = have_prev_ ? std::chrono::duration<double>(now - prev_time_).count() : 0;
    std::map<uint64_t, NodeRates> rates;
    std::map<uint64_t, NodeCounters> counters;
    for (const client::NodeStatus& n : s.nodes) {
      NodeCounters c{n.tcp_read_bytes, n.tcp_write_bytes, n.local_opens};
      counters[n.node.value()] = c;
      auto prev = prev_.find(n.node.value());
      if (prev != prev_.end()) rates[n.node.value()] = RatesBetween(prev->second, c, seconds);
    }
    double copy_rate = 0;
    bool copy_known = have_prev_ && s.copied_bytes >= prev_copied_ && seconds > 0;
    if (copy_known) copy_rate = static_cast<double>(s.copied_bytes - prev_copied_) / seconds;
    if (json_) {
      PrintJson(s, mounts, rates, copy_rate, copy_known);
    } else {
      PrintText(s, rates, copy_rate, copy_known);
    }
    std::fflush(stdout);
    prev_ = std::move(counters);
    prev_copied_ = s.copied_bytes;
    prev_time_ = now;
    have_prev_ = true;
  }

  void Unreachable(const Status& st) {
    if (json_) {
      fmt::print("{}\n", nlohmann::json{{"time", Now()}, {"error", st.ToString()}}.dump());
    } else {
      if (tty_) fmt::print("\x1b[H\x1b[2J");
      fmt::print("{}  meta {} unreachable: {} (retrying)\n\n", Now(), meta_, st.ToString());
    }
    std::fflush(stdout);
    have_prev_ = false;  // the next frame has no rates: counters may have restarted
  }

 private:
  static std::string Now() {
    std::time_t t = std::time(nullptr);
    std::tm tm{};
    ::localtime_r(&t, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", &tm);
    return buf;
  }

  void PrintJson(const client::ClusterStatus& s, const std::vector<LocalMount>& mounts,
                 const std::map<uint64_t, NodeRates>& rates, double copy_rate, bool copy_known) {
    nlohmann::json frame = ToJson(s, meta_, mounts);
    frame["time"] = Now();
    for (auto& node : frame["nodes"]) {
      auto it = rates.find(node["node"].get<uint64_t>());
      if (it == rates.end() || !it->second.known) {
        node["rates"] = nullptr;
        continue;
      }
      node["rates"] = {{"tcp_read_bps", it->second.tcp_read},
                       {"tcp_write_bps", it->second.tcp_write},
                       {"local_opens_per_s", it->second.local_opens}};
    }
    frame["repair"]["copy_bps"] = copy_known ? nlohmann::json(copy_rate) : nlohmann::json(nullptr);
    fmt::print("{}\n", frame.dump());  // one frame per line
  }

  void PrintText(const client::ClusterStatus& s, const std::map<uint64_t, NodeRates>& rates, double copy_rate,
                 bool copy_known) {
    // On a terminal each frame replaces the last; otherwise frames follow
    // each other (a log, a pipe), each starting with its time.
    if (tty_) fmt::print("\x1b[H\x1b[2J");
    fmt::print("{}  cluster {} (meta {})  Ctrl-C to stop\n\n", Now(), s.cluster_id, meta_);
    fmt::print("{:<6} {:<9} {:<22} {:>12} {:>12} {:>12} {:>10} {:>10} {:>9} {:>7}\n", "NODE",
               "STATE", "ADDRESS", "NET READ", "NET WRITE", "LOCAL OPENS", "STORED", "FREE",
               "CHUNKS", "SEEN");
    for (const client::NodeStatus& n : s.nodes) {
      uint64_t total = 0, free = 0, chunks = 0;
      for (const client::VolumeStatus& v : n.volumes) {
        total += v.total_bytes;
        free += v.free_bytes;
        chunks += v.chunks;
      }
      NodeRates r;
      auto it = rates.find(n.node.value());
      if (it != rates.end()) r = it->second;
      fmt::print("{:<6} {:<9} {:<22} {:>12} {:>12} {:>12} {:>10} {:>10} {:>9} {:>6.1f}s\n",
                 n.node.value(), n.state, n.address, Rate(r.tcp_read, r.known),
                 Rate(r.tcp_write, r.known), r.known ? fmt::format("{:.1f}/s", r.local_opens) : "-",
                 Stored(StoredBytes(n)), FormatByteSize(free), chunks,
                 n.last_heartbeat_ms_ago / 1000.0);
    }
    if (s.nodes.empty()) fmt::print("(no data nodes registered)\n");
    fmt::print("\nNET: chunk bytes each node served over TCP (remote clients, peers). LOCAL OPENS: chunk files\n"
               "handed to same-host clients, whose bypass bytes are on the clients' /metrics\n"
               "(t0fs_client_bytes_total{{path=\"local\"}}).\n\n");
    fmt::print("files {}, directories {}, chunks {}, data {}; sessions {}, open files {}\n", s.files,
               s.directories, s.chunks, FormatByteSize(s.logical_bytes), s.sessions, s.open_handles);
    fmt::print(
        "repair: {} chunk(s) below objective, {} stale replica(s), {} unavailable; {} copies "
        "running, "
        "{} done, {} failed; copying {}\n",
        s.under_replicated, s.stale_replicas, s.unavailable, s.copies_running, s.copies_done,
        s.copies_failed, Rate(copy_rate, copy_known));
    fmt::print("{}\n\n", ProtectionLine(s));
  }

  const std::string meta_;
  const bool json_;
  const bool tty_;
  bool have_prev_ = false;
  std::map<uint64_t, NodeCounters> prev_;
  uint64_t prev_copied_ = 0;
  std::chrono::steady_clock::time_point prev_time_;
};

// What one frame shows: the cluster as meta reports it, and this host's
// mounts of it.
struct FrameData {
  Status status;
  client::ClusterStatus cluster;
  std::vector<LocalMount> mounts;
};

FrameData Gather(AdminTarget& target) {
  FrameData f;
  auto cluster = target.admin->GetStatus();
  f.status = cluster.status();
  if (!cluster.ok()) return f;
  f.cluster = std::move(*cluster);
  f.mounts = QueryLocalMounts(f.cluster.cluster_id);
  return f;
}

// Waits up to `wait` for SIGINT, SIGTERM or SIGHUP (blocked in every thread
// by main, so they are taken here synchronously); returns it, or 0.
int WaitStopSignal(std::chrono::nanoseconds wait) {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGHUP);
  auto deadline = std::chrono::steady_clock::now() + wait;
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::nanoseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() < 0) left = std::chrono::nanoseconds(0);
    timespec timeout{static_cast<time_t>(left.count() / 1000000000), static_cast<long>(left.count() % 1000000000)};
    int sig = ::sigtimedwait(&set, nullptr, &timeout);
    if (sig > 0) return sig;
    if (errno == EAGAIN) return 0;
    // EINTR (another signal): wait for the rest of the time.
  }
}

// Frames until a stop signal, which ends it at once: a frame being gathered
// (meta or a mount slow to answer) is not waited for. Exit code 128 + signal
// (130 for SIGINT, 143 for SIGTERM).
int Watch(AdminTarget& target, bool json, Duration interval) {
  Watcher watcher(target.meta, json);
  for (;;) {
    // Gathered on another thread, so that the signal is taken meanwhile.
    auto frame = std::make_shared<FrameData>();
    auto done = std::make_shared<std::atomic<bool>>(false);
    std::thread gather([frame, done, &target] {
      *frame = Gather(target);
      done->store(true);
    });
    int sig = 0;
    while (!done->load() && sig == 0) sig = WaitStopSignal(std::chrono::milliseconds(50));
    if (sig != 0 && !done->load()) {
      // The gathering thread uses `target`, which must outlive it: leave
      // the process without unwinding. Nothing is left behind (a mount
      // probe child dies with its parent).
      std::fflush(stdout);
      std::_Exit(128 + sig);
    }
    gather.join();
    if (sig != 0) return 128 + sig;
    if (frame->status.ok()) {
      watcher.Frame(frame->cluster, frame->mounts);
    } else {
      watcher.Unreachable(frame->status);
    }
    sig = WaitStopSignal(interval.value);
    if (sig != 0) return 128 + sig;
  }
}

}  // namespace

void RegisterStatus(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand("status", "Show nodes, volumes, capacity, files and chunks");
  auto opts = std::make_shared<AdminOptions>();
  opts->Register(cmd);
  auto watch = std::make_shared<bool>(false);
  auto interval = std::make_shared<std::string>("2s");
  cmd->add_flag("--watch,-w", *watch,
                "refresh every --interval until Ctrl-C, with per-node traffic rates (--json: one frame per line)");
  cmd->add_option("--interval", *interval, "time between two --watch frames")->capture_default_str();
  cmd->callback([opts, exit_code, watch, interval] {
    ExitOnStopSignal();  // (--watch takes the signals between frames itself; either way 128 +
                         // signal)
    auto every = ParseDuration(*interval);
    if (!every.ok() || every->value.count() <= 0) {
      *exit_code = Fail("status", Status(StatusCode::kInvalidArgument,
                                         fmt::format("--interval '{}' is not a positive duration", *interval)));
      return;
    }
    auto target = ConnectAdmin(*opts);
    if (!target.ok()) {
      *exit_code = Fail("status", target.status());
      return;
    }
    if (*watch) {
      *exit_code = Watch(*target, opts->json, *every);
      return;
    }
    auto cluster = target->admin->GetStatus();
    if (!cluster.ok()) {
      *exit_code = Fail("status", cluster.status().WithContext("meta " + target->meta));
      return;
    }
    std::vector<LocalMount> mounts = QueryLocalMounts(cluster->cluster_id);
    if (opts->json) {
      fmt::print("{}\n", ToJson(*cluster, target->meta, mounts).dump(2));
    } else {
      PrintTable(*cluster, target->meta, mounts);
    }
    *exit_code = 0;
  });
}

}  // namespace t0fs::cli
