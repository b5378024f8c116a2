// `t0fs objective set|get PATH`, `t0fs layout FILE`, `t0fs node drain|undrain ID`.
//
// PATH may be a path on a t0fs mount (the inode is its st_ino) or, with the
// "t0fs:" prefix, a path inside the file system (t0fs:/ckpt/run1).
#include <sys/stat.h>

#include <charconv>
#include <fstream>
#include <map>
#include <sstream>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/admin.h"
#include "cli/command_util.h"
#include "cli/commands.h"
#include "common/config.h"
#include "rpc/channel.h"
#include "rpc/proto/meta.pb.h"
#include "t0fs/client.h"

namespace t0fs::cli {
namespace {

bool IsInnerPath(const std::string& path) { return path.rfind("t0fs:", 0) == 0; }

// The inode of a path on a t0fs mount: its st_ino (no meta needed).
Result<uint64_t> MountedInode(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return Status::FromErrno(errno, path);
  // A FUSE mount of t0fs reports t0fs inode numbers as st_ino; the device
  // check keeps a path on another file system from naming a random inode.
  std::ifstream mounts("/proc/self/mountinfo");
  for (std::string line; std::getline(mounts, line);) {
    if (line.find(" - fuse.t0fs ") == std::string::npos) continue;
    std::istringstream fields(line);
    std::string id, parent, dev, root, point;
    fields >> id >> parent >> dev >> root >> point;
    struct stat mst {};
    if (::stat(point.c_str(), &mst) == 0 && mst.st_dev == st.st_dev) return static_cast<uint64_t>(st.st_ino);
  }
  return Status(StatusCode::kInvalidArgument,
                fmt::format("{} is not on a t0fs mount (for a path inside t0fs, write t0fs:/path)", path));
}

// What can be said about PATH without meta: a local path must be on a t0fs
// mount. Checked before connecting, so that the error is about the path.
Status PrecheckPath(const std::string& path) {
  if (IsInnerPath(path)) return Status::Ok();
  return MountedInode(path).status();
}

// The inode PATH names.
Result<uint64_t> ResolveInode(AdminTarget& t, const std::string& path) {
  if (IsInnerPath(path)) {
    std::string inner = path.substr(5);
    if (inner.empty() || inner[0] != '/') return Status(StatusCode::kInvalidArgument, "t0fs: paths are absolute");
    uint64_t ino = 1;
    size_t pos = 1;
    while (pos < inner.size()) {
      size_t end = inner.find('/', pos);
      if (end == std::string::npos) end = inner.size();
      std::string part = inner.substr(pos, end - pos);
      pos = end + 1;
      if (part.empty() || part == ".") continue;
      pb::LookupReq req;
      req.set_parent(ino);
      req.set_name(part);
      pb::AttrRsp rsp;
      Status st = t.channel->Call(rpc::Method::kLookup, req, &rsp);
      if (!st.ok()) return st.WithContext(path);
      ino = rsp.attr().ino();
    }
    return ino;
  }
  return MountedInode(path);
}

Result<pb::Objective> ParseObjective(const std::vector<std::string>& items, pb::Objective base) {
  for (const std::string& item : items) {
    size_t eq = item.find('=');
    if (eq == std::string::npos) {
      return Status(StatusCode::kInvalidArgument, fmt::format("'{}': expected key=value", item));
    }
    std::string key = item.substr(0, eq), value = item.substr(eq + 1);
    if (key == "replicas") {
      uint32_t n = 0;
      auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
      if (ec != std::errc() || ptr != value.data() + value.size() || n == 0 || n > 16) {
        return Status(StatusCode::kInvalidArgument, fmt::format("replicas must be 1..16, not '{}'", value));
      }
      base.set_replicas(n);
    } else if (key == "placement") {
      if (value != "local" && value != "spread") {
        return Status(StatusCode::kInvalidArgument, fmt::format("placement must be local or spread, not '{}'", value));
      }
      base.set_placement(value == "local" ? 0 : 1);
    } else if (key == "nodes") {
      base.clear_nodes();
      size_t pos = 0;
      while (pos <= value.size() && !value.empty()) {
        size_t end = value.find(',', pos);
        if (end == std::string::npos) end = value.size();
        std::string id = value.substr(pos, end - pos);
        uint64_t n = 0;
        auto [ptr, ec] = std::from_chars(id.data(), id.data() + id.size(), n);
        if (ec != std::errc() || ptr != id.data() + id.size() || n == 0) {
          return Status(StatusCode::kInvalidArgument, fmt::format("nodes: '{}' is not a node id", id));
        }
        base.add_nodes(n);
        pos = end + 1;
      }
    } else if (key == "chunk-size") {
      ASSIGN_OR_RETURN(ByteSize size, ParseByteSize(value));
      base.set_chunk_size(size.bytes);
    } else {
      return Status(StatusCode::kInvalidArgument,
                    fmt::format("unknown objective key '{}' (replicas, placement, nodes, chunk-size)", key));
    }
  }
  return base;
}

std::string Describe(const pb::Objective& o) {
  std::string nodes;
  for (uint64_t n : o.nodes()) nodes += (nodes.empty() ? "" : ",") + std::to_string(n);
  return fmt::format("replicas={} placement={}{}{}", o.replicas(), o.placement() == 0 ? "local" : "spread",
                     nodes.empty() ? "" : " nodes=" + nodes,
                     o.chunk_size() == 0 ? "" : " chunk-size=" + FormatByteSize(o.chunk_size()));
}

struct ObjectiveState {
  AdminOptions admin;
  std::string path;
  std::vector<std::string> items;
  bool no_recursive = false;
};

int RunObjective(ObjectiveState& s, bool set) {
  // Bad settings and paths are reported before anything is contacted.
  if (set) {
    auto valid = ParseObjective(s.items, pb::Objective());
    if (!valid.ok()) return Fail("objective", valid.status());
  }
  if (Status st = PrecheckPath(s.path); !st.ok()) return Fail("objective", st);
  auto target = ConnectAdmin(s.admin);
  if (!target.ok()) return Fail("objective", target.status());
  auto ino = ResolveInode(*target, s.path);
  if (!ino.ok()) return Fail("objective", ino.status());
  pb::ObjectiveReq req;
  req.set_ino(*ino);
  if (set) {
    pb::ObjectiveReq get;
    get.set_ino(*ino);
    pb::ObjectiveRsp current;
    Status st = target->channel->Call(rpc::Method::kObjective, get, &current);
    if (!st.ok()) return Fail("objective", st.WithContext(s.path));
    auto obj = ParseObjective(s.items, current.objective());
    if (!obj.ok()) return Fail("objective", obj.status());
    req.set_set(true);
    req.set_recursive(!s.no_recursive);
    *req.mutable_objective() = *obj;
  }
  pb::ObjectiveRsp rsp;
  Status st = target->channel->Call(rpc::Method::kObjective, req, &rsp);
  if (!st.ok()) return Fail("objective", st.WithContext(s.path));
  if (s.admin.json) {
    nlohmann::json nodes = nlohmann::json::array();
    for (uint64_t n : rsp.objective().nodes()) nodes.push_back(n);
    fmt::print("{}\n", nlohmann::json{{"path", s.path},
                                      {"replicas", rsp.objective().replicas()},
                                      {"placement", rsp.objective().placement() == 0 ? "local" : "spread"},
                                      {"nodes", nodes},
                                      {"chunk_size", rsp.objective().chunk_size()},
                                      {"changed", rsp.changed()}}
                           .dump(2));
  } else if (set) {
    fmt::print("{}: {} ({} inode(s) updated; existing data converges in the background: t0fs status)\n", s.path,
               Describe(rsp.objective()), rsp.changed());
  } else {
    fmt::print("{}: {}\n", s.path, Describe(rsp.objective()));
  }
  return 0;
}

struct LayoutState {
  AdminOptions admin;
  std::string path;
  uint64_t node_id = 0;  // the caller's node; 0: every node on this host is local
};

int RunLayout(LayoutState& s) {
  if (Status st = PrecheckPath(s.path); !st.ok()) return Fail("layout", st);
  auto target = ConnectAdmin(s.admin);
  if (!target.ok()) return Fail("layout", target.status());
  auto ino = ResolveInode(*target, s.path);
  if (!ino.ok()) return Fail("layout", ino.status());
  pb::GetAttrReq areq;
  areq.set_ino(*ino);
  pb::AttrRsp attr;
  Status st = target->channel->Call(rpc::Method::kGetAttr, areq, &attr);
  if (!st.ok()) return Fail("layout", st.WithContext(s.path));
  pb::ClusterStatusRsp cluster;
  st = target->channel->Call(rpc::Method::kClusterStatus, pb::Empty(), &cluster);
  if (!st.ok()) return Fail("layout", st);
  std::string here = rpc::LocalHostId();
  std::map<uint64_t, const pb::NodeStatus*> nodes;
  for (const auto& n : cluster.nodes()) nodes[n.node()] = &n;
  pb::ObjectiveReq oreq;
  oreq.set_ino(*ino);
  pb::ObjectiveRsp obj;
  (void)target->channel->Call(rpc::Method::kObjective, oreq, &obj);
  std::vector<pb::ChunkLayout> chunks;
  for (uint64_t first = 0;;) {
    pb::GetLayoutReq req;
    req.set_ino(*ino);
    req.set_first_index(first);
    req.set_count(4096);
    pb::LayoutRsp rsp;
    st = target->channel->Call(rpc::Method::kGetLayout, req, &rsp);
    if (!st.ok()) return Fail("layout", st.WithContext(s.path));
    for (const auto& c : rsp.layout().chunks()) chunks.push_back(c);
    if (rsp.layout().chunks_size() == 0) break;
    first = rsp.layout().chunks(rsp.layout().chunks_size() - 1).index() + 1;
  }
  auto state_name = [](uint32_t state) { return state == 0 ? "healthy" : state == 1 ? "stale" : "pending"; };
  auto is_local = [&](uint64_t node) {
    if (s.node_id != 0) return node == s.node_id;
    auto it = nodes.find(node);
    return it != nodes.end() && it->second->host_id() == here;
  };
  // Whether a mount on the caller's node can hand this file to the kernel.
  client::LayoutInfo info;
  info.chunk_size = attr.attr().chunk_size();
  info.size = attr.attr().size();
  uint64_t viewer = s.node_id;
  for (const auto& c : chunks) {
    client::ChunkInfo ci;
    ci.index = c.index();
    for (const auto& r : c.replicas()) {
      ci.replicas.push_back(client::ReplicaInfo{NodeId(r.node()), VolumeId(r.volume()), ChunkId(r.chunk()),
                                                r.version(), is_local(r.node()), r.state()});
      if (viewer == 0 && is_local(r.node())) viewer = r.node();
    }
    info.chunks.push_back(std::move(ci));
  }
  if (viewer == 0) {
    for (const auto& [id, n] : nodes) {
      if (n->host_id() == here) viewer = id;
    }
  }
  const client::PassthroughVerdict pt = client::PassthroughEligibility(info, NodeId(viewer));
  const char* pt_mode = pt.mode == client::PassthroughMode::kReadWrite ? "read-write"
                        : pt.mode == client::PassthroughMode::kRead   ? "read"
                                                                      : "none";
  if (s.admin.json) {
    nlohmann::json out = {{"path", s.path},
                          {"passthrough", {{"node", viewer}, {"mode", pt_mode}, {"reason", pt.reason}}},
                          {"ino", *ino},
                          {"size", attr.attr().size()},
                          {"chunk_size", attr.attr().chunk_size()},
                          {"objective", Describe(obj.objective())}};
    nlohmann::json list = nlohmann::json::array();
    for (const auto& c : chunks) {
      nlohmann::json reps = nlohmann::json::array();
      for (const auto& r : c.replicas()) {
        reps.push_back({{"node", r.node()}, {"volume", r.volume()}, {"chunk", r.chunk()}, {"version", r.version()},
                        {"state", state_name(r.state())}, {"local", is_local(r.node())}});
      }
      list.push_back({{"index", c.index()}, {"replicas", reps}});
    }
    out["chunks"] = list;
    fmt::print("{}\n", out.dump(2));
    return 0;
  }
  fmt::print("{}: inode {}, {} in {} chunk(s) of {} ({})\n", s.path, *ino, FormatByteSize(attr.attr().size()),
             chunks.size(), FormatByteSize(attr.attr().chunk_size()), Describe(obj.objective()));
  for (const auto& c : chunks) {
    std::string reps;
    for (const auto& r : c.replicas()) {
      auto it = nodes.find(r.node());
      reps += fmt::format("  node {}{} chunk {} v{}{}{}", r.node(),
                          it == nodes.end() ? "" : " (" + it->second->address() + ")", r.chunk(), r.version(),
                          r.state() == 0 ? "" : fmt::format(" [{}]", state_name(r.state())),
                          is_local(r.node()) ? " [local]" : "");
    }
    fmt::print("  #{:<6}{}\n", c.index(), reps);
  }
  if (pt.mode == client::PassthroughMode::kNone) {
    fmt::print("passthrough: not eligible: {}\n", pt.reason);
  } else {
    fmt::print("passthrough: eligible on node {}: {}\n", viewer, pt.reason);
  }
  return 0;
}

struct NodeState {
  AdminOptions admin;
  uint64_t node = 0;
};

int RunNodeAdmin(NodeState& s, uint32_t admin_state) {
  auto target = ConnectAdmin(s.admin);
  if (!target.ok()) return Fail("node", target.status());
  pb::NodeAdminReq req;
  req.set_node(s.node);
  req.set_admin_state(admin_state);
  pb::Empty rsp;
  Status st = target->channel->Call(rpc::Method::kNodeAdmin, req, &rsp);
  if (!st.ok()) return Fail("node", st);
  if (admin_state == 1) {
    fmt::print("node {} is draining: its chunks move to other nodes (progress: t0fs status)\n", s.node);
  } else {
    fmt::print("node {} is active again\n", s.node);
  }
  return 0;
}

}  // namespace

void RegisterObjective(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand("objective", "Set or show the replica objective of a file or directory tree");
  cmd->require_subcommand(1);
  auto set_state = std::make_shared<ObjectiveState>();
  auto* set = cmd->add_subcommand("set", "Set replicas, placement, nodes or chunk size (applies below a directory)");
  set->add_option("PATH", set_state->path, "path on a t0fs mount, or t0fs:/path")->required();
  set->add_option("SETTINGS", set_state->items,
                  "replicas=N placement=local|spread nodes=ID,ID chunk-size=SIZE")->required();
  set->add_flag("--no-recursive", set_state->no_recursive, "a directory only, not what is already below it");
  set_state->admin.Register(set);
  set->callback([set_state, exit_code] { *exit_code = RunObjective(*set_state, true); });
  auto get_state = std::make_shared<ObjectiveState>();
  auto* get = cmd->add_subcommand("get", "Show the objective of a file or directory");
  get->add_option("PATH", get_state->path, "path on a t0fs mount, or t0fs:/path")->required();
  get_state->admin.Register(get);
  get->callback([get_state, exit_code] { *exit_code = RunObjective(*get_state, false); });
}

void RegisterLayout(CLI::App& app, int* exit_code) {
  auto state = std::make_shared<LayoutState>();
  auto* cmd = app.add_subcommand("layout", "Print every chunk of a file and its replicas (local ones marked)");
  cmd->add_option("FILE", state->path, "path on a t0fs mount, or t0fs:/path")->required();
  cmd->add_option("--node-id", state->node_id,
                  "the caller's data node, marked [local] (default: every node on this host)");
  state->admin.Register(cmd);
  cmd->callback([state, exit_code] { *exit_code = RunLayout(*state); });
}

void RegisterNode(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand("node", "Administer data nodes (drain before removing one)");
  cmd->require_subcommand(1);
  auto drain = std::make_shared<NodeState>();
  auto* d = cmd->add_subcommand("drain", "Move every chunk off a node (it takes no new data meanwhile)");
  d->add_option("ID", drain->node, "node id (t0fs status)")->required();
  drain->admin.Register(d);
  d->callback([drain, exit_code] { *exit_code = RunNodeAdmin(*drain, 1); });
  auto undrain = std::make_shared<NodeState>();
  auto* u = cmd->add_subcommand("undrain", "Let a drained node take data again");
  u->add_option("ID", undrain->node, "node id")->required();
  undrain->admin.Register(u);
  u->callback([undrain, exit_code] { *exit_code = RunNodeAdmin(*undrain, 0); });
}

}  // namespace t0fs::cli
