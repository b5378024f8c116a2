#include "meta/store/copy/engine_copy.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>

#include "common/logging.h"

namespace t0fs::meta {
namespace {

// What a pass over a store does with each row; one method per row kind.
class RowSink {
 public:
  virtual ~RowSink() = default;
  virtual Status Inode(const InodeRow& row) = 0;
  virtual Status Dentry(const DentryRow& row) = 0;
  virtual Status Xattr(const XattrRow& row) = 0;
  virtual Status Chunk(const ChunkRow& row) = 0;
  virtual Status Replica(const ReplicaRow& row) = 0;
  virtual Status Garbage(const GarbageRow& row) = 0;
  virtual Status Session(const SessionRecord& row) = 0;
  virtual Status Handle(const HandleRow& row) = 0;
  virtual Status Replay(const ReplayRow& row) = 0;
  virtual Status Node(const NodeRow& row) = 0;
  virtual Status Volume(const VolumeRecord& row) = 0;
  virtual Status Property(const std::string& key, const std::string& value) = 0;
};

// The row kinds, in the order a pass visits them (RowKind indexes kKinds).
enum RowKind : size_t {
  kInodes,
  kDentries,
  kXattrs,
  kChunks,
  kReplicas,
  kGarbage,
  kSessions,
  kHandles,
  kReplays,
  kNodes,
  kVolumes,
  kProperties,
  kKindCount
};
constexpr std::array<const char*, kKindCount> kKinds = {
    "inodes",   "dentries", "xattrs",  "chunks", "replicas", "garbage",
    "sessions", "handles",  "replays", "nodes",  "volumes",  "properties"};

// Every row of `txn`, kind after kind, each kind in its engine order.
Status VisitStore(ReadTxn& txn, RowSink& sink) {
  RETURN_IF_ERROR(txn.ScanInodes([&](const InodeRow& r) { return sink.Inode(r); }));
  RETURN_IF_ERROR(txn.ScanDentries([&](const DentryRow& r) { return sink.Dentry(r); }));
  RETURN_IF_ERROR(txn.ScanXattrs([&](const XattrRow& r) { return sink.Xattr(r); }));
  constexpr size_t kChunkPage = 1000;
  for (ChunkId after;;) {
    ASSIGN_OR_RETURN(auto page, txn.ScanChunks(after, kChunkPage));
    for (const ChunkWithReplicas& c : page) RETURN_IF_ERROR(sink.Chunk(c.chunk));
    if (page.size() < kChunkPage) break;
    after = page.back().chunk.id;
  }
  // Replicas on their own: also those whose chunk row is missing.
  RETURN_IF_ERROR(txn.ScanReplicas([&](const ReplicaRow& r) { return sink.Replica(r); }));
  RETURN_IF_ERROR(txn.ScanGarbage([&](const GarbageRow& r) { return sink.Garbage(r); }));
  ASSIGN_OR_RETURN(auto sessions, txn.ListSessions());
  for (const SessionRecord& s : sessions) RETURN_IF_ERROR(sink.Session(s));
  RETURN_IF_ERROR(txn.ScanHandles([&](const HandleRow& r) { return sink.Handle(r); }));
  RETURN_IF_ERROR(txn.ScanReplays([&](const ReplayRow& r) { return sink.Replay(r); }));
  ASSIGN_OR_RETURN(auto nodes, txn.ListNodes());
  for (const NodeRow& n : nodes) RETURN_IF_ERROR(sink.Node(n));
  ASSIGN_OR_RETURN(auto volumes, txn.ListVolumes());
  for (const VolumeRecord& v : volumes) RETURN_IF_ERROR(sink.Volume(v));
  for (const char* key : kCopiedProperties) {
    ASSIGN_OR_RETURN(auto value, txn.GetProperty(key));
    if (value.has_value()) RETURN_IF_ERROR(sink.Property(key, *value));
  }
  return Status::Ok();
}

// Row count and FNV-1a digest of each kind, over a canonical encoding of
// every field (integers as 8 bytes, byte strings length first).
class DigestSink final : public RowSink {
 public:
  struct Kind {
    uint64_t rows = 0;
    uint64_t digest = 14695981039346656037ull;
  };

