// `t0fs status`: nodes, volumes, capacity, files and chunks of a cluster.
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/admin.h"
#include "cli/command_util.h"
#include "cli/commands.h"
#include "common/config.h"
#include "rpc/proto/meta.pb.h"

namespace t0fs::cli {
namespace {

nlohmann::json ToJson(const pb::ClusterStatusRsp& s, const std::string& meta) {
  nlohmann::json nodes = nlohmann::json::array();
  for (const pb::NodeStatus& n : s.nodes()) {
    nlohmann::json vols = nlohmann::json::array();
    for (const pb::VolumeInfo& v : n.volumes()) {
      vols.push_back({{"volume", v.volume()}, {"path", v.path()}, {"total_bytes", v.total_bytes()},
                      {"free_bytes", v.free_bytes()}, {"chunks", v.chunks()}});
    }
    nodes.push_back({{"node", n.node()}, {"state", n.state()}, {"address", n.address()},
                     {"hostname", n.hostname()}, {"last_heartbeat_ms_ago", n.last_heartbeat_ms_ago()},
                     {"replicas", n.replicas()}, {"volumes", vols}});
  }
  return {{"meta", meta},           {"cluster_id", s.cluster_id()}, {"nodes", nodes},
          {"files", s.files()},     {"directories", s.directories()}, {"chunks", s.chunks()},
          {"logical_bytes", s.logical_bytes()}, {"sessions", s.sessions()},
          {"open_handles", s.open_handles()},   {"garbage_chunks", s.garbage_chunks()},
          {"repair", {{"under_replicated", s.under_replicated()}, {"over_replicated", s.over_replicated()},
                      {"stale_replicas", s.stale_replicas()}, {"copies_running", s.copies_running()},
                      {"copies_done", s.copies_done()}, {"copies_failed", s.copies_failed()},
                      {"copied_bytes", s.copied_bytes()}, {"copy_rate_bps", s.copy_rate_bps()}}}};
}

void PrintTable(const pb::ClusterStatusRsp& s, const std::string& meta) {
  fmt::print("cluster {} (meta {})\n\n", s.cluster_id(), meta);
  fmt::print("{:<6} {:<9} {:<22} {:<16} {:>7} {:>11} {:>11} {:>9} {:>10}\n", "NODE", "STATE", "ADDRESS", "HOST",
             "VOLUMES", "USED", "FREE", "REPLICAS", "LAST SEEN");
  uint64_t total = 0, free = 0;
  for (const pb::NodeStatus& n : s.nodes()) {
    uint64_t node_total = 0, node_free = 0, chunks = 0;
    for (const pb::VolumeInfo& v : n.volumes()) {
      node_total += v.total_bytes();
      node_free += v.free_bytes();
      chunks += v.chunks();
    }
    total += node_total;
    free += node_free;
    (void)chunks;
    fmt::print("{:<6} {:<9} {:<22} {:<16} {:>7} {:>11} {:>11} {:>9} {:>9.1f}s\n", n.node(), n.state(), n.address(),
               n.hostname().substr(0, 16), n.volumes_size(), FormatByteSize(node_total - node_free),
               FormatByteSize(node_free), n.replicas(), n.last_heartbeat_ms_ago() / 1000.0);
    for (const pb::VolumeInfo& v : n.volumes()) {
      fmt::print("         volume {} {} ({} of {} free)\n", v.volume(), v.path(), FormatByteSize(v.free_bytes()),
                 FormatByteSize(v.total_bytes()));
    }
  }
  if (s.nodes_size() == 0) fmt::print("(no data nodes registered)\n");
  fmt::print("\ncapacity {} used, {} free of {}\n", FormatByteSize(total - free), FormatByteSize(free),
             FormatByteSize(total));
  fmt::print("files {}, directories {}, chunks {}, data {}\n", s.files(), s.directories(), s.chunks(),
             FormatByteSize(s.logical_bytes()));
  fmt::print("client sessions {}, open files {}, chunks awaiting removal {}\n", s.sessions(), s.open_handles(),
             s.garbage_chunks());
  if (s.under_replicated() == 0 && s.copies_running() == 0 && s.stale_replicas() == 0) {
    fmt::print("repair: every chunk meets its objective ({} copies done, {} copied)\n", s.copies_done(),
               FormatByteSize(s.copied_bytes()));
  } else {
    fmt::print("repair: {} chunk(s) under-replicated, {} stale replica(s), {} copies running, {} done, {} failed; "
               "{} copied, {}/s over the last minute\n",
               s.under_replicated(), s.stale_replicas(), s.copies_running(), s.copies_done(), s.copies_failed(),
               FormatByteSize(s.copied_bytes()), FormatByteSize(static_cast<uint64_t>(s.copy_rate_bps())));
  }
}

}  // namespace

void RegisterStatus(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand("status", "Show nodes, volumes, capacity, files and chunks");
  auto opts = std::make_shared<AdminOptions>();
  opts->Register(cmd);
  cmd->callback([opts, exit_code] {
    auto target = ConnectAdmin(*opts);
    if (!target.ok()) {
      *exit_code = Fail("status", target.status());
      return;
    }
    pb::Empty req;
    pb::ClusterStatusRsp rsp;
    Status st = target->channel->Call(rpc::Method::kClusterStatus, req, &rsp);
    if (!st.ok()) {
      *exit_code = Fail("status", st.WithContext("meta " + target->meta));
      return;
    }
    if (opts->json) {
      fmt::print("{}\n", ToJson(rsp, target->meta).dump(2));
    } else {
      PrintTable(rsp, target->meta);
    }
    *exit_code = 0;
  });
}

}  // namespace t0fs::cli
