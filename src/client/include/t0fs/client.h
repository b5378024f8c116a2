// libt0fs: the native client of t0fs.
//
// A Client is one session with the meta service. It resolves names, creates
// and removes files, and opens Files whose reads and writes go straight to the
// data services: through the local bypass (the chunk file's descriptor,
// passed by the data service on this host) when a replica is on this node,
// over TCP otherwise. The meta service is never in the per-I/O path: layouts
// are fetched at open and extended in batches.
//
// Consistency is close-to-open, as NFS: a File sees what was committed when
// it was opened plus its own writes (and those of other Files of the same
// Client); Flush/Fsync/Close commit size and chunk versions to meta, after
// which a new Open anywhere sees the data.
//
// Many reads and writes at a time, into registered buffers, completed
// asynchronously: BatchIo (t0fs/batch_io.h, Client::OpenBatchIo).
//
// Errors are Status codes (common/status.h); ToErrno() gives the errno that a
// POSIX call would have returned.
//
// Thread safety: Client and File are safe for concurrent use from many
// threads (FUSE issues parallel requests on one file handle). A File must not
// be used after Close(); destroying an unclosed File closes it.
//
// Example:
//   auto client = t0fs::client::Client::Connect({.meta = "127.0.0.1:7700",
//                                                 .secret_file = "t0fs-data/secret"});
//   auto file = (*client)->CreatePath("/data/shard0", 0644);
//   (*file)->Write(0, bytes);
//   (*file)->Close();
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.h"
#include "common/config.h"
#include "common/fd.h"
#include "common/ids.h"
#include "common/set_attr_mask.h"
#include "common/status.h"

namespace t0fs::client {

class BatchIo;  // t0fs/batch_io.h
struct BatchIoOptions;

struct ClientOptions {
  std::string meta = "127.0.0.1:7700";  // meta service address; "a:7700,b:7700": several meta servers of one store, used in turn when one fails
  std::string secret;                   // cluster secret, or:
  std::string secret_file;              // path of the secret file (used when `secret` is empty)
  std::string name;                     // shown in `t0fs status` ("mount /mnt/x")
  uint64_t node_id = 0;                 // this host's data node; 0 = detect (same host id)
  // How long an operation keeps retrying while meta or a data service is
  // unreachable (a restart) before failing with EIO. Longer rides out
  // restarts; shorter surfaces outages sooner.
  Duration retry_timeout{std::chrono::seconds(60)};
  Duration rpc_timeout{std::chrono::seconds(60)};  // one request's reply
  // Chunks allocated per Allocate call when a write reaches unallocated
  // space sequentially. More means fewer meta calls, more unused layout rows
  // when a file stops short.
  uint32_t allocate_ahead = 4;
  // Use the local bypass (fd passing) for replicas on this node. Off forces
  // TCP even on the same host (for comparison and tests).
  bool local_bypass = true;
  // How long the attributes of a file this client has open may be answered
  // from its own state (meta's last answer plus its own writes) instead of
  // asking meta. Like the kernel's attribute cache: longer means fewer meta
  // round trips (a stat after every write), a staler view of another
  // client's chmod/chown. 0 always asks meta.
  Duration attr_cache{std::chrono::seconds(1)};
  // New files' chunk 0 files prepared on this host's data node ahead of the
  // creates, per batch (at most 32; 0 = off): a create then needs no data
  // node call. Each waiting chunk holds two descriptors.
  uint32_t prepare_ahead = 16;

