// Engine: the seam between the POSIX operations of the metadata store
// (PosixStore, ops/) and the database that keeps its rows. An engine offers
// transactions over the typed rows of rows.h — get, put, delete and ordered
// scans, named counters, commit — and nothing else: no SQL, no POSIX rule
// and no policy above this line. SQLite (sqlite/) is the first engine; the
// interface is shaped so that PostgreSQL and an ordered key-value store
// (FoundationDB-class: key ranges, transactions of ~5 s and ~10 MB) can
// implement it too.
//
// What every engine must guarantee:
//  - Write transactions are serializable: each behaves as if it ran alone,
//    in an order consistent with their commits. (SQLite: one writer at a
//    time, BEGIN IMMEDIATE. PostgreSQL: SERIALIZABLE, or REPEATABLE READ
//    with every row read for a decision locked FOR UPDATE and the directory
//    row locked before its entries change. An ordered KV store: its native
//    optimistic serializability, with the ranges scanned as read conflicts.)
//  - A transaction reads its own writes. A read transaction sees one
//    consistent snapshot, including across scans.
//  - Atomicity: Commit() applies every write or none; a transaction dropped
//    without Commit() applies none. A crash at any moment leaves the last
//    committed state.
//  - Conflicts: any call, Commit() included, may return kTryAgain when the
//    engine had to abort the transaction (a serialization conflict, a
//    transaction that grew too old) or lost its database connection (a
//    server restarting or failing over). The caller drops the transaction
//    and runs the whole operation again in a new one (PosixStore retries,
//    with pauses). Before Commit() nothing was applied; a connection lost
//    during Commit() leaves the outcome unknown, so every operation must
//    bear running twice: client operations carry an OpToken (the rerun is
//    answered from the replay record), the others set a state or are
//    harmless twice (a second session that expires unused).
//  - Other failures are kMetaDatabase (or kInternal). After a failed
//    Commit() the outcome is unknown: the operation may have been applied.
//  - Orders: ids ascend numerically; names and xattr names ascend by bytes.
//  - Counters: NextId never returns an id twice (across restarts, whatever
//    rows were deleted) nor one at or below a ReserveId'd value; ids need not
//    be dense, and an engine may hand them out from per-process batches.
//  - Size: the operations keep a transaction small (a few thousand rows;
//    SetObjective walks large trees in batches). Known exceptions, which an
//    engine with hard limits must page: Check() and Totals() read
//    everything; freeing a file touches every one of its chunks.
//
// Thread safety: an Engine is shared by threads. A transaction belongs to one
// thread at a time. An engine may serialise transactions (SQLite runs one at
// a time): a thread must not begin a second transaction while it holds one.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "meta/store/rows.h"

namespace t0fs::meta {

// Called once per row of a scan, in the scan's order; a non-ok status stops
// the scan and is returned by it.
template <typename Row>
using RowVisitor = std::function<Status(const Row&)>;

class ReadTxn {
 public:
  virtual ~ReadTxn() = default;  // ends the transaction (a WriteTxn: rolled back)

  // ---- inodes ----
  virtual Result<std::optional<InodeRow>> GetInode(InodeId ino) = 0;
  virtual Status ScanInodes(const RowVisitor<InodeRow>& visit) = 0;  // by ino

