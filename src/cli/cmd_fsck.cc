// `t0fs fsck`: namespace, layout and redundancy check of a running cluster.
//
// Meta checks its namespace and layouts (MetaStore::Check); then the chunk
// files each data node holds are compared with the layouts: files no layout
// references (orphans) and committed chunks whose file is missing. Data nodes
// are listed before meta so that a chunk created meanwhile is not mistaken
// for an orphan.
//
// What is a problem (exit 1) and what is not:
//  - a chunk with fewer healthy replicas than its file's objective —
//    counting a replica on a down node as not there — is a problem, also
//    while repair is restoring it: the data is less safe than asked for
//    until then (`t0fs status` shows repair progress);
//  - a replica that repair replaced waits in the garbage queue until its
//    node takes it (a down node: when it is back). That is expected: a
//    "pending removal" note. Only the same (chunk, node) both live and queued
//    is a problem (meta's check reports it).
//  - a node that is not up cannot be checked: a warning.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "cli/admin.h"
#include "cli/command_util.h"
#include "cli/commands.h"
#include "meta/store/meta_store.h"
#include "rpc/proto/data.pb.h"
#include "rpc/proto/meta.pb.h"

namespace t0fs::cli {
namespace {

// Notes of one kind beyond this many are summarized in one line.
constexpr size_t kMaxNotes = 20;

struct FsckReport {
  std::vector<std::string> problems;
  std::vector<std::string> below_objective;
  std::vector<std::string> warnings;
  std::vector<std::string> notes;
  uint64_t inodes = 0, meta_chunks = 0, chunk_files = 0, nodes_checked = 0;
  bool clean() const { return problems.empty() && below_objective.empty(); }
};

struct OnDisk {
  uint64_t version = 0;
  uint64_t length = 0;
};

struct MetaChunkList {
  std::map<std::pair<uint64_t, uint64_t>, pb::ChunkRef> live;  // (chunk, node) → layout replica
  std::map<std::pair<uint64_t, uint64_t>, pb::ChunkRef>
      garbage;  // (chunk, node) → queued for removal
};

Result<MetaChunkList> MetaChunks(AdminTarget& t) {
  MetaChunkList out;
  for (uint64_t after = 0;;) {
    pb::ChunkListReq req;
    req.set_after(after);
    req.set_max(10000);
    pb::ChunkListRsp rsp;
    RETURN_IF_ERROR(t.channel->Call<rpc::Method::kChunkList>(req, &rsp));
    for (const pb::ChunkRef& c : rsp.chunks()) {
      (c.garbage() ? out.garbage : out.live)[{c.chunk(), c.node()}] = c;
      after = std::max(after, c.chunk());
    }
    if (rsp.eof() || rsp.chunks_size() == 0) break;
  }
  return out;
}

// Appends `lines` to `out`, at most kMaxNotes of them and a count of the rest.
void AddCapped(std::vector<std::string>* out, const std::vector<std::string>& lines) {
  for (size_t idx = 0; idx < lines.size() && idx < kMaxNotes; ++idx) out->push_back(lines[idx]);
  if (lines.size() > kMaxNotes)
    out->push_back(fmt::format("... and {} more like the line above", lines.size() - kMaxNotes));
}

// Chunks that meta's check counts at their objective but whose healthy
// replicas include some on down nodes, so that fewer are readable than the
// objective asks. Asks meta for the layout and objective of each file with a
// replica on a down node.
Status BelowObjectiveOnDownNodes(AdminTarget& t, const MetaChunkList& chunks,
                                 const std::map<uint64_t, std::string>& node_state,
                                 std::vector<std::string>* out) {
  auto down = [&](uint64_t node) {
    auto it = node_state.find(node);
    return it == node_state.end() || it->second == "down";
  };
  std::set<uint64_t> inodes;
  for (const auto& [key, ref] : chunks.live) {
    if (down(ref.node())) inodes.insert(ref.ino());
  }
  std::vector<std::string> lines;
  for (uint64_t ino : inodes) {
    pb::ObjectiveReq oreq;
    oreq.set_ino(ino);
    pb::ObjectiveRsp obj;
    Status st = t.channel->Call<rpc::Method::kObjective>(oreq, &obj);
    if (st.code() == StatusCode::kNotFound) continue;  // removed meanwhile
    RETURN_IF_ERROR(st.WithContext(fmt::format("objective of inode {}", ino)));
    const uint32_t wanted = std::max<uint32_t>(1, obj.objective().replicas());
    for (uint64_t first = 0;;) {
      pb::GetLayoutReq req;
      req.set_ino(ino);
      req.set_first_index(first);
      req.set_count(4096);
      pb::LayoutRsp rsp;
      st = t.channel->Call<rpc::Method::kGetLayout>(req, &rsp);
      if (st.code() == StatusCode::kNotFound) break;
      RETURN_IF_ERROR(st.WithContext(fmt::format("layout of inode {}", ino)));
      for (const pb::ChunkLayout& c : rsp.layout().chunks()) {
        std::set<uint64_t> healthy, readable;
        std::vector<uint64_t> on_down;
        for (const auto& r : c.replicas()) {
          if (r.state() != pb::REPLICA_HEALTHY) continue;
          healthy.insert(r.node());
          if (down(r.node())) {
            on_down.push_back(r.node());
          } else {
            readable.insert(r.node());
          }
        }
        // Fewer healthy replicas than wanted is meta's line already.
        if (healthy.size() < wanted || readable.size() >= wanted) continue;
        lines.push_back(fmt::format(
            "file {} chunk #{} has {} readable healthy replica(s), its objective wants {} "
            "(node(s) {} down)",
            ino, c.index(), readable.size(), wanted, fmt::join(on_down, ", ")));
      }
      if (rsp.layout().chunks_size() == 0) break;
      first = rsp.layout().chunks(rsp.layout().chunks_size() - 1).index() + 1;
    }
  }
  AddCapped(out, lines);
  return Status::Ok();
}

Result<FsckReport> RunFsck(AdminTarget& t) {
  FsckReport report;
  pb::Empty empty;
  pb::FsckRsp ns;
  RETURN_IF_ERROR(t.channel->Call<rpc::Method::kFsck>(empty, &ns));
  report.inodes = ns.inodes();
  for (const std::string& p : ns.problems()) {
    const std::string_view below = meta::MetaStore::kBelowObjective;
    if (p.rfind(below, 0) == 0) {
      report.below_objective.push_back(p.substr(below.size()));
    } else {
      report.problems.push_back("namespace: " + p);
    }
  }

  pb::ClusterStatusRsp cluster;
  RETURN_IF_ERROR(t.channel->Call<rpc::Method::kClusterStatus>(empty, &cluster));
  std::map<std::pair<uint64_t, uint64_t>, OnDisk> files;  // (chunk, node) → file
  std::set<uint64_t> checked_nodes;
  std::map<uint64_t, std::string> node_state;
  for (const pb::NodeStatus& node : cluster.nodes()) {
    node_state[node.node()] = node.state();
    if (node.state() != "up" && node.state() != "draining") {
      report.warnings.push_back(fmt::format("node {} ({}) is {}: its chunk files were not checked",
                                            node.node(), node.address(), node.state()));
      continue;
    }
    auto ch = NodeChannel(t, node.address());
    bool ok = true;
    for (const pb::VolumeInfo& vol : node.volumes()) {
      for (uint64_t after = 0; ok;) {
        pb::ListChunksReq req;
        req.set_volume(vol.volume());
        req.set_after(after);
        req.set_max(10000);
        pb::ListChunksRsp rsp;
        Status st = ch->Call<rpc::Method::kListChunks>(req, &rsp);
        if (!st.ok()) {
          report.warnings.push_back(fmt::format("node {}: cannot list volume {}: {}", node.node(),
                                                vol.volume(), st.ToString()));
          ok = false;
          break;
        }
        for (const pb::ChunkInfo& c : rsp.chunks()) {
          files[{c.chunk(), node.node()}] = OnDisk{c.version(), c.length()};
          after = std::max(after, c.chunk());
        }
        if (rsp.eof() || rsp.chunks_size() == 0) break;
      }
    }
    if (ok) checked_nodes.insert(node.node());
  }
  report.nodes_checked = checked_nodes.size();
  report.chunk_files = files.size();

  ASSIGN_OR_RETURN(MetaChunkList chunks, MetaChunks(t));
  std::map<uint64_t, std::vector<uint64_t>> live_nodes;  // chunk → nodes of its layout replicas
  for (const auto& [key, ref] : chunks.live) {
    ++report.meta_chunks;
    live_nodes[ref.chunk()].push_back(ref.node());
    if (checked_nodes.count(ref.node()) == 0) continue;
    auto file = files.find(key);
    if (file == files.end()) {
      if (ref.version() > 0) {
        report.problems.push_back(
            fmt::format("missing: chunk {} (inode {}, chunk #{}) has no file on node {}",
                        ref.chunk(), ref.ino(), ref.index(), ref.node()));
      }
      continue;
    }
    if (file->second.version < ref.version()) {
      report.problems.push_back(
          fmt::format("stale: chunk {} on node {} is at version {}, meta says {}", ref.chunk(),
                      ref.node(), file->second.version, ref.version()));
    }
  }
  std::vector<std::string> pending;
  uint64_t freed = 0;
  for (const auto& [key, ref] : chunks.garbage) {
    auto live = live_nodes.find(ref.chunk());
    if (live == live_nodes.end()) {
      ++freed;  // a chunk of a deleted or truncated file
      continue;
    }
    if (chunks.live.count(key) != 0) continue;  // meta's check reports this one
    auto state = node_state.find(ref.node());
    pending.push_back(fmt::format(
        "pending removal: chunk {} (inode {}, chunk #{}) was replaced on node {} ({}); "
        "the old copy is removed when that node takes it; the chunk lives on node(s) {}",
        ref.chunk(), ref.ino(), ref.index(), ref.node(),
        state == node_state.end() ? "unknown" : state->second, fmt::join(live->second, ", ")));
  }
  AddCapped(&report.notes, pending);
  if (freed > 0)
    report.notes.push_back(fmt::format("{} chunk file(s) of deleted data await removal", freed));
  for (const auto& [key, disk] : files) {
    if (chunks.live.count(key) == 0 && chunks.garbage.count(key) == 0) {
      report.problems.push_back(
          fmt::format("orphan: chunk file {} on node {} ({} bytes) is in no layout", key.first,
                      key.second, disk.length));
    }
  }
  RETURN_IF_ERROR(BelowObjectiveOnDownNodes(t, chunks, node_state, &report.below_objective));
  if (!report.below_objective.empty() &&
      (cluster.copies_running() > 0 || cluster.under_replicated() > 0)) {
    report.notes.push_back(
        fmt::format("repair is running: {} chunk(s) below objective, {} copies running "
                    "(t0fs status shows its progress)",
                    cluster.under_replicated(), cluster.copies_running()));
  }
  return report;
}

void Print(const FsckReport& r, bool json) {
  if (json) {
    nlohmann::json j = {{"clean", r.clean()},
                        {"problems", r.problems},
                        {"below_objective", r.below_objective},
                        {"warnings", r.warnings},
                        {"notes", r.notes},
                        {"inodes", r.inodes},
                        {"chunks", r.meta_chunks},
                        {"chunk_files", r.chunk_files},
                        {"nodes_checked", r.nodes_checked}};
    fmt::print("{}\n", j.dump(2));
    return;
  }
  fmt::print("namespace: {} inodes, {} chunks in layouts\n", r.inodes, r.meta_chunks);
  fmt::print("chunk files: {} on {} node(s)\n", r.chunk_files, r.nodes_checked);
  for (const auto& n : r.notes) fmt::print("note: {}\n", n);
  for (const auto& w : r.warnings) fmt::print("warning: {}\n", w);
  for (const auto& p : r.problems) fmt::print("{}\n", p);
  for (const auto& b : r.below_objective) fmt::print("below objective: {}\n", b);
  if (r.clean()) {
    fmt::print("fsck: clean\n");
  } else {
    fmt::print("fsck: {} problem(s), {} chunk(s) below their objective\n", r.problems.size(),
               r.below_objective.size());
  }
}

}  // namespace

void RegisterFsck(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand(
      "fsck",
      "Check namespace, layouts and redundancy (exit 0 when clean, 1 on problems or "
      "data below its objective)");
  auto opts = std::make_shared<AdminOptions>();
  opts->Register(cmd);
  cmd->callback([opts, exit_code] {
    auto target = ConnectAdmin(*opts);
    if (!target.ok()) {
      *exit_code = Fail("fsck", target.status()) + 1;
      return;
    }
    auto report = RunFsck(*target);
    if (!report.ok()) {
      *exit_code = Fail("fsck", report.status()) + 1;
      return;
    }
    Print(*report, opts->json);
    *exit_code = report->clean() ? 0 : 1;
  });
}

}  // namespace t0fs::cli
