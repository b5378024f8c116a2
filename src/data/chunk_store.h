// ChunkStore: the chunk files of this node's volumes, with an LRU cache of
// open ChunkFiles so that hot chunks are not re-opened per request.
//
// Thread safety: safe for concurrent use. The cache mutex is never held
// across disk I/O; a ChunkFile in use stays alive through its shared_ptr
// even if evicted meanwhile.
#pragma once

#include <chrono>
#include <deque>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "common/chunk_file.h"
#include "common/ids.h"
#include "common/logging.h"
#include "common/status.h"
#include "data/removed_log.h"

namespace t0fs::data {

struct ChunkStat {
  uint64_t length = 0;
  uint64_t version = 0;
};

struct LocalFds {
  UniqueFd data;
  UniqueFd crc;
  ChunkStat stat;
  bool unnamed = false;  // files without names yet (a lazy open of a new chunk)
};

struct ChunkListing {
  ChunkId chunk;
  VolumeId volume;
  uint64_t length = 0;
  uint64_t version = 0;
};

class ChunkStore {
 public:
  // `unnamed_capacity`: chunks kept unnamed at most (each holds two
  // descriptors); past it the oldest is named.
  explicit ChunkStore(size_t cache_capacity, size_t unnamed_capacity = 16384)
      : capacity_(cache_capacity), unnamed_capacity_(unnamed_capacity) {}

  // Makes a volume directory servable under `id` and counts its chunks.
  void AddVolume(VolumeId id, const std::string& dir);
  bool HasVolume(VolumeId id) const;