  // ---- directory entries ----
  virtual Result<std::optional<DentryRow>> GetDentry(InodeId parent, std::string_view name) = 0;
  // Prefetch hints: that GetInode(dir) and GetDentry(dir, name) come soon
  // (every namespace operation starts so), or GetVolume(volume).
  // An engine may send them ahead and read them with the next read that
  // waits (PostgreSQL: a create's reads in one round trip). A hint changes
  // no answer: a later read returns what it would have without it, this
  // transaction's writes included. Read nothing by default.
  virtual Status PrefetchEntry(InodeId /*dir*/, std::string_view /*name*/) { return Status::Ok(); }
  virtual Status PrefetchVolume(VolumeId /*volume*/) { return Status::Ok(); }
  // A removal's further reads of the inode that entry (dir, name) names,
  // after PrefetchEntry(dir, name): ListHandlesOf(it), and then, for a
  // directory, its first entry (ListDir(it, 0, 1, false)), else all its
  // chunks (ListChunksOf(it, 0, UINT64_MAX)).
  virtual Status PrefetchRemoval(InodeId /*dir*/, std::string_view /*name*/, bool /*directory*/) {
    return Status::Ok();
  }
  // A release's reads of open handle `handle`: GetHandle(handle), then of
  // its inode GetInode, ListHandlesOf and, for a handle opened for writing,
  // ListChunksOf(it, from the first chunk past its end).
  virtual Status PrefetchRelease(HandleId /*handle*/) { return Status::Ok(); }
  // The entries of `parent` with seq > after_seq, by ascending seq, at most
  // `limit`; with their inodes when `with_inodes`.
  virtual Result<std::vector<DirItem>> ListDir(InodeId parent, uint64_t after_seq, size_t limit,
                                               bool with_inodes) = 0;
  virtual Status ScanDentries(const RowVisitor<DentryRow>& visit) = 0;  // by (parent, name)

  // ---- extended attributes ----
  virtual Result<std::optional<std::string>> GetXattr(InodeId ino, std::string_view name) = 0;
  virtual Result<std::vector<std::string>> ListXattrNames(InodeId ino) = 0;  // by name
  virtual Status ScanXattrs(const RowVisitor<XattrRow>& visit) = 0;          // by (ino, name)

  // ---- chunks and their replicas ----
  virtual Result<std::optional<ChunkWithReplicas>> GetChunk(ChunkId chunk) = 0;
  // The chunks of `ino` with first <= index < end, by index.
  virtual Result<std::vector<ChunkWithReplicas>> ListChunksOf(InodeId ino, uint64_t first,
                                                              uint64_t end) = 0;
  // Chunks with id > after, by id, at most `limit`.
  virtual Result<std::vector<ChunkWithReplicas>> ScanChunks(ChunkId after, size_t limit) = 0;
  // Every replica row by (chunk, pos), also one whose chunk row is missing.
  virtual Status ScanReplicas(const RowVisitor<ReplicaRow>& visit) = 0;

  // ---- garbage queue ----
  virtual Result<std::vector<GarbageRow>> ListGarbageOfNode(NodeId node,
                                                            size_t limit) = 0;    // by id
  virtual Result<std::vector<GarbageRow>> ListGarbageOfChunk(ChunkId chunk) = 0;  // by id
  // The distinct chunk ids > after that have garbage rows, ascending, at most `limit`.
  virtual Result<std::vector<ChunkId>> ListGarbageChunks(ChunkId after, size_t limit) = 0;
  virtual Status ScanGarbage(const RowVisitor<GarbageRow>& visit) = 0;  // by id

  // ---- sessions, handles, replay records ----
  virtual Result<std::optional<SessionRecord>> GetSession(SessionId session) = 0;
  virtual Result<std::vector<SessionRecord>> ListSessions() = 0;  // by id
  virtual Result<std::optional<HandleRow>> GetHandle(HandleId handle) = 0;
  virtual Result<std::vector<HandleRow>> ListHandlesOf(InodeId ino) = 0;               // by id
  virtual Result<std::vector<HandleRow>> ListHandlesOfSession(SessionId session) = 0;  // by id
  virtual Status ScanHandles(const RowVisitor<HandleRow>& visit) = 0;                  // by id
  virtual Result<std::optional<ReplayRow>> GetReplay(SessionId session, uint32_t slot) = 0;
  virtual Status ScanReplays(const RowVisitor<ReplayRow>& visit) = 0;  // by (session, slot)

  // ---- cluster ----
  virtual Result<std::optional<NodeRow>> GetNode(NodeId node) = 0;
  virtual Result<std::vector<NodeRow>> ListNodes() = 0;  // by id
  virtual Result<std::optional<VolumeRecord>> GetVolume(VolumeId volume) = 0;
  virtual Result<std::vector<VolumeRecord>> ListVolumes() = 0;  // by id