  Status Inode(const InodeRow& r) override {
    const InodeAttr& a = r.attr;
    Begin(kInodes);
    Ints({a.ino.value(),
          a.mode,
          a.uid,
          a.gid,
          a.size,
          a.nlink,
          a.rdev,
          static_cast<uint64_t>(a.atime.sec),
          a.atime.nsec,
          static_cast<uint64_t>(a.mtime.sec),
          a.mtime.nsec,
          static_cast<uint64_t>(a.ctime.sec),
          a.ctime.nsec,
          a.chunk_size,
          a.generation,
          a.replicas,
          static_cast<uint64_t>(a.placement),
          a.placement_nodes.size(),
          r.parent.value(),
          r.entry_seq,
          PackProtection(a.protect),
          a.protect.within_s});
    for (NodeId n : a.placement_nodes) Ints({n.value()});
    Bytes(r.target);
    return Status::Ok();
  }
  Status Dentry(const DentryRow& r) override {
    Begin(kDentries);
    Ints({r.parent.value(), r.ino.value(), r.seq});
    Bytes(r.name);
    return Status::Ok();
  }
  Status Xattr(const XattrRow& r) override {
    Begin(kXattrs);
    Ints({r.ino.value()});
    Bytes(r.name);
    Bytes(r.value);
    return Status::Ok();
  }
  Status Chunk(const ChunkRow& r) override {
    Begin(kChunks);
    Ints({r.id.value(), r.ino.value(), r.index, r.object_version});
    Bytes(r.ec);
    return Status::Ok();
  }
  Status Replica(const ReplicaRow& r) override {
    Begin(kReplicas);
    Ints({r.chunk.value(), r.pos, r.node.value(), r.volume.value(), r.version,
          static_cast<uint64_t>(r.state)});
    return Status::Ok();
  }
  Status Garbage(const GarbageRow& r) override {
    Begin(kGarbage);
    Ints({r.id, r.chunk.value(), r.ino.value(), r.index, r.node.value(), r.volume.value(),
          r.version});
    return Status::Ok();
  }
  Status Session(const SessionRecord& r) override {
    Begin(kSessions);
    Ints({r.session.value(), static_cast<uint64_t>(r.last_renewed.sec), r.last_renewed.nsec});
    Bytes(r.client_name);
    Bytes(r.host_id);
    return Status::Ok();
  }
  Status Handle(const HandleRow& r) override {
    Begin(kHandles);
    Ints({r.id.value(), r.session.value(), r.ino.value(), r.flags});
    return Status::Ok();
  }
  Status Replay(const ReplayRow& r) override {
    Begin(kReplays);
    Ints({r.session.value(), r.slot, r.seq, static_cast<uint64_t>(r.code), r.ino.value(),
          r.handle.value(), r.flag ? 1u : 0u});
    Bytes(r.message);
    return Status::Ok();
  }
  Status Node(const NodeRow& r) override {
    Begin(kNodes);
    Ints({r.node.value(), static_cast<uint64_t>(r.admin_state),
          static_cast<uint64_t>(r.last_heartbeat.sec), r.last_heartbeat.nsec});
    Bytes(r.host_id);
    Bytes(r.hostname);
    Bytes(r.address);
    Bytes(r.local_socket);
    return Status::Ok();
  }
  Status Volume(const VolumeRecord& r) override {
    Begin(kVolumes);
    Ints({r.volume.value(), r.node.value(), r.total_bytes, r.free_bytes, r.chunks});
    Bytes(r.uuid);
    Bytes(r.path);
    return Status::Ok();
  }
  Status Property(const std::string& key, const std::string& value) override {
    Begin(kProperties);
    Bytes(key);
    Bytes(value);
    return Status::Ok();
  }

  const std::array<Kind, kKindCount>& kinds() const { return kinds_; }

 private:
  void Begin(RowKind kind) {
    current_ = &kinds_[kind];
    ++current_->rows;
    Ints({current_->rows});  // rows are compared in order
  }
  void Feed(const void* data, size_t len) {
    const auto* p = static_cast<const unsigned char*>(data);
    for (size_t i = 0; i < len; ++i) {
      current_->digest ^= p[i];
      current_->digest *= 1099511628211ull;
    }
  }
  void Ints(std::initializer_list<uint64_t> values) {
    for (uint64_t v : values) {
      unsigned char le[8];
      for (int i = 0; i < 8; ++i) le[i] = static_cast<unsigned char>(v >> (8 * i));
      Feed(le, sizeof le);
    }
  }
  void Bytes(const std::string& s) {
    Ints({s.size()});
    Feed(s.data(), s.size());
  }

