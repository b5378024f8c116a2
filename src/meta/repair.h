// RepairPlanner: keeps every chunk's replicas true to its objective.
//
// A pass (every repair-interval) looks at every chunk with its replicas and
// its file's objective:
//   - fewer good replicas than the objective asks (a node down past
//     repair-grace, a stale or corrupt replica, a draining node, an objective
//     raised from 1 to 2) → one copy task: a pending replica on a new target
//     node, and a copy command for that node, which pulls the chunk from a
//     healthy peer (data flows node to node, never through meta);
//   - enough good replicas → extra ones (stale, lost, on a draining node,
//     beyond the objective) leave the layout and their files are removed.
// A copy wanted only for a protection goal (protect=, after the writer's
// replicas) waits until the scan is done: repairs of lost redundancy take the
// copy slots first, then the protection copies that waited longest.
// At most one task per chunk and copies-per-node tasks per target at a time.
// Copy results arrive with heartbeats; a task that does not finish (target
// down, restarted, no progress for copy-timeout) is retried by a later pass.
// A large chunk may take longer than copy-timeout while it progresses (a
// 64 GiB chunk over 1 Gbit/s: about 10 minutes); the source's read right
// lasts as long as the copy would at kMinCopyRate.
//
// With protect=object (an object tier configured), a chunk is protected
// once the object tier holds its committed version: the pass sends an upload
// command to a node with a healthy replica (after the file's last close, or
// `within` after its last change), and a chunk no node holds any more is
// recalled from its object to a new node by an ordinary copy task whose
// source is the object. Uploads share the copy slots of the uploading node.
//
// With protect=ec:K+M, a chunk is protected once K+M cells of its committed
// version are on K+M distinct nodes that are not lost: the pass sends an
// encode command to a node with a healthy replica (same timing as uploads),
// which cuts it into the cells listed and writes each to its node; cells on
// lost nodes are made again (from a replica) on other nodes. A chunk no node
// holds any more is rebuilt by a copy task whose sources are K of its cells
// (the node decodes). Encodes share the copy slots of the encoding node.
// Every ec-verify-interval (counted from when this meta first saw the
// stripe complete), a parity check goes to a node with a healthy replica:
// it encodes the replica again and compares each cell; cells it finds bad
// (other bytes, length or version, or gone) are dropped from the stripe and
// made again by the next encode. A node's scrubber sees a cell's checksums
// only; this sees whether the cells are the code of the data.
//
// A writer that finds no replica of a chunk able to take its write (their
// nodes do not answer) asks for the chunk (MarkUrgent, from ReportReplica
// with writer_waits): while that mark lasts, and while the object tier
// holds the chunk's committed version, the pass counts the chunk's replicas
// on nodes that are not up (suspect or down; a client's word alone never
// makes a copy of a chunk on a node that heartbeats) as lost — so a chunk no
// up node holds is recalled at once, not after repair-grace, and the lost
// replica leaves the layout once the recalled one is healthy. A marked
// chunk's surplus replicas are not trimmed (the lost node may come back
// while the writer's bytes are on the recalled replica only, uncommitted).
//
// keep-local=drop|pressure: once the tier holds a chunk's committed version
// (protect=object: the object; protect=ec: every cell, on nodes not lost),
// and no handle has the file open (readers included), its healthy replicas
// become offloaded (MetaStore::OffloadReplica: the row keeps the version,
// the file goes to the garbage queue) — with drop at the first pass after
// the last close (with after=D, once the file has gone D unused: LastUse),
// with pressure only while a volume holding it is fuller than
// tier-high-watermark, least recently used files first (whole files),
// until tier-low-watermark. Reads of an offloaded chunk go to the tier. A
// writer that asks for it (MarkUrgent, ReportReplica REPORT_RECALL) has it
// staged back at the next pass (a recall or a rebuild onto an up node, the
// offloaded row's node allowed), and the offloaded row leaves once the
// healthy replica is there; so does a reader's ask (recall on read), where
// the rule keeps what comes back for a while: keep-local=pressure, or drop
// with after= (the read open moved the file's atime). An objective changed
// back to keep-local=keep recalls every offloaded chunk.
//
// It also reconciles a node that comes back (or that this meta has not seen
// yet): the node is sent the replicas it should hold with their committed
// versions and reports any whose file is missing or older, which become
// stale — a returning node is never trusted blindly.
//
// repair.cc plans copies and handles results; repair_protect.cc the
// uploads and encodes of protection goals.
//
// Thread safety: RunPass runs on the housekeeping thread; the heartbeat
// handlers call the On* and CommandsFor methods concurrently; mu_ guards
// the task state (never held across store calls that could block long —
// store calls are short transactions).
#pragma once

