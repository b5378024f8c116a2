// MetaStore: the namespace, layouts and cluster records of t0fs, behind one
// interface so that SQLite (the embedded default) and PostgreSQL (later) are
// interchangeable.
//
// Contract for every implementation:
//  - Each method is one transaction: it is applied entirely or not at all,
//    and `kill -9` at any point leaves a store that opens and passes Check().
//  - POSIX semantics live here (rename cases, link counts, non-empty rmdir),
//    so every front end (FUSE, native API) gets the same answers. Errors use
//    the generic codes of common/status.h (kNotFound = ENOENT, ...).
//  - Permission checks are NOT done here: the FUSE mount runs with
//    default_permissions (the kernel checks), and native clients are trusted
//    once they have authenticated with the cluster secret.
//  - Mutating methods take an OpToken. When the token's (session, slot) has
//    already recorded `seq`, the method does not run again: it returns the
//    recorded outcome (see Replay). A zero token (session 0) records nothing.
//
// Thread safety: implementations are safe for concurrent use; they serialise
// writers internally.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.h"
#include "common/ids.h"
#include "common/set_attr_mask.h"
#include "common/status.h"
#include "ec/stripe_record.h"

namespace t0fs::meta {

inline constexpr size_t kMaxNameLength = 255;
inline constexpr size_t kMaxSymlinkLength = 4095;
inline constexpr size_t kMaxXattrNameLength = 255;
inline constexpr size_t kMaxXattrValueLength = 64 * 1024;
inline constexpr uint32_t kMaxLinks = 65000;

// Where a file's replicas go: `kLocal` puts the first replica on the
// writer's node (the Tier 0 rule), `kSpread` lets placement choose by free
// space and load alone.
enum class Placement : uint32_t { kLocal = 0, kSpread = 1 };

// The asynchronous protection goal of a file (the durability ladder): the
// writer's copies (`replicas`) are made at write time; the protection is
// reached afterwards by the repair planner, once the file has no writer or
// `within_s` after its data was first seen unprotected.
enum class ProtectKind : uint32_t {
  kNone = 0,      // `replicas` is all there is
  kReplicas = 1,  // `copies` replicas in all
  kEc = 2,        // an ec:K+M stripe (K = copies, M = parity); not yet served
  kObject = 3,    // a copy in the object tier; not yet served
};
// What happens to the writer's local copy once the file is protected.
enum class KeepLocal : uint32_t { kKeep = 0, kDrop = 1, kPressure = 2 };
struct Protection {
  ProtectKind kind = ProtectKind::kNone;
  uint32_t copies = 0;    // kReplicas: replicas in all; kEc: data cells K
  uint32_t parity = 0;    // kEc: parity cells M
  uint32_t within_s = 0;  // the deadline, seconds after the file last changed
  KeepLocal keep_local = KeepLocal::kKeep;
  // keep-local=drop: not before the file has gone this long unused (neither
  // changed nor opened for reading: the later of its ctime and atime);
  // 0 = once protected.
  uint32_t drop_after_s = 0;
  friend bool operator==(const Protection&, const Protection&) = default;
};

// The declarative policy of a file or directory tree: how many copies of
// every chunk, where, the chunk size of files created below, and the
// protection reached in the background.
struct Objective {
  uint32_t replicas = 1;
  Placement placement = Placement::kLocal;
  std::vector<NodeId> nodes;  // allowed nodes; empty = any
  uint64_t chunk_size = 0;    // for new files; 0 = the cluster default
  Protection protect;
  // Directories: keep-newest=N — the N most recently modified entries (a
  // directory with everything below it) keep their local copies whatever
  // keep-local says (MetaStore::KeptNewest). Not inherited: a store
  // property names the directories that have one. 0 = none.
  uint32_t keep_newest = 0;
  friend bool operator==(const Objective&, const Objective&) = default;
};

struct InodeAttr {
  InodeId ino;
  uint32_t mode = 0;  // st_mode: type and permission bits
  uint32_t uid = 0;
  uint32_t gid = 0;
  uint64_t size = 0;  // files: committed size; symlinks: target length; dirs: 0
  uint32_t nlink = 0;
  uint32_t rdev = 0;
  Timespec atime, mtime, ctime;
  uint64_t chunk_size = 0;  // regular files: fixed at creation; dirs: for files created below (0 = default)
  uint64_t generation = 0;
  uint32_t replicas = 1;    // the objective (inherited from the parent at creation)
  Placement placement = Placement::kLocal;
  std::vector<NodeId> placement_nodes;
  Protection protect;  // the objective's protection goal (inherited like replicas)
};

struct DirEntry {
  std::string name;
  InodeId ino;
  uint32_t mode = 0;    // at least the type bits
  uint64_t cookie = 0;  // pass back to ReadDir to continue after this entry
  std::optional<InodeAttr> attr;  // filled when ReadDir is asked for attrs
};

// The garbage queue of the object tier: its rows name objects (chunk,
// version) that meta deletes from the bucket. No data node has this id.
inline const NodeId kObjectTierNode{0};

// kOffloaded (keep-local=drop|pressure): the replica's file was removed on
// purpose once the object tier or the erasure-coded cells held its version.
// The row keeps that version (the chunk's committed one while no healthy
// replica exists), is never read, written or repaired, and leaves when a
// healthy replica is back (a write staged the chunk back).
enum class ReplicaState : uint32_t { kHealthy = 0, kStale = 1, kPending = 2, kOffloaded = 3 };

struct Replica {
  NodeId node;
  VolumeId volume;
  ChunkId chunk;
  uint64_t version = 0;  // last committed write version; 0 = never written
  ReplicaState state = ReplicaState::kHealthy;
  friend bool operator==(const Replica&, const Replica&) = default;
};

struct ChunkLayout {
  uint64_t index = 0;  // covers [index * chunk_size, (index + 1) * chunk_size)
  std::vector<Replica> replicas;
  uint64_t object_version = 0;  // of the copy in the object tier (protect=object); 0: none
  std::string ec{};  // its erasure-coded cells (protect=ec): ec::FormatStripe text; "" none
  friend bool operator==(const ChunkLayout&, const ChunkLayout&) = default;
};

// Where a new chunk should go; chosen by meta's placement logic, not the store.
struct ReplicaTarget {
  NodeId node;
  VolumeId volume;
};

struct OpToken {
  SessionId session;  // 0 = do not record
  uint32_t slot = 0;
  uint64_t seq = 0;
};

struct MakeNodeArgs {
  InodeId parent;
  std::string name;
  uint32_t mode = 0;  // includes the type: S_IFREG, S_IFDIR, S_IFLNK, S_IFIFO, S_IFSOCK, S_IFCHR, S_IFBLK
  uint32_t uid = 0;
  uint32_t gid = 0;
  uint32_t rdev = 0;
  bool exclusive = true;    // regular files: false = return the existing file (O_CREAT without O_EXCL)
  std::string link_target;  // S_IFLNK only
  // S_IFREG only, > 0: the new file's chunk size, chosen by the caller's
  // policy (the store does not know the cluster defaults). Directories
  // inherit their parent's chunk size; other types have none.
  uint64_t chunk_size = 0;
  // S_IFREG only, valid: the create also opens the file in its transaction
  // (a handle of this session with `open_flags`; O_TRUNC is not applied to
  // an existing file: the caller truncates) and returns the first chunks of
  // its layout. A new file gets chunk 0 on `first_chunk` when that is set.
  SessionId open_session{};
  uint32_t open_flags = 0;
  std::vector<ReplicaTarget> first_chunk{};
  // The id chunk 0 gets: one ReserveChunkIds handed out (the caller makes
  // sure; the store only checks that no chunk has it). Invalid, or taken: a
  // new one.
  ChunkId first_chunk_id{};
  // S_IFREG only, decided in the create's own transaction (one transaction
  // per create) by the caller's policy and placement, which must not use the
  // store: the chunk size from the directory, instead of chunk_size; with
  // open_session, chunk 0's replicas from the new file's attributes (its
  // objective and chunk size), instead of first_chunk. Targets that are not
  // (or no longer) a node's volumes, or none, leave the file without a chunk
  // (the writer's Allocate places it then).
  std::function<uint64_t(const InodeAttr& dir)> file_chunk_size{};
  std::function<std::vector<ReplicaTarget>(const InodeAttr& file)> place_first_chunk{};
};

// Chunks of the layout a create or an open hands out; the client fetches
// more on demand.
inline constexpr uint64_t kOpenLayoutChunks = 1024;

struct MakeNodeResult {
  InodeAttr attr;
  bool created = true;
  InodeAttr parent;                 // the directory after the change
  HandleId handle;                  // when the create opened the file
  std::vector<ChunkLayout> layout;  // when it opened: chunks [0, kOpenLayoutChunks)
};

struct SetAttrArgs {
  InodeId ino;
  uint32_t mask = 0;
  uint32_t mode = 0;  // permission bits only; the type cannot change
  uint32_t uid = 0;
  uint32_t gid = 0;
  uint64_t size = 0;
  Timespec atime, mtime, ctime;
  uint64_t keep_chunks = 0;  // chunks below this index were resized by the client (zero-filled when extending; a held passthrough chunk 0): kept
};

// A chunk whose data must be removed from a data node. Chunks enter the
// garbage queue when their file is freed or truncated away; the node removes
// the files and acknowledges (AckGarbage).
struct GarbageChunk {
  uint64_t id = 0;  // queue entry id
  ChunkId chunk;
  NodeId node;
  VolumeId volume;
  uint64_t version = 0;  // the replica's (kObjectTierNode: the object's)
};

// A chunk file a node holds that no layout names (`t0fs fsck`'s orphan).
struct OrphanFile {
  ChunkId chunk;  // or an erasure-coded cell's id
  VolumeId volume;
  uint64_t version = 0;
};

struct RenameFlags {
  static constexpr uint32_t kNoReplace = 1;  // RENAME_NOREPLACE
  static constexpr uint32_t kExchange = 2;   // RENAME_EXCHANGE
};

struct XattrFlags {
  static constexpr uint32_t kCreate = 1;   // XATTR_CREATE
  static constexpr uint32_t kReplace = 2;  // XATTR_REPLACE
};

struct OpenResult {
  HandleId handle;
  InodeAttr attr;
  std::vector<ChunkLayout> layout;  // regular files: chunks [0, kOpenLayoutChunks)
};

// One chunk a client wrote since its last commit.
struct WrittenChunk {
  WrittenChunk() = default;
  WrittenChunk(ChunkId c, uint64_t v, std::vector<NodeId> n = {}) : chunk(c), version(v), nodes(std::move(n)) {}
  ChunkId chunk;
  uint64_t version = 0;
  // The nodes whose replica took every write of this session. Empty = all
  // replicas. A replica of the chunk not listed missed writes: it becomes
  // stale (its version stays) and repair brings it back.
  std::vector<NodeId> nodes;
};

struct CommitArgs {
  InodeId ino;
  HandleId handle;     // may be 0 (a commit without an open handle, e.g. from a tool)
  uint64_t size = 0;   // the file becomes max(current size, size)
  std::optional<Timespec> mtime;  // also sets ctime
  std::vector<WrittenChunk> written;  // version := max(version, v) on the replicas that took it
};

struct VolumeRecord {
  VolumeId volume;
  NodeId node;
  std::string uuid;  // written in the volume directory; identifies it across restarts
  std::string path;
  uint64_t total_bytes = 0;
  uint64_t free_bytes = 0;
  uint64_t chunks = 0;
};

// Administrative state of a node (its health — up, suspect, down — is
// derived by meta from heartbeats and is not stored).
enum class NodeAdminState : uint32_t { kActive = 0, kDraining = 1 };

struct NodeRecord {
  NodeId node;
  NodeAdminState admin_state = NodeAdminState::kActive;
  std::string host_id;
  std::string hostname;
  std::string address;       // TCP chunk service
  std::string local_socket;  // unix socket for fd passing
  Timespec last_heartbeat;
  std::vector<VolumeRecord> volumes;
};

struct SessionRecord {
  SessionId session;
  std::string client_name;
  std::string host_id;
  Timespec last_renewed;
};

struct StoreCounts {
  uint64_t files = 0;        // regular files (and other non-directories)
  uint64_t directories = 0;
  uint64_t chunks = 0;
  uint64_t logical_bytes = 0;  // sum of file sizes
  uint64_t sessions = 0;
  uint64_t open_handles = 0;
  uint64_t garbage_chunks = 0;
};

// A chunk with its objective and replicas, as the repair planner sees it.
struct ChunkReplicas {
  ChunkId chunk;
  InodeId ino;
  uint64_t index = 0;
  uint64_t chunk_size = 0;
  Objective objective;  // its chunk_size is the file's
  std::vector<Replica> replicas;
  uint64_t file_size = 0;
  Timespec ctime;  // the file's last change (data or attributes; never set back by utimes)
  Timespec atime;  // its last read open (relatime: AtimeDue in store_util.h), or utimes'
  bool writer_open = false;  // a write handle is open (only asked when objective.protect is set)
  bool open = false;         // any handle is open, reads included (the same)
  uint64_t object_version = 0;  // the version of its copy in the object tier; 0 = none
  std::string ec;               // its erasure-coded cells: ec::FormatStripe text; "" none
};

// One chunk as fsck sees it.
struct ChunkRecord {
  ChunkId chunk;
  InodeId ino;
  uint64_t index = 0;
  Replica replica;
  bool garbage = false;  // queued for removal, no longer in a layout
  // 0: a replica; i + 1: the chunk's erasure-coded cell i, whose file on
  // replica.node is ec::CellChunkId(chunk, i) (replica.chunk says so too).
  uint32_t cell = 0;
};

class MetaStore {
 public:
  virtual ~MetaStore() = default;