  // kDataNoChunk if the chunk has no file; kStale if its version < min_version.
  // `direct`: an O_DIRECT read from the drive (whole blocks around an
  // unaligned request), never from this node's page cache (unless the file
  // system has no O_DIRECT, e.g. tmpfs).
  Result<size_t> Read(VolumeId volume, ChunkId chunk, uint64_t offset, std::span<std::byte> buf,
                      uint64_t min_version, uint64_t* version, bool direct = false);
  // A read whose bytes the client verifies (ChunkReadReq.client_verifies):
  // the version rule of Read, then a descriptor of the data file to send
  // the bytes from (sendfile, straight from the page cache), how many bytes
  // it holds at `offset` (short at its end) and, appended to `crcs`, their
  // blocks' stored checksums (ChunkFile::ChecksumsFor). `offset` must be
  // block-aligned.
  struct Sendable {
    UniqueFd data;  // its own descriptor: outlives the cache entry
    size_t length = 0;
  };
  Result<Sendable> ReadForSend(VolumeId volume, ChunkId chunk, uint64_t offset, size_t len,
                               uint64_t min_version, uint64_t* version, std::string* crcs);
  // Creates the chunk on first write. `base_version` is the version the
  // writer's layout gives this replica: 0 for a chunk never written (created
  // when missing); otherwise the chunk must exist at that version or a newer
  // one, and a missing or older file is kStale (a stale layout, or a file
  // this node lost): never a new file holding only this request's bytes.
  Status Write(VolumeId volume, ChunkId chunk, uint64_t offset, std::span<const std::byte> data,
               uint64_t version, bool sync, uint64_t base_version = 0);
  Status Truncate(VolumeId volume, ChunkId chunk, uint64_t length, uint64_t version,
                  uint64_t base_version = 0);
  // Removing a missing chunk succeeds (removal is idempotent). The chunk
  // is remembered as removed for `kRemovedMemory` (at most
  // `kRemovedCapacity` chunks, the oldest forgotten first): meta removes a
  // chunk when it left every layout (or this node's replica was dropped),
  // and a writer whose cached layout still has it at version 0 must not
  // create it again as a file in no layout (an orphan) — Write, Truncate
  // and OpenLocal with create at version 0, and Adopt, are kStale for it.
  // A copy placed by CommitTemp (meta put a replica here again) ends that.
  // Erasure-coded cells (ec/cells.h) are not remembered: meta has them
  // written again at each version. The volume keeps the list too
  // (RemovedLog), so a restarted node still refuses those writers.
  //
  // `queued_before` (a removal meta queued, brought by a heartbeat reply:
  // when that heartbeat was sent) defers the removal — kTryAgain, nothing
  // removed — when the chunk's files were placed here since (a copy
  // committed, a file created or named): meta may have withdrawn the
  // removal and put the chunk here again while the reply was on its way.
  // A removal still queued comes again with a later heartbeat.
  Status Remove(VolumeId volume, ChunkId chunk,
                std::optional<std::chrono::steady_clock::time_point> queued_before = std::nullopt);
  // Longer than meta's default capability lifetime (10 min): a write with
  // a capability older than that is refused anyway.
  static constexpr std::chrono::minutes kRemovedMemory{15};
  static constexpr size_t kRemovedCapacity = size_t{1} << 20;
  // How long placements are remembered for `queued_before`: longer than any
  // heartbeat call (an older `queued_before` defers the removal), and how
  // many at most (~70 bytes each; a placement forgotten for room defers
  // removals queued before it likewise).
  static constexpr std::chrono::minutes kPlacedMemory{2};
  static constexpr size_t kPlacedCapacity = size_t{1} << 18;
  Status Sync(VolumeId volume, ChunkId chunk);
  Result<ChunkStat> Stat(VolumeId volume, ChunkId chunk);
  // Fresh descriptors (new open file descriptions) for a local client.
  //
  // `lazy` (with create and writable, not direct): a chunk that has no
  // files yet gets *unnamed* ones (O_TMPFILE), so that a new file nobody
  // writes to costs no directory entries and no removal: the client names
  // them with Adopt before it commits a version. Until then this store
  // keeps them, so any other writer of the chunk (Write, Truncate, a
  // non-lazy OpenLocal) names them first and shares the same files; the
  // oldest are named (or dropped when empty and no writer holds them) when
  // more than `unnamed_capacity` wait; Remove drops them. A reader finds no chunk (never written: a
  // hole). Without O_TMPFILE on the volume the files are created with their names. `base_version`
  // (with create): as in Write.
  Result<LocalFds> OpenLocal(VolumeId volume, ChunkId chunk, bool create, bool writable,
                             bool direct, bool lazy = false, uint64_t base_version = 0);
  // Names the unnamed files `data_fd` and `crc_fd` of a lazy OpenLocal as
  // `chunk` (they come from the client, which also has them after a restart
  // of this node). Already named as those files: ok. kExists when the chunk
  // has other files (created while this node had forgotten the unnamed ones).
  Status Adopt(VolumeId volume, ChunkId chunk, int data_fd, int crc_fd);
  // Gives the unnamed files of `old_chunk` to `chunk`, an id nothing uses
  // yet: a client recycling the files prepared for a new file that was
  // closed empty (client/chunk_pool.h), so that a create-and-remove of an
  // empty file makes and frees no inode. Only files that cannot be anyone
  // else's: still unnamed (no other writer named them), handed out once
  // (to the caller, who proves it with its descriptors `data_fd` and
  // `crc_fd`), and empty. They are truncated and get a new header (`chunk`,
  // version 0, no pending mark); `old_chunk` has no files afterwards (a
  // later open of it gets new ones, blank as these were). Refused, nothing
  // changed: kDataNoChunk (`old_chunk` is not kept unnamed here: named,
  // dropped, removed, or this node restarted), kBusy (handed out more than
  // once, or written), kInvalidArgument (other files, another volume),
  // kExists (`chunk` has files).
  Status Reuse(VolumeId volume, ChunkId old_chunk, ChunkId chunk, int data_fd, int crc_fd);
  // Chunks Reuse gave new ids to, since this store started.
  uint64_t ReusedCount() const;
  // Drops the unnamed chunks that waited at least `min_age` (since they
  // were opened or last looked at) whose data file is empty and that no
  // writer holds: nothing to keep (the data service calls it every
  // heartbeat, so closes of empty new files cost the request path nothing).
  // While new ones keep coming (the latest less than `min_age` ago) and at
  // most half the capacity waits, it waits for the burst to end. Returns
  // how many went.
  size_t TrimUnnamed(std::chrono::steady_clock::duration min_age);
  size_t UnnamedCount() const;
  Result<std::vector<ChunkListing>> List(VolumeId volume, ChunkId after, size_t max, bool* eof);
  // The ids of the chunks with named files on `volume`, in order (one
  // listing of its directory; nothing opened).
  Result<std::vector<ChunkId>> ChunkIds(VolumeId volume);
  uint64_t ChunkCount(VolumeId volume) const;
  // Bytes the chunk files of `volume` take on its file system (allocated
  // blocks of every .dat and .crc), counted now by walking its chunk
  // directories (one stat per file: run it off the I/O paths).
  Result<uint64_t> CountStoredBytes(VolumeId volume) const;
  // Directory and chunk count of every volume served (for metrics).
  std::vector<std::pair<std::string, uint64_t>> VolumeChunkCounts() const;
  // Volumes served (for the scrubber and inventories).
  std::vector<VolumeId> Volumes() const;
  // Re-reads every block of a chunk (the scrubber). kDataChecksum on damage.
  Status Verify(VolumeId volume, ChunkId chunk);

  // A copy received from a peer is written to a temporary chunk and moved
  // into place only when complete, so a crash mid-copy never leaves a mixed
  // replica and an existing (stale) copy keeps serving until then.
  Result<std::unique_ptr<ChunkFile>> CreateTemp(VolumeId volume, ChunkId chunk);
  Status CommitTemp(VolumeId volume, ChunkId chunk);
  void DropTemp(VolumeId volume, ChunkId chunk);