#include <algorithm>
#include <chrono>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "meta/health.h"
#include "meta/meta_config.h"
#include "meta/object_tier.h"
#include "meta/store/meta_store.h"
#include "rpc/proto/meta.pb.h"

namespace t0fs::meta {

// Files below their protection goal (the durability ladder), as of the last
// pass.
struct ProtectStats {
  uint64_t waiting_files = 0;
  uint64_t waiting_bytes = 0;  // their data not yet protected
  uint64_t oldest_age_s = 0;   // the longest wait
  uint64_t overdue_files = 0;  // waiting longer than their `within`
};

struct RepairStats {
  uint64_t under_replicated = 0;  // as of the last pass
  uint64_t over_replicated = 0;
  uint64_t stale_replicas = 0;
  uint64_t unavailable = 0;  // chunks with no readable replica at all
  uint64_t copies_running = 0;
  uint64_t copies_done = 0;
  uint64_t copies_failed = 0;
  uint64_t copied_bytes = 0;
  uint64_t uploads_done = 0;  // chunk versions copied to the object tier
  uint64_t uploads_failed = 0;
  uint64_t recalls = 0;      // copies started from the object tier
  uint64_t urgent_recalls = 0;   // ... of them, at once because a writer waited (MarkUrgent)
  uint64_t ec_encodes_done = 0;  // encode commands that wrote their cells
  uint64_t ec_encodes_failed = 0;
  uint64_t ec_rebuilds = 0;  // copies started from erasure-coded cells
  uint64_t ec_verifies_clean = 0;     // parity checks that found every cell true
  uint64_t ec_verifies_mismatch = 0;  // parity checks that found a bad cell
  uint64_t ec_verifies_failed = 0;    // parity checks that did not run to the end
  uint64_t ec_bad_cells = 0;          // cells parity checks found bad
  uint64_t offloads = 0;              // chunks whose local copies were offloaded (keep-local)
  uint64_t pressure_offloads = 0;     // ... of them, for a volume over tier-high-watermark
  uint64_t offloaded_chunks = 0;      // as of the last pass: chunks held by the tier only
  uint64_t offloaded_bytes = 0;
  double copy_rate_bps = 0;  // bytes/s received by copies over the last minute
  std::unordered_map<NodeId, uint64_t> replicas_per_node;  // as of the last pass
  ProtectStats protect;
};

class RepairPlanner {
 public:
  // `object_tier`: null when the cluster has none (protect=object waits).
  RepairPlanner(MetaStore& store, NodeHealth& health, const MetaConfig& config, std::string cap_key,
                const ObjectTier* object_tier = nullptr);