  // ---- namespace: reads ----
  virtual Result<InodeAttr> GetAttr(InodeId ino) = 0;
  virtual Result<InodeAttr> Lookup(InodeId parent, std::string_view name) = 0;
  virtual Result<std::string> ReadLink(InodeId ino) = 0;
  // Entries after `cookie` (0 = start) in a stable order, at most `max`;
  // "." and ".." come first (cookies 1 and 2). Entries created or removed
  // during a listing may or may not appear; the others appear exactly once.
  // `eof` is set when the listing is complete.
  virtual Result<std::vector<DirEntry>> ReadDir(InodeId dir, uint64_t cookie, size_t max,
                                                bool with_attrs, bool* eof) = 0;
  virtual Result<std::string> GetXattr(InodeId ino, std::string_view name) = 0;
  virtual Result<std::vector<std::string>> ListXattr(InodeId ino) = 0;

  // ---- namespace: writes (times are set from `now`) ----
  virtual Result<MakeNodeResult> MakeNode(const OpToken& token, const MakeNodeArgs& args,
                                          Timespec now) = 0;
  // Removes a non-directory entry. When the last link goes and no handle is
  // open, the inode and its chunks are freed (chunks → garbage queue); when a
  // handle is open the inode lives on with nlink 0 until the last Release.
  // `dir_after`: set to the directory's attributes after the change;
  // `unlinked`: to the inode that lost the link (its nlink and ctime
  // changed; other clients' caches of it are out of date). Neither is set
  // on a replay of a recorded outcome.
  virtual Status Unlink(const OpToken& token, InodeId parent, std::string_view name, Timespec now,
                        InodeAttr* dir_after = nullptr, InodeId* unlinked = nullptr) = 0;
  virtual Status Rmdir(const OpToken& token, InodeId parent, std::string_view name, Timespec now,
                       InodeAttr* dir_after = nullptr) = 0;
  // rename(2)/renameat2(2): replacing a file (freed as in Unlink) or an empty
  // directory; kNoReplace; kExchange (both must exist, types may differ);
  // a directory cannot move below itself (kInvalidArgument); renaming onto a
  // hard link of the same inode is a no-op. `changed`: gets the inodes
  // whose attributes changed besides the two directories (the one moved:
  // ctime; a replaced one: nlink; not on a replay of a recorded outcome).
  virtual Status Rename(const OpToken& token, InodeId old_parent, std::string_view old_name,
                        InodeId new_parent, std::string_view new_name, uint32_t flags, Timespec now,
                        std::vector<InodeId>* changed = nullptr) = 0;
  virtual Result<InodeAttr> Link(const OpToken& token, InodeId ino, InodeId new_parent,
                                 std::string_view new_name, Timespec now) = 0;
  // A size change drops every chunk that lies wholly at or beyond
  // min(old size, new size) rounded up to a chunk boundary (→ garbage queue):
  // the caller has already truncated the boundary chunk's data.
  virtual Result<InodeAttr> SetAttr(const OpToken& token, const SetAttrArgs& args, Timespec now) = 0;
  virtual Status SetXattr(const OpToken& token, InodeId ino, std::string_view name,
                          std::string_view value, uint32_t flags, Timespec now) = 0;
  virtual Status RemoveXattr(const OpToken& token, InodeId ino, std::string_view name,
                             Timespec now) = 0;

