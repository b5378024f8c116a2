// ChunkStore: the chunk files of this node's volumes, with an LRU cache of
// open ChunkFiles so that hot chunks are not re-opened per request.
//
// Thread safety: safe for concurrent use. The cache mutex is never held
// across disk I/O; a ChunkFile in use stays alive through its shared_ptr
// even if evicted meanwhile.
#pragma once

#include <list>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "common/chunk_file.h"
#include "common/ids.h"
#include "common/status.h"

namespace t0fs::data {

struct ChunkStat {
  uint64_t length = 0;
  uint64_t version = 0;
};

struct LocalFds {
  UniqueFd data;
  UniqueFd crc;
  ChunkStat stat;
};

struct ChunkListing {
  ChunkId chunk;
  VolumeId volume;
  uint64_t length = 0;
  uint64_t version = 0;
};

class ChunkStore {
 public:
  explicit ChunkStore(size_t cache_capacity) : capacity_(cache_capacity) {}

  // Makes a volume directory servable under `id` and counts its chunks.
  void AddVolume(VolumeId id, const std::string& dir);
  bool HasVolume(VolumeId id) const;

  // kDataNoChunk if the chunk has no file; kStale if its version < min_version.
  // `direct`: an O_DIRECT read from the drive (whole blocks around an
  // unaligned request), never from this node's page cache (unless the file
  // system has no O_DIRECT, e.g. tmpfs).
  Result<size_t> Read(VolumeId volume, ChunkId chunk, uint64_t offset, std::span<std::byte> buf,
                      uint64_t min_version, uint64_t* version, bool direct = false);
  // Creates the chunk on first write.
  Status Write(VolumeId volume, ChunkId chunk, uint64_t offset, std::span<const std::byte> data,
               uint64_t version, bool sync);
  Status Truncate(VolumeId volume, ChunkId chunk, uint64_t length, uint64_t version);
  // Removing a missing chunk succeeds (removal is idempotent).
  Status Remove(VolumeId volume, ChunkId chunk);
  Status Sync(VolumeId volume, ChunkId chunk);
  Result<ChunkStat> Stat(VolumeId volume, ChunkId chunk);
  // Fresh descriptors (new open file descriptions) for a local client.
  Result<LocalFds> OpenLocal(VolumeId volume, ChunkId chunk, bool create, bool writable, bool direct);
  Result<std::vector<ChunkListing>> List(VolumeId volume, ChunkId after, size_t max, bool* eof);
  uint64_t ChunkCount(VolumeId volume) const;
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
  Result<std::shared_ptr<ChunkFile>> OpenFile(const std::string& dir, ChunkId chunk, bool create,
                                              bool* created);

  const size_t capacity_;
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
