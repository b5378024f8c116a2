// AdminClient::Fsck (t0fs/admin.h): meta's check, then the chunk files of
// the data nodes compared with meta's replicas.
//
// What is a problem (the report is not clean) and what is not:
//  - a chunk with fewer healthy replicas than its file's objective —
//    counting a replica on a down node as not there — is below its
//    objective, also while repair is restoring it: the data is less safe
//    than asked for until then (`t0fs status` shows repair progress);
//  - a replica that repair replaced waits in the garbage queue until its
//    node takes it (a down node: when it is back). That is expected: a
//    "pending removal" note. Only the same (chunk, node) both live and
//    queued is a problem (meta's check reports it);
//  - a file waiting for its protect= copies within its deadline is a note
//    (past it, meta's check reports it below its objective);
//  - a node that is not up cannot be checked: a warning.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include "common/config.h"
#include "ec/cells.h"
#include "t0fs/admin.h"

namespace t0fs::client {
namespace {

using ReplicaKey = std::pair<uint64_t, uint64_t>;  // (chunk, node)

// Meta's replicas by (chunk, node): in layouts, and queued for removal.
struct MetaReplicas {
  std::map<ReplicaKey, ChunkRef> live;
  std::map<ReplicaKey, ChunkRef> garbage;
};

// The chunk files of every node that is up or draining, by (chunk, node).
struct NodeFiles {
  std::map<ReplicaKey, StoredChunk> files;
  std::set<uint64_t> checked;              // nodes listed completely
  std::map<uint64_t, std::string> states;  // node → state
};

// Appends `lines` to `out`, at most kMaxFsckLines of them and a count of the rest.
void AddCapped(std::vector<std::string>* out, const std::vector<std::string>& lines) {
  for (size_t idx = 0; idx < lines.size() && idx < kMaxFsckLines; ++idx) out->push_back(lines[idx]);
  if (lines.size() > kMaxFsckLines)
    out->push_back(
        fmt::format("... and {} more like the line above", lines.size() - kMaxFsckLines));
}

NodeFiles ListNodes(AdminClient& admin, const ClusterStatus& cluster, FsckReport* report) {
  NodeFiles out;
  for (const NodeStatus& node : cluster.nodes) {
    out.states[node.node.value()] = node.state;
    if (node.state != "up" && node.state != "draining") {
      report->warnings.push_back(fmt::format("node {} ({}) is {}: its chunk files were not checked",
                                             node.node.value(), node.address, node.state));
      continue;
    }
    bool ok = true;
    for (const VolumeStatus& vol : node.volumes) {
      auto files = admin.StoredChunks(node.address, vol.volume);
      if (!files.ok()) {
        report->warnings.push_back(fmt::format("node {}: cannot list volume {}: {}",
                                               node.node.value(), vol.volume.value(),
                                               files.status().ToString()));
        ok = false;
        break;
      }
      for (const StoredChunk& f : *files) out.files[{f.chunk.value(), node.node.value()}] = f;
    }
    if (ok) out.checked.insert(node.node.value());
  }
  return out;
}

// Missing and stale chunk files, replicas pending removal, and orphans.
void CompareFiles(const MetaReplicas& meta, const NodeFiles& nodes, FsckReport* report) {
  std::map<uint64_t, std::vector<uint64_t>> live_nodes;  // chunk → nodes of its layout replicas
  for (const auto& [key, ref] : meta.live) {
    ++report->meta_chunks;
    live_nodes[key.first].push_back(key.second);
    if (nodes.checked.count(key.second) == 0) continue;
    auto file = nodes.files.find(key);
    if (file == nodes.files.end()) {
      if (ref.version > 0) {
        report->problems.push_back(
            fmt::format("missing: chunk {} (inode {}, chunk #{}) has no file on node {}", key.first,
                        ref.ino.value(), ref.index, key.second));
      }
      continue;
    }
    if (file->second.version < ref.version) {
      report->problems.push_back(
          fmt::format("stale: chunk {} on node {} is at version {}, meta says {}", key.first,
                      key.second, file->second.version, ref.version));
    }
  }
  std::vector<std::string> pending;
  uint64_t freed = 0;
  for (const auto& [key, ref] : meta.garbage) {
    auto live = live_nodes.find(key.first);
    if (live == live_nodes.end()) {
      ++freed;  // a chunk of a deleted or truncated file
      continue;
    }
    if (meta.live.count(key) != 0) continue;  // meta's check reports this one
    auto state = nodes.states.find(key.second);
    pending.push_back(fmt::format(
        "pending removal: chunk {} (inode {}, chunk #{}) was replaced on node {} ({}); "
        "the old copy is removed when that node takes it; the chunk lives on node(s) {}",
        key.first, ref.ino.value(), ref.index, key.second,
        state == nodes.states.end() ? "unknown" : state->second, fmt::join(live->second, ", ")));
  }
  AddCapped(&report->notes, pending);
  if (freed > 0)
    report->notes.push_back(fmt::format("{} chunk file(s) of deleted data await removal", freed));
  for (const auto& [key, file] : nodes.files) {
    if (meta.live.count(key) == 0 && meta.garbage.count(key) == 0) {
      report->problems.push_back(
          fmt::format("orphan: chunk file {} on node {} ({} bytes) is in no layout", key.first,
                      key.second, file.length));
      report->orphans[NodeId(key.second)].push_back(file);
    }
  }
}

}  // namespace

Result<FsckReport> AdminClient::Fsck() {
  FsckReport report;
  ASSIGN_OR_RETURN(NamespaceCheck check, CheckNamespace());
  report.inodes = check.inodes;
  report.below_objective = std::move(check.below_objective);
  for (const std::string& p : check.problems) report.problems.push_back("namespace: " + p);

  ASSIGN_OR_RETURN(ClusterStatus cluster, GetStatus());
  NodeFiles nodes = ListNodes(*this, cluster, &report);
  report.nodes_checked = nodes.checked.size();
  report.nodes_unchecked = cluster.nodes.size() - nodes.checked.size();
  report.chunk_files = nodes.files.size();

  // After the nodes' listings: a chunk created meanwhile is in meta's list.
  ASSIGN_OR_RETURN(std::vector<ChunkRef> refs, ChunkRefs());
  MetaReplicas meta;
  for (const ChunkRef& ref : refs) {
    // A cell is checked like a replica, under the chunk id of its file.
    const uint64_t file =
        ref.cell == 0 ? ref.chunk.value() : ec::CellChunkId(ref.chunk, ref.cell - 1).value();
    (ref.garbage ? meta.garbage : meta.live)[{file, ref.node.value()}] = ref;
  }
  CompareFiles(meta, nodes, &report);
  if (!report.below_objective.empty() &&
      (cluster.copies_running > 0 || cluster.under_replicated > 0)) {
    report.notes.push_back(
        fmt::format("repair is running: {} chunk(s) below objective, {} copies running (t0fs "
                    "status shows its progress)",
                    cluster.under_replicated, cluster.copies_running));
  }
  // Within their deadline, not a problem (past it, meta's check names them).
  const uint64_t waiting = cluster.protect_waiting_files -
                           std::min(cluster.protect_waiting_files, cluster.protect_overdue_files);
  if (waiting > 0) {
    report.notes.push_back(
        fmt::format("protection: {} file(s) wait for their protect= copies within their "
                    "deadline ({} in all; t0fs status)",
                    waiting, FormatByteSize(cluster.protect_waiting_bytes)));
  }
  return report;
}

}  // namespace t0fs::client