  // ---- files ----
  // Registers an open handle of `session` (unlink-while-open). With O_TRUNC in
  // `flags` the file is truncated to 0 in the same transaction (its chunks to
  // the garbage queue).
  virtual Result<OpenResult> Open(const OpToken& token, SessionId session, InodeId ino,
                                  uint32_t flags, Timespec now) = 0;
  // Drops a handle; frees an unlinked inode when it was the last one.
  virtual Status Release(const OpToken& token, HandleId handle) = 0;
  // Several handles of a client in one transaction (its batched closes);
  // handles that are not open (any more) are skipped.
  virtual Status ReleaseMany(const OpToken& token, const std::vector<HandleId>& handles) = 0;
  // Allocated chunks with index in [first, first + count), ascending.
  virtual Result<std::vector<ChunkLayout>> GetLayout(InodeId ino, uint64_t first, uint64_t count) = 0;
  // Allocates the chunks at `indices` with one replica per target (the same
  // targets for every chunk, in order; the first is the primary). Indices
  // already allocated are returned unchanged (two writers racing to allocate
  // the same chunk both get the winner's layout). Chunk ids are new and
  // never reused.
  virtual Result<std::vector<ChunkLayout>> Allocate(const OpToken& token, InodeId ino,
                                                    const std::vector<uint64_t>& indices,
                                                    const std::vector<ReplicaTarget>& targets) = 0;
  // Commits size, mtime and chunk versions after writes (close-to-open).
  // `durable`: the transaction reaches stable storage before returning.
  virtual Result<InodeAttr> Commit(const OpToken& token, const CommitArgs& args, bool durable,
                                   Timespec now) = 0;