  // ---- named values (cluster id, capability key) ----
  virtual Result<std::optional<std::string>> GetProperty(std::string_view key) = 0;

  virtual Result<RowTotals> Totals() = 0;
};

class WriteTxn : public ReadTxn {
 public:
  // Puts insert a row or replace the row with the same key.
  virtual Status PutInode(const InodeRow& row) = 0;
  virtual Status DeleteInode(InodeId ino) = 0;  // and its extended attributes
  virtual Status PutDentry(const DentryRow& row) = 0;
  virtual Status DeleteDentry(InodeId parent, std::string_view name) = 0;
  virtual Status PutXattr(InodeId ino, std::string_view name, std::string_view value) = 0;
  virtual Status DeleteXattr(InodeId ino, std::string_view name) = 0;
  virtual Status PutChunk(const ChunkRow& row) = 0;
  // Adds `row` unless a chunk row with its id exists (then changes nothing);
  // true when added. By default GetChunk then PutChunk; PostgreSQL inserts
  // without reading the table, which under serializable isolation would
  // lock the index page every concurrent create inserts its chunk into,
  // and without waiting for the answer: its true may mean "queued", and a
  // taken id then fails the transaction with kTryAgain at its next read or
  // commit (nothing of it applied); a retry in a new transaction of the
  // same engine answers false for that id.
  virtual Result<bool> InsertChunkIfFree(const ChunkRow& row) {
    ASSIGN_OR_RETURN(std::optional<ChunkWithReplicas> taken, GetChunk(row.id));
    if (taken) return false;
    RETURN_IF_ERROR(PutChunk(row));
    return true;
  }
  virtual Status DeleteChunk(ChunkId chunk) = 0;  // the chunk row and its replica rows
  virtual Status PutReplica(const ReplicaRow& row) = 0;
  virtual Status DeleteReplica(ChunkId chunk, uint32_t pos) = 0;
  virtual Status PutGarbage(const GarbageRow& row) = 0;
  virtual Status DeleteGarbage(uint64_t id) = 0;
  virtual Status PutSession(const SessionRecord& row) = 0;
  virtual Status DeleteSession(SessionId session) = 0;
  virtual Status PutHandle(const HandleRow& row) = 0;
  virtual Status DeleteHandle(HandleId handle) = 0;
  virtual Status PutReplay(const ReplayRow& row) = 0;
  virtual Status DeleteReplaysOf(SessionId session) = 0;
  virtual Status PutNode(const NodeRow& row) = 0;
  virtual Status PutVolume(const VolumeRecord& row) = 0;
  virtual Status PutProperty(std::string_view key, std::string_view value) = 0;

  // A new id from `counter` (never 0, never handed out before).
  virtual Result<uint64_t> NextId(Counter counter) = 0;
  // `id` was chosen by the caller (a node id given at registration): the
  // counter never hands it out, nor anything below it.
  virtual Status ReserveId(Counter counter, uint64_t id) = 0;

  // Applies the transaction (see the guarantees above). Once only.
  virtual Status Commit() = 0;
};

struct WriteOptions {
  // On stable storage when Commit() returns, with every transaction
  // committed before it (a client's fsync). Otherwise the engine's ordinary
  // durability (SQLite sync=normal: safe against a process crash, the last
  // commits may be lost to a power loss). Chosen at begin: SQLite cannot
  // change its sync mode inside a transaction.
  bool durable = false;
};

struct ReadOptions {
  // Left open while the caller works elsewhere (a store copy reads its
  // source in one transaction while it writes the target): never ended for
  // being idle. Otherwise a read is ended like a write when idle too long
  // (PostgreSQL's pg-idle-txn-timeout; the store retries it).
  bool long_running = false;
};

class Engine {
 public:
  virtual ~Engine() = default;
  virtual Result<std::unique_ptr<ReadTxn>> BeginRead(const ReadOptions& options = {}) = 0;
  virtual Result<std::unique_ptr<WriteTxn>> BeginWrite(const WriteOptions& options) = 0;
  // "sqlite", for logs.
  virtual std::string_view name() const = 0;
};

}  // namespace t0fs::meta
