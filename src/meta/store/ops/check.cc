// Check: the consistency checker (fsck) of the metadata store. Read-only.
//
// It reads every row once (one snapshot) and applies each rule to them in
// memory; each rule reports at most kMaxLinesPerRule lines, then a count of
// the rest.
#include <fmt/format.h>

#include <map>
#include <set>
#include <tuple>
#include <unordered_map>

#include "ec/cells.h"
#include "meta/store/posix_store.h"
#include "meta/store/store_util.h"

namespace t0fs::meta {
namespace {

constexpr size_t kMaxLinesPerRule = 50;
constexpr size_t kChunkPage = 4096;

using internal::IsDir;
using internal::IsReg;

// Every row of the store, as the rules need them.
struct Rows {
  std::map<InodeId, InodeRow> inodes;
  std::vector<DentryRow> dentries;  // by (parent, name)
  std::vector<XattrRow> xattrs;
  std::vector<ChunkWithReplicas> chunks;  // by id
  std::vector<ReplicaRow> replicas;       // by (chunk, pos), orphans included
  std::vector<GarbageRow> garbage;
  std::vector<HandleRow> handles;
  std::set<SessionId> sessions;
  std::set<SessionId> replay_sessions;
  std::set<NodeId> nodes;
  std::map<VolumeId, VolumeRecord> volumes;
};

Result<Rows> LoadRows(ReadTxn& txn) {
  Rows rows;
  RETURN_IF_ERROR(txn.ScanInodes([&](const InodeRow& r) {
    rows.inodes.emplace(r.attr.ino, r);
    return Status::Ok();
  }));
  RETURN_IF_ERROR(txn.ScanDentries([&](const DentryRow& r) {
    rows.dentries.push_back(r);
    return Status::Ok();
  }));
  RETURN_IF_ERROR(txn.ScanXattrs([&](const XattrRow& r) {
    rows.xattrs.push_back(r);
    return Status::Ok();
  }));
  for (ChunkId after;;) {
    ASSIGN_OR_RETURN(std::vector<ChunkWithReplicas> page, txn.ScanChunks(after, kChunkPage));
    if (page.empty()) break;
    after = page.back().chunk.id;
    for (ChunkWithReplicas& c : page) rows.chunks.push_back(std::move(c));
  }
  RETURN_IF_ERROR(txn.ScanReplicas([&](const ReplicaRow& r) {
    rows.replicas.push_back(r);
    return Status::Ok();
  }));
  RETURN_IF_ERROR(txn.ScanGarbage([&](const GarbageRow& r) {
    rows.garbage.push_back(r);
    return Status::Ok();
  }));
  RETURN_IF_ERROR(txn.ScanHandles([&](const HandleRow& r) {
    rows.handles.push_back(r);
    return Status::Ok();
  }));
  RETURN_IF_ERROR(txn.ScanReplays([&](const ReplayRow& r) {
    rows.replay_sessions.insert(r.session);
    return Status::Ok();
  }));
  ASSIGN_OR_RETURN(std::vector<SessionRecord> sessions, txn.ListSessions());
  for (const SessionRecord& s : sessions) rows.sessions.insert(s.session);
  ASSIGN_OR_RETURN(std::vector<NodeRow> nodes, txn.ListNodes());
  for (const NodeRow& n : nodes) rows.nodes.insert(n.node);
  ASSIGN_OR_RETURN(std::vector<VolumeRecord> volumes, txn.ListVolumes());
  for (VolumeRecord& v : volumes) rows.volumes.emplace(v.volume, std::move(v));
  return rows;
}

// The lines of one rule, capped.
class Report {
 public:
  explicit Report(std::vector<std::string>& out) : out_(out) {}
  ~Report() {
    if (hits_ > kMaxLinesPerRule) {
      out_.push_back(fmt::format("... and {} more like the line above", hits_ - kMaxLinesPerRule));
    }
  }
  void Add(std::string line) {
    if (++hits_ <= kMaxLinesPerRule) out_.push_back(std::move(line));
  }