  // ---- sessions ----
  virtual Result<SessionId> OpenSession(std::string_view client_name, std::string_view host_id,
                                        Timespec now) = 0;
  // kMetaNoSession if it expired or never existed.
  virtual Status RenewSession(SessionId session, Timespec now) = 0;
  // Closes a session: releases its handles (freeing unlinked inodes) and its
  // replay records.
  virtual Status CloseSession(SessionId session) = 0;
  // Closes every session not renewed since `cutoff`; returns how many.
  virtual Result<size_t> ExpireSessions(Timespec cutoff) = 0;

  // `count` new chunk ids, never handed out again: a writer names one in a
  // create (MakeNodeArgs::first_chunk_id) after preparing its files.
  virtual Result<std::vector<ChunkId>> ReserveChunkIds(uint32_t count) = 0;

  // ---- cluster ----
  // Creates or updates a node (node.node == 0: assign an id). Volumes are
  // matched by uuid; new ones get ids. Returns the stored record.
  // Registering is not a heartbeat: last_heartbeat keeps its value (zero for
  // a new node) until UpdateVolumes — a node is up once it has its
  // registration answer and says so, not while the answer is on its way.
  virtual Result<NodeRecord> RegisterNode(const NodeRecord& node) = 0;
  virtual Status UpdateVolumes(NodeId node, const std::vector<VolumeRecord>& volumes,
                               Timespec now) = 0;
  virtual Result<std::vector<NodeRecord>> ListNodes() = 0;
  virtual Result<std::vector<GarbageChunk>> TakeGarbage(NodeId node, size_t max) = 0;
  virtual Status AckGarbage(const std::vector<uint64_t>& ids) = 0;
  // Orphans fsck found on `node` go to its garbage queue (the node removes
  // them at a heartbeat), each only while no garbage row of it on that
  // node exists already and either meta has no row of its chunk (for a
  // cell: of the cell's chunk) — chunk ids are never given out twice, so
  // such a chunk never gets files again — or, for a chunk file, the chunk
  // has no replica row on `node` that is not offloaded. The latter is as
  // safe as a replaced replica's removal: a replica placed on that node
  // again withdraws the removal (AddPendingReplica). Cells of a live chunk
  // are never queued (an encode writes them before their stripe is
  // recorded). At most kMaxOrphansPerCall files; a volume not of `node` is
  // kInvalidArgument and queues nothing. Returns how many were queued.
  virtual Result<size_t> QueueOrphans(NodeId node, const std::vector<OrphanFile>& files) = 0;
  static constexpr size_t kMaxOrphansPerCall = 10000;

