// `t0fs layout FILE`: every chunk of a file, its replicas (the local ones
// marked), and whether a mount on this host can hand the file to the kernel.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "cli/admin.h"
#include "cli/admin_path.h"
#include "cli/command_util.h"
#include "cli/commands.h"
#include "cli/signals.h"
#include "common/config.h"
#include "ec/stripe_record.h"
#include "t0fs/admin.h"
#include "t0fs/client.h"

namespace t0fs::cli {
namespace {

struct LayoutState {
  AdminOptions admin;
  std::string path;
  uint64_t node_id = 0;  // the caller's node; 0: every node on this host is local
};

// The directory of `path` (a mount path or t0fs:/…); empty at the top.
std::string ParentOf(std::string path) {
  while (path.size() > 1 && path.back() == '/' && path != "t0fs:/") path.pop_back();
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos || path == "/" || path == "t0fs:/") return "";
  if (slash == 0) return "/";
  if (path.compare(0, slash + 1, "t0fs:/") == 0) return "t0fs:/";
  return path.substr(0, slash);
}

// The directories above `path` with a keep-newest=N rule (the rule is not
// inherited, so the file's own objective does not show it), nearest first:
// each keeps the newest N of its entries local, with all below them.
std::vector<std::pair<std::string, uint32_t>> KeepNewestAbove(client::AdminClient& admin,
                                                              const std::string& path) {
  std::vector<std::pair<std::string, uint32_t>> rules;
  std::string dir = ParentOf(path);
  for (int depth = 0; depth < 256 && !dir.empty(); ++depth, dir = ParentOf(dir)) {
    auto ino = ResolveInode(admin, dir);
    if (!ino.ok()) break;
    auto objective = admin.GetObjective(InodeId(*ino));
    if (objective.ok() && objective->keep_newest != 0)
      rules.emplace_back(dir, objective->keep_newest);
    if (InodeId(*ino) == kRootInode) break;
  }
  return rules;
}

int RunLayout(LayoutState& s) {
  if (Status st = PrecheckPath(s.path); !st.ok()) return Fail("layout", st);
  auto target = ConnectAdmin(s.admin, LocatingPath(s.path));
  if (!target.ok()) return Fail("layout", target.status());
  client::AdminClient& admin = *target->admin;
  auto ino = ResolveInode(admin, s.path);
  if (!ino.ok()) return Fail("layout", ino.status());
  auto attr = admin.GetAttr(InodeId(*ino));
  if (!attr.ok()) return Fail("layout", attr.status().WithContext(s.path));
  auto node_list = admin.Nodes();
  if (!node_list.ok()) return Fail("layout", node_list.status());
  std::string here = client::LocalHostId();
  std::map<uint64_t, const client::NodeStatus*> nodes;
  for (const auto& n : *node_list) nodes[n.node.value()] = &n;
  // Shown when known: an error here leaves the default (replicas=0).
  auto got = admin.GetObjective(InodeId(*ino));
  const client::Objective objective = got.ok() ? *got : client::Objective();
  auto chunks = admin.Chunks(InodeId(*ino));
  if (!chunks.ok()) return Fail("layout", chunks.status().WithContext(s.path));
  auto state_name = [](client::ReplicaState state) {
    return state == client::ReplicaState::kHealthy     ? "healthy"
           : state == client::ReplicaState::kStale     ? "stale"
           : state == client::ReplicaState::kOffloaded ? "offloaded"
                                                       : "pending";
  };
  auto is_local = [&](NodeId node) {
    if (s.node_id != 0) return node.value() == s.node_id;
    auto it = nodes.find(node.value());
    return it != nodes.end() && it->second->host_id == here;
  };
  // Whether a mount on the caller's node can hand this file to the kernel.
  client::LayoutInfo info;
  info.chunk_size = attr->chunk_size;
  info.size = attr->size;
  uint64_t viewer = s.node_id;
  for (client::ChunkInfo& ci : *chunks) {
    for (client::ReplicaInfo& r : ci.replicas) {
      r.local = is_local(r.node);
      if (viewer == 0 && r.local) viewer = r.node.value();
    }
  }
  info.chunks = *chunks;
  if (viewer == 0) {
    for (const auto& [id, n] : nodes) {
      if (n->host_id == here) viewer = id;
    }
  }
  const client::PassthroughVerdict pt = client::PassthroughEligibility(info, NodeId(viewer));
  // The protection state: chunks with fewer healthy replicas (on distinct
  // nodes) than the protection goal, or without a copy of their newest
  // version in the object tier, or without all K+M erasure-coded cells of
  // it on nodes that are not lost (as meta counts them: a node down for
  // less than repair-grace still holds its cells).
  const client::Protection& goal = objective.protect;
  const bool served = goal.kind == client::ProtectKind::kReplicas ||
                      goal.kind == client::ProtectKind::kObject ||
                      goal.kind == client::ProtectKind::kEc;
  size_t chunks_below = 0;
  size_t offloaded = 0;               // chunks whose data is only in the object tier or the cells
  std::vector<ec::EcStripe> stripes;  // by chunk, in order
  for (const client::ChunkInfo& c : *chunks) {
    auto stripe = ec::ParseStripe(c.ec);
    if (!stripe.ok()) {
      fmt::print(stderr, "t0fs layout: chunk #{}: {}\n", c.index, stripe.status().ToString());
    }
    stripes.push_back(stripe.ok() ? *stripe : ec::EcStripe{});
    std::set<uint64_t> healthy;
    uint64_t newest = 0;
    bool any_offloaded = false;
    for (const client::ReplicaInfo& r : c.replicas) {
      if (r.state == client::ReplicaState::kHealthy) healthy.insert(r.node.value());
      any_offloaded |= r.state == client::ReplicaState::kOffloaded;
      newest = std::max(newest, r.version);
    }
    offloaded += healthy.empty() && any_offloaded;
    if (goal.kind == client::ProtectKind::kReplicas) chunks_below += healthy.size() < goal.copies;
    if (goal.kind == client::ProtectKind::kObject) {
      chunks_below += c.object_version == 0 || c.object_version < newest;
    }
    if (goal.kind == client::ProtectKind::kEc) {
      const ec::EcStripe& e = stripes.back();
      bool complete = !e.empty() && e.version >= newest && e.k == goal.copies &&
                      e.m == goal.parity && e.placed() == e.cells.size();
      for (const ec::CellPlace& cell : e.cells) {
        auto it = nodes.find(cell.node.value());
        complete = complete && it != nodes.end() && !it->second->lost;
      }
      chunks_below += !complete;
    }
  }
  const char* protection = goal.kind == client::ProtectKind::kNone ? "none"
                           : !served                               ? "not served"
                           : chunks_below == 0                     ? "protected"
                                                                   : "waiting";
  const char* pt_mode = pt.mode == client::PassthroughMode::kReadWrite ? "read-write"
                        : pt.mode == client::PassthroughMode::kRead    ? "read"
                                                                       : "none";
  // keep-newest rules above the file: they keep it local whatever keep-local says.
  std::vector<std::pair<std::string, uint32_t>> newest_rules;
  if (goal.keep_local != client::KeepLocal::kKeep) {
    const std::string from = IsInnerPath(s.path)
                                 ? s.path
                                 : std::filesystem::absolute(s.path).lexically_normal().string();
    newest_rules = KeepNewestAbove(admin, from);
  }
  if (s.admin.json) {
    nlohmann::json out = {
        {"path", s.path},
        {"passthrough", {{"node", viewer}, {"mode", pt_mode}, {"reason", pt.reason}}},
        {"ino", *ino},
        {"size", attr->size},
        {"chunk_size", attr->chunk_size},
        {"objective", client::DescribeObjective(objective)},
        {"protection",
         {{"goal", client::DescribeProtection(goal)},
          {"state", protection},
          {"chunks_below", chunks_below},
          {"offloaded_chunks", offloaded}}}};
    nlohmann::json list = nlohmann::json::array();
    for (size_t i = 0; i < chunks->size(); ++i) {
      const client::ChunkInfo& c = (*chunks)[i];
      nlohmann::json reps = nlohmann::json::array();
      for (const auto& r : c.replicas) {
        reps.push_back({{"node", r.node.value()},
                        {"volume", r.volume.value()},
                        {"chunk", r.chunk.value()},
                        {"version", r.version},
                        {"state", state_name(r.state)},
                        {"local", r.local}});
      }
      nlohmann::json cells = nullptr;
      if (const ec::EcStripe& e = stripes[i]; !e.empty()) {
        nlohmann::json places = nlohmann::json::array();
        for (size_t j = 0; j < e.cells.size(); ++j) {
          places.push_back({{"cell", j},
                            {"node", e.cells[j].node.value()},
                            {"volume", e.cells[j].volume.value()}});
        }
        cells = {{"k", e.k},           {"m", e.m},       {"unit", e.unit}, {"version", e.version},
                 {"length", e.length}, {"cells", places}};
      }
      list.push_back({{"index", c.index},
                      {"replicas", reps},
                      {"object_version", c.object_version},
                      {"ec", cells}});
    }
    out["chunks"] = list;
    nlohmann::json rules = nlohmann::json::array();
    for (const auto& [dir, n] : newest_rules) rules.push_back({{"dir", dir}, {"keep_newest", n}});
    out["keep_newest_above"] = rules;
    fmt::print("{}\n", out.dump(2));
    return 0;
  }
  fmt::print("{}: inode {}, {} in {} chunk(s) of {} ({})\n", s.path, *ino, FormatByteSize(attr->size),
             chunks->size(), FormatByteSize(attr->chunk_size), client::DescribeObjective(objective));
  for (size_t i = 0; i < chunks->size(); ++i) {
    const client::ChunkInfo& c = (*chunks)[i];
    std::string reps;
    for (const auto& r : c.replicas) {
      auto it = nodes.find(r.node.value());
      reps += fmt::format("  node {}{} chunk {} v{}{}{}", r.node.value(),
                          it == nodes.end() ? "" : " (" + it->second->address + ")", r.chunk.value(), r.version,
                          r.state == client::ReplicaState::kHealthy ? "" : fmt::format(" [{}]", state_name(r.state)),
                          r.local ? " [local]" : "");
    }
    if (c.object_version != 0) reps += fmt::format("  object v{}", c.object_version);
    if (const ec::EcStripe& e = stripes[i]; !e.empty()) {
      reps += fmt::format("  ec {}+{} v{}:", e.k, e.m, e.version);
      for (size_t j = 0; j < e.cells.size(); ++j) {
        reps += e.cells[j].node.value() == 0
                    ? fmt::format(" {}@-", j)
                    : fmt::format(" {}@node{}", j, e.cells[j].node.value());
      }
    }
    fmt::print("  #{:<6}{}\n", c.index, reps);
  }
  if (goal.kind == client::ProtectKind::kNone) {
    fmt::print("protection: none (no protect= goal: the replicas written are all there is)\n");
  } else if (!served) {
    fmt::print("protection: protect={} is not served by this version\n",
               client::DescribeProtection(goal));
  } else if (chunks_below == 0) {
    fmt::print("protection: protected (protect={})\n", client::DescribeProtection(goal));
  } else {
    fmt::print(
        "protection: waiting: {} of {} chunk(s) below protect={} (due after the last close, or {}s "
        "after its last change for a file kept open)\n",
        chunks_below, chunks->size(), client::DescribeProtection(goal), goal.within_s);
  }
  for (const auto& [dir, n] : newest_rules) {
    fmt::print(
        "local copy: kept while its entry in {} is among the {} newest there (keep-newest={}), "
        "whatever keep-local says\n",
        dir, n, n);
  }
  if (offloaded > 0) {
    fmt::print(
        "local copy: {} of {} chunk(s) offloaded (keep-local={}): read from the {}; a write "
        "stages a chunk back\n",
        offloaded, chunks->size(),
        goal.keep_local == client::KeepLocal::kPressure ? "pressure" : "drop",
        goal.kind == client::ProtectKind::kEc ? "erasure-coded cells" : "object tier");
  }
  if (pt.mode == client::PassthroughMode::kNone) {
    fmt::print("passthrough: not eligible: {}\n", pt.reason);
  } else {
    fmt::print("passthrough: eligible on node {}: {}\n", viewer, pt.reason);
  }
  return 0;
}

}  // namespace

void RegisterLayout(CLI::App& app, int* exit_code) {
  auto state = std::make_shared<LayoutState>();
  auto* cmd = app.add_subcommand(
      "layout", "Print every chunk of a file and its replicas (local ones marked)");
  cmd->add_option("FILE", state->path, "path on a t0fs mount, or t0fs:/path")->required();
  cmd->add_option("--node-id", state->node_id,
                  "the caller's data node, marked [local] (default: every node on this host)");
  state->admin.Register(cmd, false);
  cmd->callback([state, exit_code] {
    ExitOnStopSignal();
    *exit_code = RunLayout(*state);
  });
}

}  // namespace t0fs::cli