  // Lists the knobs for config files and flags (common/config.h). The meta
  // address and the secret are given separately by each command.
  template <class V>
  void Visit(V& v) {
    v("node-id", node_id, "this host's data node (0: detect by host)");
    v("retry-timeout", retry_timeout,
      "keep retrying an unreachable meta or data service this long (a data service: counted from "
      "when it "
      "stopped answering)");
    v("rpc-timeout", rpc_timeout, "longest wait for one reply");
    v("allocate-ahead", allocate_ahead, "chunks allocated per call for sequential writers");
    v("local-bypass", local_bypass, "read and write local chunk files directly (fd passing)");
    v("attr-cache", attr_cache, "answer attributes of open files from own state this long; 0 = ask meta");
    v("prepare-ahead", prepare_ahead, "new files' chunk files prepared on the local data node per batch (0 = off, at most 32)");
  }
};

struct Attr {
  InodeId ino;
  uint32_t mode = 0;
  uint32_t uid = 0;
  uint32_t gid = 0;
  uint64_t size = 0;
  uint32_t nlink = 0;
  uint32_t rdev = 0;
  Timespec atime, mtime, ctime;
  uint64_t chunk_size = 0;
  uint64_t generation = 0;
};

struct DirEntry {
  std::string name;
  InodeId ino;
  uint32_t mode = 0;    // type bits at least
  uint64_t cookie = 0;  // resume point after this entry
  std::optional<Attr> attr;
};

struct DirPage {
  std::vector<DirEntry> entries;
  bool eof = false;
};

struct StatFs {
  uint64_t total_bytes = 0;
  uint64_t free_bytes = 0;
  uint64_t files = 0;
  uint32_t block_size = 4096;
  uint32_t max_name = 255;
};

// Fields of SetAttr (kSetMode, kSetSize, ...); values in SetAttrArgs. The
// one definition is common/set_attr_mask.h, shared with meta.
using ::t0fs::SetAttrMask;
using enum ::t0fs::SetAttrMask;

struct SetAttrArgs {
  uint32_t mask = 0;  // SetAttrMask bits
  uint32_t mode = 0;
  uint32_t uid = 0;
  uint32_t gid = 0;
  uint64_t size = 0;
  Timespec atime, mtime, ctime;
};

// Who is asking; used as the owner of new inodes.
struct Caller {
  uint32_t uid = 0;
  uint32_t gid = 0;
};

// What a replica can be used for (the wire's ReplicaState, same numbers).
enum class ReplicaState : uint32_t {
  kHealthy = 0,  // holds every committed write
  kStale = 1,    // missed writes or damaged: being repaired, never read
  kPending = 2,  // being copied
  // Its file was removed once the object tier or the erasure-coded cells
  // held its version (keep-local=drop|pressure): never read or written;
  // its version is the chunk's committed one while no replica is healthy.
  kOffloaded = 3,
};

// Per-replica description of a file's chunks (t0fs layout, passthrough).
struct ReplicaInfo {
  NodeId node;
  VolumeId volume;
  ChunkId chunk;
  uint64_t version = 0;
  bool local = false;  // on this client's node
  ReplicaState state = ReplicaState::kHealthy;
};
struct ChunkInfo {
  uint64_t index = 0;
  std::vector<ReplicaInfo> replicas;
  uint64_t object_version = 0;  // of the copy in the object tier (protect=object); 0: none
  // Where its erasure-coded cells are (protect=ec): "K+M UNIT VERSION LENGTH
  // NODE:VOLUME,..." with one pair per cell (0:0: none); "" none.
  std::string ec{};
  // Nodes that read the object tier's copy for this client when no replica
  // answers (set by meta while that copy is the committed version).
  std::vector<NodeId> object_readers{};
};
struct LayoutInfo {
  uint64_t chunk_size = 0;
  uint64_t size = 0;
  std::vector<ChunkInfo> chunks;
};

// Whether the kernel can serve a file from its local chunk file (FUSE
// passthrough): the whole file is one chunk with a healthy replica on this
// node. Writes qualify too when that replica is the only one (nothing else
// must receive them synchronously).
enum class PassthroughMode { kNone = 0, kRead = 1, kReadWrite = 2 };
struct PassthroughVerdict {
  PassthroughMode mode = PassthroughMode::kNone;
  std::string reason;  // one line: why (not), for `t0fs layout` and logs
};
PassthroughVerdict PassthroughEligibility(const LayoutInfo& layout, NodeId node);

// A local chunk's data file handed out for passthrough.
struct PassthroughFile {
  UniqueFd fd;  // a descriptor of the chunk's .dat file (for registering with the kernel)
  bool write = false;
};

// Byte and operation counters of one Client (monotonic).
struct IoCounters {
  uint64_t local_read_bytes = 0;
  uint64_t local_write_bytes = 0;
  uint64_t remote_read_bytes = 0;
  uint64_t remote_write_bytes = 0;
  uint64_t local_reads = 0;
  uint64_t remote_reads = 0;
  uint64_t checksum_errors = 0;
  uint64_t replica_failovers = 0;  // reads served by another replica after one failed
  uint64_t degraded_reads = 0;     // reads decoded from erasure-coded cells (no replica answered)
  uint64_t degraded_rows =
      0;  // stripe rows those reads decoded (each kept in memory for the next reads)
  uint64_t degraded_row_hits =
      0;  // rows of degraded reads taken from memory, decoded by an earlier read
  uint64_t object_reads = 0;       // reads served from the object tier's copy (no replica answered)
  uint64_t replica_write_failures = 0;  // replicas dropped from a write (reported stale at commit)
  // Chunk writes that no replica could take and that asked meta to stage
  // the chunk back from the object tier (protect=object)
  uint64_t stage_back_requests = 0;
  // Writes and truncations of offloaded chunks (keep-local=drop|pressure)
  // that waited for meta to stage the chunk back
  uint64_t recall_requests = 0;
  // Reads of offloaded chunks served from the tier that asked meta to stage
  // the chunk back (recall on read: at most one ask per chunk per 5 s)
  uint64_t read_recall_requests = 0;
  uint64_t passthrough_opens = 0;       // files handed to the kernel (OpenPassthrough)
  uint64_t passthrough_rebuilds = 0;    // checksum rebuilds after passthrough writes
  uint64_t passthrough_overflow_bytes = 0;  // written past the chunk through passthrough, moved to later chunks
};

class File {
 public:
  virtual ~File() = default;