 private:
  std::vector<std::string>& out_;
  size_t hits_ = 0;
};

const InodeRow* Find(const Rows& rows, InodeId ino) {
  auto it = rows.inodes.find(ino);
  return it == rows.inodes.end() ? nullptr : &it->second;
}

void CheckEntries(const Rows& rows, std::vector<std::string>& out) {
  {
    Report r(out);
    for (const DentryRow& d : rows.dentries) {
      if (Find(rows, d.ino) == nullptr) {
        r.Add(fmt::format("entry '{}' in directory {} points to missing inode {}", d.name,
                          d.parent, d.ino));
      }
    }
  }
  {
    Report r(out);
    for (const DentryRow& d : rows.dentries) {
      const InodeRow* p = Find(rows, d.parent);
      if (p == nullptr || !IsDir(p->attr.mode) || p->attr.nlink == 0) {
        r.Add(fmt::format("entry '{}' is in {}, which is not a live directory", d.name, d.parent));
      }
    }
  }
  {
    Report r(out);
    const InodeRow* root = Find(rows, kRootInode);
    if (root == nullptr || !IsDir(root->attr.mode)) {
      r.Add("the root directory (inode 1) is missing");
    }
  }
  {
    Report r(out);
    for (const DentryRow& d : rows.dentries) {
      if (d.ino == kRootInode) {
        r.Add(fmt::format("the root has an entry '{}' in directory {}", d.name, d.parent));
      }
    }
  }
}

void CheckLinks(const Rows& rows, std::vector<std::string>& out) {
  std::map<InodeId, uint64_t> refs;    // entries naming each inode
  std::map<InodeId, uint64_t> subdirs;  // entries of each directory that are directories
  for (const DentryRow& d : rows.dentries) {
    refs[d.ino] += 1;
    const InodeRow* child = Find(rows, d.ino);
    if (child != nullptr && IsDir(child->attr.mode)) subdirs[d.parent] += 1;
  }
  auto count = [](const std::map<InodeId, uint64_t>& m, InodeId ino) -> uint64_t {
    auto it = m.find(ino);
    return it == m.end() ? 0 : it->second;
  };
  {
    Report r(out);
    for (const auto& [ino, row] : rows.inodes) {
      if (IsDir(row.attr.mode) || row.attr.nlink == count(refs, ino)) continue;
      r.Add(fmt::format("inode {} has nlink {} but {} entries", ino, row.attr.nlink,
                        count(refs, ino)));
    }
  }
  {
    Report r(out);
    for (const auto& [ino, row] : rows.inodes) {
      if (!IsDir(row.attr.mode) || (count(refs, ino) == 0 && ino != kRootInode)) continue;
      const uint64_t want = 2 + count(subdirs, ino);
      if (row.attr.nlink != want) {
        r.Add(fmt::format("directory {} has nlink {} but 2 + subdirectories = {}", ino,
                          row.attr.nlink, want));
      }
    }
  }
  {
    Report r(out);
    for (const auto& [ino, n] : refs) {
      const InodeRow* row = Find(rows, ino);
      if (row != nullptr && IsDir(row->attr.mode) && n > 1) {
        r.Add(fmt::format("directory {} has {} parent entries", ino, n));
      }
    }
  }
}

void CheckListingOrder(const Rows& rows, std::vector<std::string>& out) {
  // Listing cookies: an entry's seq lies in 1..its directory's counter, and
  // no two entries of a directory share one.
  {
    Report r(out);
    for (const DentryRow& d : rows.dentries) {
      const InodeRow* p = Find(rows, d.parent);
      if (p != nullptr && (d.seq == 0 || d.seq > p->entry_seq)) {
        r.Add(fmt::format("entry '{}' in directory {} has listing position {} outside 1..{}",
                          d.name, d.parent, d.seq, p->entry_seq));
      }
    }
  }
  Report r(out);
  std::map<std::pair<InodeId, uint64_t>, uint64_t> at;
  for (const DentryRow& d : rows.dentries) at[{d.parent, d.seq}] += 1;
  for (const auto& [key, n] : at) {
    if (n > 1) {
      r.Add(fmt::format("directory {} has {} entries at listing position {}", key.first, n,
                        key.second));
    }
  }
}

void CheckTree(const Rows& rows, std::vector<std::string>& out) {
  // A directory records the directory containing it ("..", the rename loop
  // check); the root and removed directories name themselves.
  std::multimap<InodeId, InodeId> entry_parents;  // ino -> directory holding an entry
  for (const DentryRow& d : rows.dentries) entry_parents.emplace(d.ino, d.parent);
  {
    Report r(out);
    for (const auto& [ino, row] : rows.inodes) {
      if (!IsDir(row.attr.mode)) continue;
      auto [lo, hi] = entry_parents.equal_range(ino);
      for (auto it = lo; it != hi; ++it) {
        if (row.parent != it->second) {
          r.Add(fmt::format("directory {} records parent {} but its entry is in directory {}",
                            ino, row.parent, it->second));
        }
      }
    }
  }
  {
    Report r(out);
    for (const auto& [ino, row] : rows.inodes) {
      if (IsDir(row.attr.mode) && row.parent != ino && entry_parents.count(ino) == 0) {
        r.Add(fmt::format("directory {} has no entry but records parent {}", ino, row.parent));
      }
    }
  }
  // Everything reachable from the root by entries.
  std::multimap<InodeId, InodeId> children;
  for (const DentryRow& d : rows.dentries) children.emplace(d.parent, d.ino);
  std::set<InodeId> reach{kRootInode};
  std::vector<InodeId> todo{kRootInode};
  while (!todo.empty()) {
    InodeId dir = todo.back();
    todo.pop_back();
    auto [lo, hi] = children.equal_range(dir);
    for (auto it = lo; it != hi; ++it) {
      if (reach.insert(it->second).second) todo.push_back(it->second);
    }
  }
  std::set<InodeId> open;
  for (const HandleRow& h : rows.handles) open.insert(h.ino);
  Report r(out);
  for (const auto& [ino, row] : rows.inodes) {
    if (reach.count(ino) != 0) continue;
    if (row.attr.nlink == 0 && open.count(ino) != 0) continue;  // unlinked while open
    if (row.attr.nlink == 0) {
      r.Add(fmt::format("inode {} is unlinked and not open but was not freed", ino));
    } else {
      r.Add(fmt::format("inode {} (nlink {}) is unreachable from the root", ino, row.attr.nlink));
    }
  }
}

void CheckInodes(const Rows& rows, std::vector<std::string>& out) {
  {
    Report r(out);
    for (const auto& [ino, row] : rows.inodes) {
      if (S_ISLNK(row.attr.mode) && (row.target.empty() || row.attr.size != row.target.size())) {
        r.Add(fmt::format("symlink {} has size {} but a target of {} bytes", ino, row.attr.size,
                          row.target.size()));
      }
    }
  }
  {
    Report r(out);
    for (const auto& [ino, row] : rows.inodes) {
      if (IsDir(row.attr.mode) && row.attr.size != 0) {
        r.Add(fmt::format("directory {} has size {}", ino, row.attr.size));
      }
    }
  }
  {
    Report r(out);
    for (const auto& [ino, row] : rows.inodes) {
      if (IsReg(row.attr.mode) && row.attr.chunk_size == 0) {
        r.Add(fmt::format("file {} has no chunk size", ino));
      }
    }
  }
  Report r(out);
  for (const XattrRow& x : rows.xattrs) {
    if (Find(rows, x.ino) == nullptr) {
      r.Add(fmt::format("xattr '{}' of missing inode {}", x.name, x.ino));
    }
  }
}

void CheckChunks(const Rows& rows, std::vector<std::string>& out) {
  {
    Report r(out);
    for (const ChunkWithReplicas& c : rows.chunks) {
      const InodeRow* file = Find(rows, c.chunk.ino);
      if (file == nullptr || !IsReg(file->attr.mode)) {
        r.Add(fmt::format("chunk {} (index {}) belongs to inode {}, which is not a file",
                          c.chunk.id, c.chunk.index, c.chunk.ino));
      }
    }
  }
  {
    Report r(out);
    for (const ChunkWithReplicas& c : rows.chunks) {
      if (c.replicas.empty()) r.Add(fmt::format("chunk {} has no replica", c.chunk.id));
    }
  }
  std::set<ChunkId> known;
  for (const ChunkWithReplicas& c : rows.chunks) known.insert(c.chunk.id);
  {
    Report r(out);
    std::set<ChunkId> orphans;
    for (const ReplicaRow& rep : rows.replicas) {
      if (known.count(rep.chunk) == 0) orphans.insert(rep.chunk);
    }
    for (ChunkId chunk : orphans) {
      r.Add(fmt::format("replicas of chunk {}, which is in no layout", chunk));
    }
  }
  // A replica replaced by repair waits in the garbage queue until its node
  // takes it (perhaps much later, when the node comes back) while the chunk
  // lives on elsewhere: expected. Only the same (chunk, node) both live and
  // queued is wrong: the node would delete a live replica.
  {
    Report r(out);
    std::set<std::pair<ChunkId, NodeId>> live;
    for (const ReplicaRow& rep : rows.replicas) {
      if (rep.state != ReplicaState::kOffloaded) live.emplace(rep.chunk, rep.node);
    }
    std::set<std::pair<ChunkId, NodeId>> both;
    for (const GarbageRow& g : rows.garbage) {
      if (live.count({g.chunk, g.node}) != 0) both.emplace(g.chunk, g.node);
    }
    for (const auto& [chunk, node] : both) {
      r.Add(fmt::format(
          "chunk {} on node {} is both in a layout and in the garbage queue (its node would "
          "delete a live replica)",
          chunk, node));
    }
  }
}

// A path of each inode in `wanted` (files: their first entry), from the
// entries; "?" where a directory on the way has no entry (a damaged tree,
// reported by the other rules).
std::map<InodeId, std::string> PathsOf(const Rows& rows, const std::set<InodeId>& wanted) {
  std::map<InodeId, std::string> out;
  if (wanted.empty()) return out;
  std::unordered_map<InodeId, const DentryRow*> dir_entry;  // directory → its entry
  for (const DentryRow& d : rows.dentries) {
    const InodeRow* child = Find(rows, d.ino);
    if (child != nullptr && IsDir(child->attr.mode)) dir_entry.emplace(d.ino, &d);
  }
  auto dir_path = [&](InodeId dir) {
    std::vector<std::string_view> names;
    for (size_t depth = 0; dir != kRootInode; ++depth) {
      auto it = dir_entry.find(dir);
      if (it == dir_entry.end() || depth > rows.inodes.size()) return std::string("?");
      names.push_back(it->second->name);
      dir = it->second->parent;
    }
    std::string path;
    for (auto name = names.rbegin(); name != names.rend(); ++name)
      path += fmt::format("/{}", *name);
    return path;
  };
  for (const DentryRow& d : rows.dentries) {
    if (wanted.count(d.ino) == 0 || out.count(d.ino) != 0) continue;
    out[d.ino] = fmt::format("{}/{}", dir_path(d.parent), d.name);
  }
  for (InodeId ino : wanted) out.emplace(ino, "(no name: unlinked, still open)");
  return out;
}

// Chunks below their file's objective, as lines starting with
// kBelowObjective so that fsck can tell them from inconsistencies, naming
// the file by path:
//   - fewer healthy replicas (on distinct nodes) than `replicas`: not yet
//     repaired, or not repairable (too few nodes);
//   - fewer of them readable (not on a node in `unreadable` or unknown): a
//     node is down; none readable means the data is unavailable, the case of
//     a file whose only copy was on a lost node before it was protected;
//   - fewer than its protection goal longer than `within` after its last
//     change (overdue: repair cannot keep up, or there is no node to copy to).
void CheckObjectives(const Rows& rows, const std::set<NodeId>& unreadable, Timespec now,
                     std::vector<std::string>& out) {
  struct Below {
    InodeId ino;
    uint64_t index = 0;
    std::string what;
  };
  std::vector<Below> below;
  for (const ChunkWithReplicas& c : rows.chunks) {
    const InodeRow* file = Find(rows, c.chunk.ino);
    if (file == nullptr) continue;
    const InodeAttr& a = file->attr;
    std::set<NodeId> healthy, down;
    uint64_t offloaded = 0;  // the newest offloaded version (keep-local=drop|pressure)
    for (const ReplicaRow& rep : c.replicas) {
      if (rep.state == ReplicaState::kOffloaded) offloaded = std::max(offloaded, rep.version);
      if (rep.state != ReplicaState::kHealthy) continue;
      healthy.insert(rep.node);
      if (unreadable.count(rep.node) != 0 || rows.nodes.count(rep.node) == 0) down.insert(rep.node);
    }
    const size_t readable = healthy.size() - down.size();
    const bool unprotected =
        a.protect.kind == ProtectKind::kReplicas && healthy.size() < a.protect.copies;
    std::string what;
    if (healthy.empty() && offloaded != 0) {
      // Offloaded on purpose: fine while the tier holds that version.
      auto stripe = ec::ParseStripe(c.chunk.ec);
      const bool in_cells = stripe.ok() && !stripe->empty() && stripe->version == offloaded &&
                            stripe->placed() == stripe->cells.size();
      if (c.chunk.object_version != offloaded && !in_cells) {
        what = fmt::format(
            "is offloaded at version {}, which neither the object tier (version {}) nor "
            "erasure-coded cells hold: unavailable",
            offloaded, c.chunk.object_version);
      }
    } else if (healthy.size() < a.replicas) {
      what = fmt::format("has {} healthy replica(s), its objective wants {}", healthy.size(),
                         a.replicas);
    } else if (readable < a.replicas) {
      what = fmt::format(
          "has {} readable healthy replica(s), its objective wants {} (node(s) {} down{})",
          readable, a.replicas, fmt::join(down, ", "),
          readable == 0 ? unprotected ? "; lost before it was protected: unavailable"
                                      : "; unavailable until one comes back"
                        : "");
    } else if (unprotected && now.sec - a.ctime.sec > static_cast<int64_t>(a.protect.within_s)) {
      what = fmt::format(
          "has {} healthy replica(s), its protection wants {}; changed {}s ago, past its deadline "
          "of {}s",
          healthy.size(), a.protect.copies, now.sec - a.ctime.sec, a.protect.within_s);
    }
    if (!what.empty()) below.push_back({c.chunk.ino, c.chunk.index, std::move(what)});
  }
  std::set<InodeId> files;
  for (const Below& b : below) files.insert(b.ino);
  const std::map<InodeId, std::string> paths = PathsOf(rows, files);
  Report r(out);
  for (const Below& b : below) {
    r.Add(fmt::format("{}file {} {} chunk #{} {}", MetaStore::kBelowObjective, b.ino,
                      paths.at(b.ino), b.index, b.what));
  }
}

void CheckPlacement(const Rows& rows, std::vector<std::string>& out) {
  {
    Report r(out);
    std::map<std::tuple<ChunkId, NodeId, VolumeId>, uint64_t> copies;
    for (const ReplicaRow& rep : rows.replicas) copies[{rep.chunk, rep.node, rep.volume}] += 1;
    for (const auto& [key, n] : copies) {
      if (n > 1) {
        r.Add(fmt::format("chunk {} has two replicas on volume {} of node {}", std::get<0>(key),
                          std::get<2>(key), std::get<1>(key)));
      }
    }
  }
  {
    Report r(out);
    for (const ReplicaRow& rep : rows.replicas) {
      auto vol = rows.volumes.find(rep.volume);
      if (rows.nodes.count(rep.node) == 0 || vol == rows.volumes.end() ||
          vol->second.node != rep.node) {
        r.Add(fmt::format("chunk {} has a replica on unknown volume {} of node {}", rep.chunk,
                          rep.volume, rep.node));
      }
    }
  }
  Report r(out);
  for (const auto& [id, vol] : rows.volumes) {
    if (rows.nodes.count(vol.node) == 0) {
      r.Add(fmt::format("volume {} belongs to unknown node {}", id, vol.node));
    }
  }
}

void CheckSessions(const Rows& rows, std::vector<std::string>& out) {
  {
    Report r(out);
    for (const HandleRow& h : rows.handles) {
      if (rows.sessions.count(h.session) == 0) {
        r.Add(fmt::format("handle {} belongs to unknown session {}", h.id, h.session));
      }
    }
  }
  {
    Report r(out);
    for (const HandleRow& h : rows.handles) {
      if (Find(rows, h.ino) == nullptr) {
        r.Add(fmt::format("handle {} is open on missing inode {}", h.id, h.ino));
      }
    }
  }
  Report r(out);
  for (SessionId session : rows.replay_sessions) {
    if (rows.sessions.count(session) == 0) {
      r.Add(fmt::format("replay records of unknown session {}", session));
    }
  }
}

// Cycles: walk up from every directory through its (first) parent entry.
void CheckCycles(const Rows& rows, std::vector<std::string>& out) {
  std::unordered_map<uint64_t, uint64_t> parent_of;
  for (const DentryRow& d : rows.dentries) {
    const InodeRow* row = Find(rows, d.ino);
    if (row == nullptr || !IsDir(row->attr.mode)) continue;
    auto [it, added] = parent_of.emplace(d.ino.value(), d.parent.value());
    if (!added) it->second = std::min(it->second, d.parent.value());
  }
  std::unordered_map<uint64_t, int> state;  // 1 = on the current walk, 2 = resolved
  size_t cycles = 0;
  for (const auto& [start, unused] : parent_of) {
    std::vector<uint64_t> walk;
    uint64_t cur = start;
    while (parent_of.count(cur) != 0 && state[cur] == 0) {
      state[cur] = 1;
      walk.push_back(cur);
      cur = parent_of.at(cur);
    }
    if (parent_of.count(cur) != 0 && state[cur] == 1) {
      if (++cycles <= kMaxLinesPerRule) {
        out.push_back(fmt::format("directory {} is part of a cycle", cur));
      }
    }
    for (uint64_t dir : walk) state[dir] = 2;
  }
}

}  // namespace

Result<std::vector<std::string>> PosixStore::Check(const std::set<NodeId>& unreadable) {
  std::vector<std::string> problems;
  RETURN_IF_ERROR(Read([&](ReadTxn& txn) -> Status {
    problems.clear();
    ASSIGN_OR_RETURN(Rows rows, LoadRows(txn));
    CheckEntries(rows, problems);
    CheckLinks(rows, problems);
    CheckListingOrder(rows, problems);
    CheckTree(rows, problems);
    CheckInodes(rows, problems);
    CheckChunks(rows, problems);
    CheckObjectives(rows, unreadable, WallNow(), problems);
    CheckPlacement(rows, problems);
    CheckSessions(rows, problems);
    CheckCycles(rows, problems);
    return Status::Ok();
  }));
  return problems;
}

}  // namespace t0fs::meta