  // ---- objectives ----
  virtual Result<Objective> GetObjective(InodeId ino) = 0;
  // Sets the objective of `ino`; for a directory with `recursive`, of every
  // inode below it too. Chunk size changes apply to files created later
  // (existing files keep theirs). Returns the number of inodes changed.
  //
  // A recursive change is not one transaction: it walks the tree
  // breadth-first in bounded transactions (at most ~1,000 inodes each), so a
  // tree of any size can be changed on an engine with transaction limits.
  // While it runs, some inodes have the new objective and some the old; the
  // repair planner works towards whatever each inode says, so it converges
  // once the walk is done. Entries created during the walk inherit their
  // directory's objective (new once the directory was visited) or are
  // visited; an entry renamed into or out of the tree during the walk may
  // keep the old one. The change is idempotent: after a failure (or a meta
  // restart) running it again completes it.
  // `objective.keep_newest` is recorded for `ino` alone (a directory:
  // kInvalidArgument for another type), never for the inodes below.
  virtual Result<uint64_t> SetObjective(InodeId ino, const Objective& objective, bool recursive) = 0;
  // The files that keep-newest rules keep local now: under each directory
  // with keep_newest=N, its N entries with the latest mtime (ties: the
  // later made), and for a directory among them every file below it. At
  // most `max` (then *truncated). Directories gone since are skipped.
  virtual Result<std::vector<InodeId>> KeptNewest(size_t max, bool* truncated) = 0;

