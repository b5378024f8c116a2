// A fake meta for the unit tests of libt0fs's rooms (MetaApi): a fixed set
// of allocated chunks and attributes, the calls counted.
#pragma once

#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <vector>

#include "client/meta_api.h"

namespace t0fs::client::testing {

constexpr uint64_t kHour = 3600 * 1000;

// Meta with a fixed set of allocated chunks (index → chunk id). Counts the
// calls and signs capabilities with write rights when asked for them.
class FakeMeta final : public MetaApi {
 public:
  std::map<uint64_t, uint64_t> chunks;  // allocated: index → chunk id
  uint64_t next_chunk = 100;
  int layout_calls = 0;
  bool last_layout_write = false;
  std::vector<uint64_t> last_allocate;

  NodeId local_node() const override { return NodeId(1); }
  std::map<InodeId, Attr> attrs;
  int getattr_calls = 0;
  std::vector<CommitRequest> commits;
  std::optional<Status> refuse_commits;  // set: Commit answers it
  std::function<void()> during_commit;   // set: runs while Commit is "on the wire"
  Result<Attr> GetAttr(InodeId ino) override {
    getattr_calls++;
    auto it = attrs.find(ino);
    if (it == attrs.end()) return Status(StatusCode::kNotFound, "no such inode");
    return it->second;
  }
  Result<std::vector<CachedChunk>> GetLayout(InodeId, uint64_t first, uint64_t count, bool write) override {
    layout_calls++;
    last_layout_write = write;
    std::vector<CachedChunk> out;
    for (auto it = chunks.lower_bound(first); it != chunks.end() && it->first < first + count; ++it) {
      out.push_back(Chunk(it->first, it->second, write ? kCapRead | kCapWrite : kCapRead));
    }
    return out;
  }
  Result<std::vector<CachedChunk>> Allocate(InodeId, const std::vector<uint64_t>& indices) override {
    last_allocate = indices;
    std::vector<CachedChunk> out;
    for (uint64_t index : indices) {
      auto [it, added] = chunks.emplace(index, next_chunk);
      if (added) next_chunk++;
      out.push_back(Chunk(index, it->second, kCapRead | kCapWrite));
    }
    return out;
  }
  Result<Attr> Commit(const CommitRequest& req) override {
    commits.push_back(req);
    if (during_commit) during_commit();
    if (refuse_commits) return *refuse_commits;
    Attr& attr = attrs[req.ino];
    attr.ino = req.ino;
    attr.size = std::max(attr.size, req.size);
    if (req.mtime) attr.mtime = *req.mtime;
    return attr;
  }
  Result<Attr> Truncate(InodeId, uint64_t, uint64_t) override { return Status(StatusCode::kInternal, "unused"); }
  Status ReportReplica(const ReplicaInfo&, ReplicaProblem, const Status&) override { return Status::Ok(); }
  void ReportReplicaLater(const ReplicaInfo&, ReplicaProblem problem) override {
    later_reports.push_back(problem);
  }
  std::vector<ReplicaProblem> later_reports;

  static CachedChunk Chunk(uint64_t index, uint64_t id, uint32_t rights, uint64_t expiry = WallMillis() + kHour) {
    CachedChunk c;
    c.info.index = index;
    c.info.replicas.push_back(ReplicaInfo{NodeId(1), VolumeId(1), ChunkId(id), 1, true, ReplicaState::kHealthy});
    c.info.replicas.push_back(ReplicaInfo{NodeId(2), VolumeId(2), ChunkId(id), 1, false, ReplicaState::kHealthy});
    c.cap.rights = rights;
    c.cap.expiry_ms = expiry;
    return c;
  }
};

}  // namespace t0fs::client::testing