  // Reads up to buf.size() bytes at `offset`; short at end of file; holes
  // read as zeros. Verifies block checksums (EIO on mismatch).
  virtual Result<size_t> Read(uint64_t offset, std::span<std::byte> buf) = 0;
  // Writes all of `data` at `offset` (at the end of file when opened with
  // O_APPEND, whatever `offset` says). Returns bytes written.
  virtual Result<size_t> Write(uint64_t offset, std::span<const std::byte> data) = 0;
  // Commits size, mtime and versions to meta (no fsync of data).
  virtual Status Flush() = 0;
  // Makes written data and the commit durable (fdatasync of chunk files,
  // durable meta transaction).
  virtual Status Fsync(bool datasync) = 0;
  // Truncates or extends to `size` (ftruncate).
  virtual Status Truncate(uint64_t size) = 0;
  // fallocate(2) with `mode` 0 (extends the size to offset + length; space
  // is not reserved), FALLOC_FL_KEEP_SIZE (nothing visible), PUNCH_HOLE |
  // KEEP_SIZE and ZERO_RANGE [| KEEP_SIZE] (the range reads zeros after; a
  // ZERO_RANGE past the end extends the size unless KEEP_SIZE). Other modes:
  // kNotSupported.
  virtual Status Fallocate(int mode, uint64_t offset, uint64_t length) = 0;
  // FUSE passthrough: when the whole file is one chunk with a healthy replica
  // on this node, returns a descriptor of that chunk's data file for the
  // kernel to read (and, with `write`, to write: only when that replica is
  // the only one). A writer File then takes size and mtime from the chunk
  // file at Flush/Fsync/Close, and the chunk's checksums, pending meanwhile,
  // are rebuilt at the last writer's Close (docs/fuse.md, Passthrough).
  // kNotSupported with the reason when the file does not qualify.
  // `join`: the kernel already serves this inode from its chunk file (another
  // open of it): reads join whatever the layout says now; writes only when
  // the chunk has no other replica (kBusy otherwise).
  virtual Result<PassthroughFile> OpenPassthrough(bool write, bool join = false) = 0;
  // Undoes OpenPassthrough when the descriptor could not be used.
  virtual void AbandonPassthrough() = 0;
  // Flush + release the handle. Idempotent.
  virtual Status Close() = 0;

  virtual InodeId ino() const = 0;
  // Size as this client sees it (committed size at open, plus own writes).
  virtual uint64_t size() const = 0;
  // The attributes returned at open (size updated to size()).
  virtual Attr attr() const = 0;
};

// What other clients changed (Client::PollChanges).
struct NamespaceChange {
  InodeId parent;  // with `name`: this name in this directory changed
  std::string name;
  InodeId ino;     // when valid: this inode's attributes or data changed
};
struct ChangeBatch {
  std::vector<NamespaceChange> changes;
  // False: some changes may be missing (a meta server was unreachable or
  // restarted, or this client fell too far behind): caches of other
  // clients' changes cannot be trusted until a complete batch comes.
  bool complete = true;
};

class Client {
 public:
  // Connects to meta and opens a session. Fails clearly on a wrong secret or
  // an unreachable meta.
  static Result<std::unique_ptr<Client>> Connect(const ClientOptions& options);
  virtual ~Client() = default;