  // ---- replication (the repair planner and data nodes) ----
  // Chunks with id > after, ascending, at most `max`, with their replicas
  // and their file's objective.
  virtual Result<std::vector<ChunkReplicas>> ScanReplicas(ChunkId after, size_t max, bool* eof) = 0;
  // Sets the state of the replica of `chunk` on `node` (kNotFound if none).
  // An offloaded replica never turns stale (it has no file to miss writes).
  virtual Status SetReplicaState(ChunkId chunk, NodeId node, ReplicaState state) = 0;
  // A reporter (a client, or a node) found the file of `chunk` on `node`
  // older than `seen_version`, the version its layout has for that replica,
  // or missing: the replica turns stale only while meta records it at that
  // version or a later one. A replica meta records at an older version is
  // left alone (kStale): the reporter's layout came from a version not
  // committed here (its own refused commit, a chunk truncated or replaced by
  // another client since), and its file may be exactly what meta expects.
  // kNotFound: the chunk left the layout, or has no replica there.
  virtual Status ReportReplicaStale(ChunkId chunk, NodeId node, uint64_t seen_version) = 0;
  // Adds a pending replica of `chunk` on (node, volume); if the node already
  // has a replica of the chunk, that replica becomes pending instead.
  virtual Status AddPendingReplica(ChunkId chunk, NodeId node, VolumeId volume) = 0;
  // A pending replica received a copy at `version`: it becomes healthy when
  // `version` is still the chunk's committed version (the highest of its
  // healthy replicas), else it stays pending (a write raced the copy) and
  // kStale is returned.
  virtual Status CompleteReplica(ChunkId chunk, NodeId node, uint64_t version) = 0;
  // Removes the replica of `chunk` on `node` from the layout; its file goes
  // to the garbage queue of that node. With `unless_writer`, a replica is
  // kept (kBusy) while its file has a handle open for writing: that writer
  // may hold bytes on it not yet committed, which the other replicas (e.g.
  // a copy made meanwhile) do not have.
  virtual Status DropReplica(ChunkId chunk, NodeId node, bool unless_writer = false) = 0;
  // keep-local=drop|pressure: the healthy replica of `chunk` on `node` at
  // `version` becomes offloaded (ReplicaState::kOffloaded) and its file goes
  // to the node's garbage queue — only while the object tier holds that
  // version, or every erasure-coded cell of it is placed, and no handle
  // has the file open, for reading either (kBusy: a mount may serve it from
  // that very chunk file through passthrough). kStale when the replica is no
  // longer healthy at `version`; kInvalidArgument when nothing else holds
  // the version.
  virtual Status OffloadReplica(ChunkId chunk, NodeId node, uint64_t version) = 0;
  // The object tier holds `chunk` at `version` (an upload finished). It
  // becomes the chunk's object copy when newer than the one recorded; the
  // older object (or this one, when older or when the chunk is gone) goes
  // to the garbage queue of kObjectTierNode.
  virtual Status SetObjectVersion(ChunkId chunk, uint64_t version) = 0;
  // An encode command for `chunk` ended: `made` is the stripe it was told
  // to make (its cells listed at their nodes, the others at node 0), with
  // the chunk's length as the node reported it. When `ok` and the chunk
  // still exists, the cells made replace those of the recorded stripe (the
  // others are kept when the recorded stripe has the same code and
  // version; else they are dropped). Every cell file no longer recorded —
  // replaced, dropped, or written by a failed command or for a chunk that
  // is gone — goes to the garbage queue of its node (under its cell id,
  // ec/cells.h).
  virtual Status RecordEcCells(ChunkId chunk, const ec::EcStripe& made, bool ok) = 0;
  // Cell `cell` of `chunk` on `node` is bad (its node's scrubber or a
  // parity check says so): it leaves the recorded stripe (to be made again)
  // and its file goes to the garbage queue of `node`. Nothing when the
  // stripe has it elsewhere, or is no longer at `version` (0: any version).
  virtual Status DropEcCell(ChunkId chunk, uint32_t cell, NodeId node, uint64_t version) = 0;
  // The chunk's objective no longer asks for cells: its stripe is cleared
  // and every cell file goes to the garbage queue of its node.
  virtual Status ClearEcCells(ChunkId chunk) = 0;
  // An encode is about to write the cells `made` places: removals of those
  // cell files still queued for their nodes (from an older stripe) are
  // withdrawn, so that they cannot delete the new ones. (A new replica
  // withdraws its node's removals of the chunk the same way, in
  // AddPendingReplica.)
  virtual Status WithdrawEcGarbage(ChunkId chunk, const ec::EcStripe& made) = 0;
  virtual Status SetNodeAdminState(NodeId node, NodeAdminState state) = 0;
  // The key meta signs chunk capabilities with (created with the store).
  virtual Result<std::string> CapabilityKey() = 0;
  // A store belongs to the cluster of one secret: the first meta server
  // records `fingerprint` (derived from the secret, never the secret); a
  // meta server with another fingerprint (another cluster's secret, or a
  // store meant for another cluster) gets kInvalidArgument.
  virtual Status ClaimSecret(std::string_view fingerprint) = 0;
  // True when `session` holds a handle open for writing on `ino`.
  virtual Result<bool> HasWriteHandle(SessionId session, InodeId ino) = 0;