  // One pass over every chunk.
  void RunPass();
  // Copy commands waiting for `node` (handed out once; results come back
  // through OnHeartbeat).
  std::vector<pb::NodeCommand> TakeCommands(NodeId node);
  // Copy results, ids still running, damage reports, the byte counter.
  void OnHeartbeat(NodeId node, const pb::HeartbeatReq& beat);
  // The node came back or is new to this meta: have it check every replica
  // it should hold against the committed versions.
  void RequestCheck(NodeId node);
  RepairStats Stats();
  // Copies in flight towards `node` (placement's load signal).
  uint64_t LoadOf(NodeId node);
  // A writer waits for `chunk`, which no replica took (see the class
  // comment): marked for kUrgentFor from now (marked again: extended), in
  // the store (MetaStore::MarkUrgent), so that a meta server that does not
  // plan can mark a chunk for the one that does (each pass reads the
  // marks). True when it was not marked before. With kMaxUrgent chunks
  // marked a new one is refused (logged); so is one the store cannot take.
  // `lasting`: kRecallFor for an offloaded chunk a writer asks for (it
  // asks again every half second while it waits; once it wrote, the chunk
  // may be offloaded again soon after its new version is protected).
  bool MarkUrgent(ChunkId chunk, std::chrono::seconds lasting = kUrgentFor);
  static constexpr std::chrono::seconds kUrgentFor{120};
  static constexpr std::chrono::seconds kRecallFor{10};
  static constexpr size_t kMaxUrgent = 4096;