  std::array<Kind, kKindCount> kinds_{};
  Kind* current_ = nullptr;
};

// Writes every row into the target transaction; counts rows and keeps the
// largest id of each counter.
class CopySink final : public RowSink {
 public:
  CopySink(WriteTxn& to, const CopyOptions& options) : to_(to), options_(options) {}

  Status Inode(const InodeRow& r) override {
    Raise(Counter::kInode, r.attr.ino.value());
    return Wrote(kInodes, to_.PutInode(r));
  }
  Status Dentry(const DentryRow& r) override { return Wrote(kDentries, to_.PutDentry(r)); }
  Status Xattr(const XattrRow& r) override {
    return Wrote(kXattrs, to_.PutXattr(r.ino, r.name, r.value));
  }
  Status Chunk(const ChunkRow& r) override {
    Raise(Counter::kChunk, r.id.value());
    return Wrote(kChunks, to_.PutChunk(r));
  }
  Status Replica(const ReplicaRow& r) override { return Wrote(kReplicas, to_.PutReplica(r)); }
  Status Garbage(const GarbageRow& r) override {
    Raise(Counter::kGarbage, r.id);
    return Wrote(kGarbage, to_.PutGarbage(r));
  }
  Status Session(const SessionRecord& r) override {
    Raise(Counter::kSession, r.session.value());
    return Wrote(kSessions, to_.PutSession(r));
  }
  Status Handle(const HandleRow& r) override {
    Raise(Counter::kHandle, r.id.value());
    return Wrote(kHandles, to_.PutHandle(r));
  }
  Status Replay(const ReplayRow& r) override { return Wrote(kReplays, to_.PutReplay(r)); }
  Status Node(const NodeRow& r) override {
    Raise(Counter::kNode, r.node.value());
    return Wrote(kNodes, to_.PutNode(r));
  }
  Status Volume(const VolumeRecord& r) override {
    Raise(Counter::kVolume, r.volume.value());
    return Wrote(kVolumes, to_.PutVolume(r));
  }
  Status Property(const std::string& key, const std::string& value) override {
    return Wrote(kProperties, to_.PutProperty(key, value));
  }

  // The largest id of each counter seen (index: Counter).
  std::array<uint64_t, 7> highest{};
  std::array<uint64_t, kKindCount> rows{};
  uint64_t total = 0;

 private:
  void Raise(Counter c, uint64_t id) {
    uint64_t& h = highest[static_cast<size_t>(c)];
    h = std::max(h, id);
  }
  Status Wrote(RowKind kind, Status st) {
    if (!st.ok()) return st.WithContext(fmt::format("copy {}", kKinds[kind]));
    ++rows[kind];
    ++total;
    if (options_.progress && options_.progress_every > 0 && total % options_.progress_every == 0) {
      options_.progress(total);
    }
    return Status::Ok();
  }

