// `t0fs fsck`: namespace and layout consistency of a running cluster.
//
// Meta checks its namespace (Check()); then the chunk files each data node
// holds are compared with the layouts: files no layout references (orphans)
// and committed chunks whose file is missing. Data nodes are listed before
// meta so that a chunk created meanwhile is not mistaken for an orphan.
#include <map>
#include <set>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/admin.h"
#include "cli/command_util.h"
#include "cli/commands.h"
#include "rpc/proto/data.pb.h"
#include "rpc/proto/meta.pb.h"

namespace t0fs::cli {
namespace {

struct FsckReport {
  std::vector<std::string> problems;
  std::vector<std::string> warnings;
  uint64_t inodes = 0, meta_chunks = 0, chunk_files = 0, nodes_checked = 0;
};

struct OnDisk {
  uint64_t version = 0;
  uint64_t length = 0;
};

Result<std::map<std::pair<uint64_t, uint64_t>, pb::ChunkRef>> MetaChunks(AdminTarget& t) {
  std::map<std::pair<uint64_t, uint64_t>, pb::ChunkRef> out;  // (chunk, node) → ref
  for (uint64_t after = 0;;) {
    pb::ChunkListReq req;
    req.set_after(after);
    req.set_max(10000);
    pb::ChunkListRsp rsp;
    RETURN_IF_ERROR(t.channel->Call(rpc::Method::kChunkList, req, &rsp));
    for (const pb::ChunkRef& c : rsp.chunks()) {
      auto& slot = out[{c.chunk(), c.node()}];
      if (slot.chunk() == 0 || slot.garbage()) slot = c;  // a live layout entry wins over garbage
      after = std::max(after, c.chunk());
    }
    if (rsp.eof() || rsp.chunks_size() == 0) break;
  }
  return out;
}

Result<FsckReport> RunFsck(AdminTarget& t) {
  FsckReport report;
  pb::Empty empty;
  pb::FsckRsp ns;
  RETURN_IF_ERROR(t.channel->Call(rpc::Method::kFsck, empty, &ns));
  report.inodes = ns.inodes();
  for (const std::string& p : ns.problems()) report.problems.push_back("namespace: " + p);

  pb::ClusterStatusRsp cluster;
  RETURN_IF_ERROR(t.channel->Call(rpc::Method::kClusterStatus, empty, &cluster));
  std::map<std::pair<uint64_t, uint64_t>, OnDisk> files;  // (chunk, node) → file
  std::set<uint64_t> checked_nodes;
  for (const pb::NodeStatus& node : cluster.nodes()) {
    if (node.state() != "up") {
      report.warnings.push_back(fmt::format("node {} ({}) is {}: its chunk files were not checked", node.node(),
                                            node.address(), node.state()));
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
        Status st = ch->Call(rpc::Method::kListChunks, req, &rsp);
        if (!st.ok()) {
          report.warnings.push_back(fmt::format("node {}: cannot list volume {}: {}", node.node(), vol.volume(),
                                                st.ToString()));
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

  ASSIGN_OR_RETURN(auto chunks, MetaChunks(t));
  for (const auto& [key, ref] : chunks) {
    if (!ref.garbage()) ++report.meta_chunks;
    if (ref.garbage() || checked_nodes.count(ref.node()) == 0) continue;
    auto file = files.find(key);
    if (file == files.end()) {
      if (ref.version() > 0) {
        report.problems.push_back(fmt::format("missing: chunk {} (inode {}, chunk #{}) has no file on node {}",
                                              ref.chunk(), ref.ino(), ref.index(), ref.node()));
      }
      continue;
    }
    if (file->second.version < ref.version()) {
      report.problems.push_back(fmt::format("stale: chunk {} on node {} is at version {}, meta says {}", ref.chunk(),
                                            ref.node(), file->second.version, ref.version()));
    }
  }
  for (const auto& [key, disk] : files) {
    if (chunks.count(key) == 0) {
      report.problems.push_back(fmt::format("orphan: chunk file {} on node {} ({} bytes) is in no layout",
                                            key.first, key.second, disk.length));
    }
  }
  return report;
}

}  // namespace

void RegisterFsck(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand("fsck", "Check namespace and layout consistency (exit 0 when clean)");
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
    if (opts->json) {
      nlohmann::json j = {{"clean", report->problems.empty()},   {"problems", report->problems},
                          {"warnings", report->warnings},        {"inodes", report->inodes},
                          {"chunks", report->meta_chunks},       {"chunk_files", report->chunk_files},
                          {"nodes_checked", report->nodes_checked}};
      fmt::print("{}\n", j.dump(2));
    } else {
      fmt::print("namespace: {} inodes, {} chunks in layouts\n", report->inodes, report->meta_chunks);
      fmt::print("chunk files: {} on {} node(s)\n", report->chunk_files, report->nodes_checked);
      for (const auto& w : report->warnings) fmt::print("warning: {}\n", w);
      for (const auto& p : report->problems) fmt::print("{}\n", p);
      fmt::print("fsck: {}\n", report->problems.empty() ? "clean" : fmt::format("{} problem(s)", report->problems.size()));
    }
    *exit_code = report->problems.empty() ? 0 : 1;
  });
}

}  // namespace t0fs::cli