 private:
  struct VolumeState {
    std::string dir;
    uint64_t chunks = 0;
  };
  Result<std::string> DirOf(VolumeId volume) const;
  Result<std::shared_ptr<ChunkFile>> Get(VolumeId volume, ChunkId chunk, bool create);
  // Get without create of a chunk the caller knows at `version`: one kept
  // unnamed here is named first (version 0: not, a reader finds a hole).
  Result<std::shared_ptr<ChunkFile>> GetCommitted(VolumeId volume, ChunkId chunk, uint64_t version);
  // A writer's file: Get with create, under Write's `base_version` rule.
  Result<std::shared_ptr<ChunkFile>> GetForWrite(VolumeId volume, ChunkId chunk,
                                                 uint64_t base_version);
  // The chunk's file for a read that wants at least `min_version` (kStale
  // if it is older); its version in *version.
  Result<std::shared_ptr<ChunkFile>> GetForRead(VolumeId volume, ChunkId chunk,
                                                uint64_t min_version, uint64_t* version);
  Result<std::shared_ptr<ChunkFile>> OpenFile(const std::string& dir, ChunkId chunk, bool create,
                                              bool* created);
  // Unnamed files of `chunk` for a lazy OpenLocal; nullopt: take the named path.
  Result<std::optional<LocalFds>> OpenUnnamed(VolumeId volume, const std::string& dir, ChunkId chunk);
  // Names the chunk's unnamed files if it has any (caller holds unnamed_mu_).
  Status NameLocked(ChunkId chunk);
  // Lets go of the chunk's unnamed files, if any (caller holds unnamed_mu_).
  void ForgetUnnamedLocked(ChunkId chunk);
  // kStale if Remove removed the chunk from `volume` lately (caller holds
  // unnamed_mu_).
  Status RefuseRemovedLocked(VolumeId volume, ChunkId chunk);
  // Links `data_fd` and `crc_fd` as the chunk's files and counts the chunk
  // (caller holds unnamed_mu_).
  Status Link(VolumeId volume, const std::string& dir, ChunkId chunk, int data_fd, int crc_fd);

  const size_t capacity_;
  const size_t unnamed_capacity_;
  // Chunks opened lazily whose files have no names yet, oldest first.
  struct Unnamed {
    VolumeId volume;
    std::unique_ptr<ChunkFile> files;  // our own descriptors (clients get other ones)
    uint32_t handed = 0;               // descriptors handed out (OpenUnnamed, Reuse)
    uint64_t seq = 0;
    std::chrono::steady_clock::time_point since;  // opened, or last looked at by TrimUnnamed
  };
  // Makes room for one more unnamed chunk: the oldest is dropped when it is
  // empty and no writer holds it (nothing can be lost), else named.
  void MakeRoomLocked();
  mutable std::mutex unnamed_mu_;  // guards unnamed_*; held while chunk files get names (before mu_)
  std::unordered_map<ChunkId, Unnamed> unnamed_;
  std::map<uint64_t, ChunkId> unnamed_order_;
  uint64_t unnamed_seq_ = 0;
  std::chrono::steady_clock::time_point
      last_unnamed_;  // the latest unnamed chunk's opening (or reuse)
  uint64_t reused_ = 0;
  // Chunks removed lately (Remove), with when; oldest first in the queue
  // (an entry whose time differs from the map's is a forgotten one).
  // Guarded by unnamed_mu_, which Remove holds while it unlinks and a
  // creator while it checks and creates: no create slips in between.
  struct Removed {
    VolumeId volume;
    std::chrono::steady_clock::time_point when;
  };
  std::unordered_map<ChunkId, Removed> removed_;
  std::deque<std::pair<std::chrono::steady_clock::time_point, ChunkId>> removed_order_;
  // The same on each volume (loaded by AddVolume); guarded by unnamed_mu_.
  std::unordered_map<VolumeId, std::unique_ptr<RemovedLog>> removed_logs_;
  // Chunks whose files were placed lately (created, named, committed), with
  // when; oldest first in the queue. Guarded by unnamed_mu_.
  std::unordered_map<ChunkId, std::chrono::steady_clock::time_point> placed_;
  std::deque<std::pair<std::chrono::steady_clock::time_point, ChunkId>> placed_order_;
  std::chrono::steady_clock::time_point placed_forgotten_;  // the latest forgotten for room
  void NotePlacedLocked(ChunkId chunk);
  // An erasure-coded cell is written anew at each encode, maybe over files
  // that are still there: every write of one counts as its placement
  // (before it, so that a removal during the encode waits).
  void NoteCellWritten(ChunkId chunk);
  // Records `chunk` removed from (or `placed` again on) `volume` in its
  // RemovedLog; a failure is logged (the list in memory still holds), a
  // few per minute at most (a full volume fails every removal).
  void LogRemovalLocked(VolumeId volume, ChunkId chunk, bool placed);
  LogLimit removed_log_warnings_{5, std::chrono::minutes(1)};
  mutable std::mutex mu_;  // guards volumes_, cache_, lru_; never held across disk I/O
  std::unordered_map<VolumeId, VolumeState> volumes_;
  using Lru = std::list<ChunkId>;
  struct Entry {
    VolumeId volume;
    std::shared_ptr<ChunkFile> file;
    Lru::iterator pos;
  };
  std::unordered_map<ChunkId, Entry> cache_;
  Lru lru_;  // most recently used at the front
};

}  // namespace t0fs::data