 private:
  using Clock = std::chrono::steady_clock;
  struct Task {
    uint64_t id = 0;
    ChunkId chunk;
    NodeId target;
    Clock::time_point created;
    Clock::time_point sent;  // zero until handed to the target
    // Created, then the last heartbeat in which its node copied bytes while
    // running it.
    Clock::time_point progressed;
    // kUpload, kEncode, kVerify: run by `target` from its own replica.
    enum Kind { kCopy, kUpload, kEncode, kVerify } kind = kCopy;
    // kEncode: the cells it makes (others at node 0); kVerify: the stripe
    // it checks.
    ec::EcStripe made;
    // kCopy: where from — a replica on a peer, or, when no node holds one,
    // the object tier (a recall) or erasure-coded cells (a rebuild).
    enum Source { kPeer, kObjectTier, kCells } source = kPeer;
  };
  struct Choice;  // a node as this pass sees it
  // A protection copy left for after the scan, and how long it has waited.
  struct Deferred {
    int64_t waited = 0;
    ChunkReplicas chunk;
  };
  // A heap with the youngest on top; sorted by it, the oldest come first.
  struct YoungestOnTop {
    bool operator()(const Deferred& a, const Deferred& b) const { return a.waited > b.waited; }
  };
  using DeferredQueue = std::vector<Deferred>;
  // Plans one chunk. With `defer` (the scan): counts it, and leaves a copy
  // wanted only for protection in `defer`; without (after the scan): plans
  // such a copy.
  void PlanChunk(const ChunkReplicas& c, const std::map<NodeId, Choice>& nodes, int64_t now_s,
                 DeferredQueue* defer);
  // keep-local: offloads the replicas `local` of `c` at `committed`
  // (MetaStore::OffloadReplica); true when one was. Called with mu_ held.
  bool Offload(const ChunkReplicas& c, uint64_t committed, const std::vector<const Replica*>& local,
               bool pressure);
  // keep-local=pressure: notes `c` (its healthy replicas `good`) as a
  // candidate when one of them is on a volume over tier-high-watermark.
  // Called with mu_ held.
  void NotePressure(const ChunkReplicas& c, uint64_t committed,
                    const std::vector<const Replica*>& good);
  // The volumes over tier-high-watermark and the bytes each must free to
  // reach tier-low-watermark (less what was offloaded from it in the last
  // kPressureSettle, which its reports may not show yet).
  void FindPressure(const std::vector<NodeRecord>& records);
  // After the scan: offloads the candidates, least recently changed
  // first, until every volume's need is met — and the rest of the file
  // being offloaded then (a file goes whole). Called with mu_ held.
  void PlanPressure();
  // Counts a chunk below its protection goal in the pass; returns the
  // seconds its data has waited, -1 when it is protected or has no goal.
  // Called with mu_ held.
  int64_t NotePending(const ChunkReplicas& c, size_t good, uint64_t committed, bool ec_complete,
                      int64_t now_s);
  // Sends an upload of `c` at `committed` to the node of one of `sources`
  // that has a free copy slot. Called with mu_ held.
  void PlanUpload(const ChunkReplicas& c, uint64_t committed,
                  const std::vector<const Replica*>& sources,
                  const std::map<NodeId, Choice>& nodes);
  // Sends an encode of `c` at `committed` to the node of one of `sources`:
  // every cell when `stripe` is of another code or version, else the cells
  // it lacks or has on lost nodes. Called with mu_ held.
  void PlanEncode(const ChunkReplicas& c, uint64_t committed, const ec::EcStripe& stripe,
                  const std::vector<const Replica*>& sources,
                  const std::map<NodeId, Choice>& nodes);
  // A complete stripe whose parity check is due.
  struct VerifyDue {
    Clock::time_point checked;  // the last check: the oldest goes first
    ChunkReplicas chunk;
    uint64_t committed = 0;
    ec::EcStripe stripe;
  };
  // When `c`'s complete stripe was last checked if a parity check is due
  // (notes when this meta first saw it complete). Called with mu_ held.
  std::optional<Clock::time_point> VerifyDueSince(const ChunkReplicas& c);
  // Sends a due parity check to a node with a healthy replica and a spare
  // copy slot: after the pass's repairs and encodes, one per node at a time,
  // never the node's last free slot. Called with mu_ held.
  void PlanVerify(const VerifyDue& due, const std::map<NodeId, Choice>& nodes);
  // The first of `sources` at `committed` whose node is up, not paused and
  // has a free copy slot; null if none. Called with mu_ held.
  const Replica* FreeSource(const std::vector<const Replica*>& sources, uint64_t committed,
                            const std::map<NodeId, Choice>& nodes);
  // After a failed upload or encode by `node`: it is ordered none until its
  // pause ends (see upload_pauses_); returns the pause. Called with mu_ held.
  std::chrono::seconds PauseNode(NodeId node);
  // The code of `stripe` and its `cells` (with their nodes' addresses and
  // read rights lasting a copy of the whole chunk) into `cmd`: a rebuild's
  // or a parity check's sources.
  void AddCellsToRead(pb::NodeCommand& cmd, ChunkId chunk, const ec::EcStripe& stripe,
                      const std::vector<uint32_t>& cells,
                      const std::map<NodeId, Choice>& nodes) const;
  // A right (`rights`) on `chunk` (or a cell id) lasting a copy of `bytes`.
  pb::Capability CopyCap(ChunkId chunk, uint32_t rights, uint64_t bytes) const;
  // Records the result of an upload or encode run by `node` (the task is
  // already out of tasks_): the object's version or the cells, or a failure
  // and the node's pause.
  void OnProtectResult(NodeId node, Task& task, const pb::CopyResult& r);
  // The bytes of a chunk: its share of the file, at most the chunk size.
  static uint64_t ChunkBytes(const ChunkReplicas& c);
  // When the file was last used, in seconds: the later of its last change
  // (ctime) and its last read open (atime, relatime). keep-local's after=
  // and pressure's order count from it.
  static int64_t LastUse(const ChunkReplicas& c) { return std::max(c.ctime.sec, c.atime.sec); }
  void ExpireTasks();
  // The check commands for `node`: its healthy replicas, in pages.
  std::vector<pb::NodeCommand> CheckCommands(NodeId node);

  MetaStore& store_;
  NodeHealth& health_;
  const MetaConfig& config_;
  const std::string cap_key_;
  const ObjectTier* const object_tier_;