  // ---- several meta servers on one store ----
  // Takes or renews the lease `name` for `holder` until `now + ttl` when it
  // is free, expired (at `now`) or already `holder`'s; false when another
  // holder has it. Work that must run on one server at a time (repair
  // planning) runs while its lease is held; a server that dies loses it
  // after `ttl`, and another takes it over.
  virtual Result<bool> AcquireLease(std::string_view name, std::string_view holder, Timespec now,
                                    std::chrono::milliseconds ttl) = 0;
  // Chunks a writer waits for (the repair planner's urgent recalls, kept
  // here so that any meta server can mark one for the server that plans):
  // marks `chunk` until `until`, or moves a mark's end to `until`. True
  // when it was not marked (at `now`); with `max` marks live at `now`, a new
  // one is refused (kBusy, nothing written). Expired marks are dropped.
  virtual Result<bool> MarkUrgent(ChunkId chunk, Timespec until, Timespec now, size_t max) = 0;
  // The chunks marked at `now`.
  virtual Result<std::vector<ChunkId>> UrgentChunks(Timespec now) = 0;

  // ---- reporting ----
  virtual Result<StoreCounts> Counts() = 0;
  // Chunks with id > after, ascending, at most `max` (layout replicas and
  // garbage queue entries).
  virtual Result<std::vector<ChunkRecord>> ListChunks(ChunkId after, size_t max, bool* eof) = 0;
  // Namespace consistency: every dentry points to a live inode, link counts
  // match dentries, directories form a tree rooted at 1, sizes and layouts
  // agree, no live replica is queued for removal. Returns one line per
  // problem; lines starting with kBelowObjective name chunks (and their
  // files by path) with fewer healthy replicas than their file's objective,
  // fewer readable ones (replicas on a node in `unreadable` or on a node not
  // registered do not count), or fewer than its protection goal past its
  // deadline (not inconsistencies).
  static constexpr std::string_view kBelowObjective = "below objective: ";
  virtual Result<std::vector<std::string>> Check(const std::set<NodeId>& unreadable) = 0;
  Result<std::vector<std::string>> Check() { return Check({}); }
  // The cluster id created with the store (a random UUID).
  virtual std::string cluster_id() const = 0;
};

}  // namespace t0fs::meta