  WriteTxn& to_;
  const CopyOptions& options_;
};

constexpr std::array<Counter, 7> kCounters = {
    Counter::kInode,  Counter::kChunk, Counter::kGarbage, Counter::kSession,
    Counter::kHandle, Counter::kNode,  Counter::kVolume};

// Whether a scan of `txn` finds at least `n` rows (it stops there).
template <typename Row>
Result<bool> HasRows(Status (ReadTxn::*scan)(const RowVisitor<Row>&), ReadTxn& txn, uint64_t n,
                     const std::function<bool(const Row&)>& counts) {
  uint64_t seen = 0;
  Status st = (txn.*scan)([&](const Row& row) {
    if (counts(row)) ++seen;
    return seen >= n ? Status(StatusCode::kBusy, "enough") : Status::Ok();
  });
  if (!st.ok() && st.code() != StatusCode::kBusy) return st;
  return seen >= n;
}

// Refuses a target that holds more than a fresh store's root inode.
Status CheckTargetIsNew(Engine& to) {
  ASSIGN_OR_RETURN(auto txn, to.BeginRead());
  ASSIGN_OR_RETURN(bool other_inodes,
                   HasRows<InodeRow>(&ReadTxn::ScanInodes, *txn, 1,
                                     [](const InodeRow& r) { return r.attr.ino != kRootInode; }));
  ASSIGN_OR_RETURN(bool dentries, HasRows<DentryRow>(&ReadTxn::ScanDentries, *txn, 1,
                                                     [](const DentryRow&) { return true; }));
  ASSIGN_OR_RETURN(auto chunks, txn->ScanChunks(ChunkId(), 1));
  ASSIGN_OR_RETURN(auto nodes, txn->ListNodes());
  const char* found = other_inodes      ? "inodes"
                      : dentries        ? "directory entries"
                      : !chunks.empty() ? "chunks"
                      : !nodes.empty()  ? "data nodes"
                                        : nullptr;
  if (found == nullptr) return Status::Ok();
  return Status(
      StatusCode::kExists,
      fmt::format(
          "the target {} store is not new: it has {} beyond a fresh root; copy only into an "
          "empty database",
          to.name(), found));
}

// The first id each counter of `from` would hand out now, less one: every
// id it ever handed out is at or below. (A dropped write transaction; an
// engine may burn the ids, never reuse them.)
Result<std::array<uint64_t, 7>> CounterMarks(Engine& from) {
  std::array<uint64_t, 7> marks{};
  ASSIGN_OR_RETURN(auto txn, from.BeginWrite(WriteOptions{}));
  for (Counter c : kCounters) {
    ASSIGN_OR_RETURN(uint64_t next, txn->NextId(c));
    marks[static_cast<size_t>(c)] = next - 1;
  }
  return marks;
}

Result<std::array<DigestSink::Kind, kKindCount>> DigestOf(Engine& engine) {
  ASSIGN_OR_RETURN(auto txn, engine.BeginRead(ReadOptions{/*long_running=*/true}));
  DigestSink sink;
  RETURN_IF_ERROR(VisitStore(*txn, sink));
  return sink.kinds();
}

}  // namespace

Status VerifyCopy(Engine& from, Engine& to) {
  ASSIGN_OR_RETURN(auto want, DigestOf(from));
  ASSIGN_OR_RETURN(auto got, DigestOf(to));
  std::string diff;
  for (size_t k = 0; k < kKindCount; ++k) {
    if (want[k].rows == got[k].rows && want[k].digest == got[k].digest) continue;
    diff += fmt::format("{}{}: {} rows in {}, {} in {}{}", diff.empty() ? "" : "; ", kKinds[k],
                        want[k].rows, from.name(), got[k].rows, to.name(),
                        want[k].rows == got[k].rows ? " (contents differ)" : "");
  }
  if (diff.empty()) return Status::Ok();
  return Status(StatusCode::kCorruption, fmt::format("the copy differs from its source: {}", diff));
}

Result<CopyReport> CopyStore(Engine& from, Engine& to, const CopyOptions& options) {
  if (&from == &to) return Status(StatusCode::kInvalidArgument, "cannot copy a store onto itself");
  RETURN_IF_ERROR(CheckTargetIsNew(to));
  ASSIGN_OR_RETURN(auto marks, CounterMarks(from));

  CopyReport report;
  {
    ASSIGN_OR_RETURN(auto source, from.BeginRead(ReadOptions{/*long_running=*/true}));
    ASSIGN_OR_RETURN(auto target, to.BeginWrite(WriteOptions{/*durable=*/true}));
    CopySink sink(*target, options);
    RETURN_IF_ERROR(VisitStore(*source, sink));
    for (Counter c : kCounters) {
      const uint64_t mark =
          std::max(marks[static_cast<size_t>(c)], sink.highest[static_cast<size_t>(c)]);
      if (mark > 0) RETURN_IF_ERROR(target->ReserveId(c, mark));
    }
    RETURN_IF_ERROR(target->Commit());
    report.rows = sink.total;
    for (size_t k = 0; k < kKindCount; ++k)
      report.kinds.push_back(KindCount{kKinds[k], sink.rows[k]});
  }
  if (options.progress) options.progress(report.rows);
  LOG_INFO("copied {} rows from the {} store to the {} store; verifying", report.rows, from.name(),
           to.name());
  RETURN_IF_ERROR(VerifyCopy(from, to));
  return report;
}

}  // namespace t0fs::meta