  std::mutex mu_;  // guards everything below
  uint64_t next_task_id_ = 1;
  std::unordered_map<ChunkId, Task> tasks_;  // by chunk: at most one each
  // Chunks a writer waits for (MarkUrgent), as the store had them at the
  // start of this pass.
  std::unordered_set<ChunkId> urgent_;
  // Files keep-newest rules keep local (MetaStore::KeptNewest), read by
  // each pass: never offloaded, recalled when offloaded.
  std::unordered_set<InodeId> kept_newest_;
  bool kept_newest_truncated_ = false;  // logged once per episode
  static constexpr size_t kMaxKeptNewest = 200000;
  std::unordered_map<NodeId, std::deque<pb::NodeCommand>> queued_;
  std::unordered_map<NodeId, bool> check_wanted_;
  std::unordered_map<NodeId, uint64_t> node_bytes_;  // last copied_bytes_total per node
  std::deque<std::pair<Clock::time_point, uint64_t>> rate_window_;
  RepairStats stats_;  // running totals (copies)
  // Counts of the pass in progress, and of the last complete one.
  struct PassCounts {
    uint64_t under_replicated = 0, over_replicated = 0, stale_replicas = 0, unavailable = 0;
    std::unordered_map<NodeId, uint64_t> replicas_per_node;
    ProtectStats protect;
    // Chunks below their protection goal → the wall-clock second a pass
    // first saw them so; the files counted.
    std::unordered_map<ChunkId, int64_t> waiting_since;
    std::unordered_set<InodeId> waiting_files, overdue_files;
    // Complete stripes → when their last parity check ended (or this meta
    // first saw them complete).
    std::unordered_map<ChunkId, Clock::time_point> ec_checked;
    std::vector<VerifyDue> verify_due;
    uint64_t offloaded_chunks = 0, offloaded_bytes = 0;
    uint64_t offloads = 0;  // chunks offloaded by this pass
    // keep-local=pressure candidates on volumes over the high watermark: a
    // heap with the most recently used on top (the least recent kept).
    struct PressureCandidate {
      int64_t used = 0;  // the file's LastUse
      ChunkReplicas chunk;
      uint64_t committed = 0;
      // By age, then by file and index: a file's chunks side by side.
      bool operator<(const PressureCandidate& o) const {
        return std::tie(used, chunk.ino, chunk.index) <
               std::tie(o.used, o.chunk.ino, o.chunk.index);
      }
    };
    std::vector<PressureCandidate> pressure;
  };
  // keep-local=pressure: what each volume over the high watermark must
  // free this pass; offloads in the last kPressureSettle by volume.
  std::unordered_map<VolumeId, int64_t> pressure_need_;
  std::unordered_map<VolumeId, std::deque<std::pair<Clock::time_point, uint64_t>>> pressure_freed_;
  std::unordered_set<VolumeId> over_watermark_;  // logged as over, until below again
  static constexpr std::chrono::seconds kPressureSettle{30};
  static constexpr size_t kMaxPressure = 4096;  // candidates kept per pass
  PassCounts pass_, last_pass_;
  std::unordered_map<ChunkId, int64_t> waiting_since_;  // of the last complete pass
  std::unordered_map<ChunkId, Clock::time_point> ec_checked_;  // of the last complete pass
  // Upload failures are logged once, then once a minute while they go on.
  bool upload_failing_ = false;
  Clock::time_point upload_failure_logged_{};
  uint64_t uploads_failed_unlogged_ = 0;
  // After a node's upload or encode failed, it is ordered no new one until `until`
  // (the tier is down, or refuses its keys): a pause of 1 s, doubled by
  // each failure up to 60 s; a success ends it. Other nodes go on.
  static constexpr std::chrono::seconds kMaxUploadPause{60};  // between uploads after failures
  struct UploadPause {
    Clock::time_point until{};
    std::chrono::seconds backoff{0};
  };
  std::unordered_map<NodeId, UploadPause> upload_pauses_;
  // After a chunk's recall or rebuild failed (e.g. its object fails its
  // checksums), it is tried again after a pause of 1 s, doubled by each
  // failure up to kMaxSourcelessPause, not at every pass; a success ends it.
  static constexpr std::chrono::seconds kMaxSourcelessPause{300};
  std::unordered_map<ChunkId, UploadPause> sourceless_pauses_;
  Clock::time_point ec_short_logged_{};  // the last "too few nodes for ec:K+M" line
};

}  // namespace t0fs::meta