  // ---- namespace by inode (what FUSE uses) ----
  virtual Result<Attr> Lookup(InodeId parent, std::string_view name) = 0;
  virtual Result<Attr> GetAttr(InodeId ino) = 0;
  // A size change truncates the data first (all replicas), then commits.
  virtual Result<Attr> SetAttr(InodeId ino, const SetAttrArgs& args) = 0;
  // Regular files, fifos, sockets, devices (not directories or symlinks).
  virtual Result<Attr> Mknod(InodeId parent, std::string_view name, uint32_t mode, uint32_t rdev,
                             const Caller& caller) = 0;
  virtual Result<Attr> Mkdir(InodeId parent, std::string_view name, uint32_t mode,
                             const Caller& caller) = 0;
  virtual Result<Attr> Symlink(InodeId parent, std::string_view name, std::string_view target,
                               const Caller& caller) = 0;
  virtual Status Unlink(InodeId parent, std::string_view name) = 0;
  virtual Status Rmdir(InodeId parent, std::string_view name) = 0;
  // flags: RENAME_NOREPLACE (1), RENAME_EXCHANGE (2).
  virtual Status Rename(InodeId old_parent, std::string_view old_name, InodeId new_parent,
                        std::string_view new_name, uint32_t flags) = 0;
  virtual Result<Attr> Link(InodeId ino, InodeId new_parent, std::string_view new_name) = 0;
  virtual Result<std::string> ReadLink(InodeId ino) = 0;
  // "." and ".." first; `cookie` 0 starts, else continue after that entry.
  virtual Result<DirPage> ReadDir(InodeId dir, uint64_t cookie, uint32_t max_entries,
                                  bool with_attrs) = 0;
  virtual Result<StatFs> GetStatFs() = 0;
  virtual Result<std::string> GetXattr(InodeId ino, std::string_view name) = 0;
  // flags: XATTR_CREATE (1), XATTR_REPLACE (2).
  virtual Status SetXattr(InodeId ino, std::string_view name, std::string_view value,
                          uint32_t flags) = 0;
  virtual Result<std::vector<std::string>> ListXattr(InodeId ino) = 0;
  virtual Status RemoveXattr(InodeId ino, std::string_view name) = 0;

  // ---- files ----
  // open(2) flags: O_RDONLY/O_WRONLY/O_RDWR, O_TRUNC, O_APPEND, O_DIRECT
  // (local chunk files are then read and written with O_DIRECT).
  virtual Result<std::unique_ptr<File>> Open(InodeId ino, int flags) = 0;
  // O_CREAT open: creates (or with `exclusive` false, opens an existing)
  // regular file. `created` tells which happened.
  virtual Result<std::unique_ptr<File>> Create(InodeId parent, std::string_view name,
                                               uint32_t mode, int flags, const Caller& caller,
                                               bool* created = nullptr) = 0;
  virtual Result<LayoutInfo> GetLayout(InodeId ino) = 0;

  // ---- paths (for native applications and tools) ----
  // Resolves an absolute path inside t0fs ("/a/b"); symlinks are not followed.
  virtual Result<Attr> ResolvePath(std::string_view path) = 0;
  virtual Result<std::unique_ptr<File>> OpenPath(std::string_view path, int flags) = 0;
  virtual Result<std::unique_ptr<File>> CreatePath(std::string_view path, uint32_t mode,
                                                   int flags = 0) = 0;
  // mkdir -p.
  virtual Status MakeDirs(std::string_view path, uint32_t mode) = 0;

  // ---- this client ----
  // From now on, operations stop retrying an unreachable meta or data
  // service `limit` from now (instead of after the retry timeout): a mount
  // that is stopping must not wait a minute for a meta that is gone.
  virtual void LimitRetries(Duration limit) = 0;
  virtual NodeId local_node() const = 0;
  // The id of the cluster this client is connected to.
  virtual std::string cluster_id() const = 0;
  virtual IoCounters counters() const = 0;

  // ---- batched I/O (t0fs/batch_io.h) ----
  // A BatchIo whose requests name Files of this Client; it must be closed
  // (or destroyed) before the Client. Not every Client offers it
  // (kNotSupported).
  virtual Result<std::unique_ptr<BatchIo>> OpenBatchIo(const BatchIoOptions& options);

  // ---- other clients' changes ----
  // What other clients changed since the last call (the first call starts
  // from now), asked of every meta server: for caches kept outside the
  // Client, such as a mount's kernel cache. With `wait`, a long poll: a
  // server with nothing new answers at its next change, or after `wait`;
  // the call returns at the first answers. Not every Client offers it
  // (kNotSupported).
  virtual Result<ChangeBatch> PollChanges(
      std::chrono::milliseconds /*wait*/ = std::chrono::milliseconds(0)) {
    return Status(StatusCode::kNotSupported, "this client does not report other clients' changes");
  }
  // Ends the wait of a PollChanges in progress (or of the next, if none
  // is): it returns what it has. From any thread.
  virtual void InterruptPollChanges() {}
};

}  // namespace t0fs::client
