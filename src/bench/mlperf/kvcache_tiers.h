// KvCache: the three-tier KV cache of one client (spec §4.1). New entries go
// to the fastest tier with room (a tier is kept ≤ 80 % full); making room
// demotes that tier's least recently used entries one tier down (GPU → CPU →
// storage; storage evictions delete the file); reads never promote.
// GPU and CPU tiers are accounting only (no emulated accelerator here): an
// access costs a memcpy of the entry's bytes through a scratch buffer, so
// their latency is host memory's. The storage tier writes <dir>/<key>.npy
// (npy header + random fp16 payload) then fsyncs (device latency = the
// fsync), and reads with posix_fadvise(DONTNEED) then a whole-file read
// (device latency = the read). Before each such read the pages fadvise left
// in memory are counted (mincore, cache_drop.h): with FUSE passthrough they
// belong to the backing file and stay, and the reads come from memory.
// Thread safety: all methods are thread-safe; each caller passes its own
// Engine (one per worker thread).
#pragma once

#include <atomic>
#include <cstdint>
#include <list>
#include <mutex>
#include <semaphore>
#include <string>
#include <unordered_map>

#include "bench/engine.h"
#include "bench/histogram.h"

namespace t0fs::bench::mlperf {

enum class Tier : uint8_t { kGpu = 0, kCpu = 1, kStorage = 2, kNone = 3 };

struct KvCacheConfig {
  std::string dir;              // storage tier files
  uint64_t gpu_bytes = 0;       // tier capacities (0 = tier absent)
  uint64_t cpu_bytes = 0;
  uint64_t storage_bytes = 0;   // 0 = 95 % of the free space at start
  uint32_t max_concurrent_allocs = 0;  // 0 = unbounded
  uint64_t bytes_per_token = 0;
  double scale = 1;             // entry bytes × scale (small machines); tokens unchanged
  uint64_t transfer = 16 << 20;
  uint64_t seed = 42;
  bool drop_before_read = true;  // fadvise(DONTNEED) before each storage read (--drop-caches)
};

struct KvAccess {
  Tier tier = Tier::kNone;  // kNone: miss
  double seconds = 0;       // latency as the reference sums it (any tier)
};

struct KvStats {
  uint64_t storage_write_bytes = 0, storage_read_bytes = 0;
  uint64_t storage_writes = 0, storage_reads = 0;
  uint64_t memory_write_bytes = 0, memory_read_bytes = 0;
  uint64_t evictions = 0, demotions = 0, misses = 0, hits = 0;
  uint64_t storage_entries = 0;  // entries on storage at the end
  uint64_t read_pages = 0, read_pages_resident = 0;  // before storage reads (after fadvise)
  Histogram write_device_ns, read_device_ns;
};

class KvCache {
 public:
  explicit KvCache(const KvCacheConfig& config);
  ~KvCache();
  Status Init();
  // Stores an entry of `tokens` tokens under `key` (replacing it).
  Result<KvAccess> Allocate(const std::string& key, uint64_t tokens, Engine& engine);
  // Reads the whole entry; a miss returns tier kNone and 0 s.
  Result<KvAccess> Read(const std::string& key, Engine& engine);
  KvStats Stats();
  // Deletes every storage-tier file and the directory.
  void RemoveAll();
  uint64_t EntryBytes(uint64_t tokens) const;

 private:
  struct Entry {
    Tier tier = Tier::kNone;
    uint64_t bytes = 0;
    uint32_t busy = 0;  // I/O in progress: not evictable
    std::list<std::string>::iterator lru;
  };
  std::string PathOf(const std::string& key) const { return config_.dir + "/" + key + ".npy"; }
  uint64_t Capacity(Tier t) const;
  // Makes room for `bytes` in tier `t` by demoting LRU entries (lock held);
  // the demotions to perform after unlocking go to `moves`.
  struct Move {
    std::string key;
    uint64_t bytes;
    Tier from, to;
  };
  bool MakeRoom(Tier t, uint64_t bytes, std::vector<Move>* moves);
  void Place(const std::string& key, Entry& e, Tier t);
  void Unplace(Entry& e);
  Result<double> StorageWrite(const std::string& key, uint64_t bytes, Engine& engine);
  Result<double> StorageRead(const std::string& key, Engine& engine);
  double MemoryCopy(uint64_t bytes);
  Status DoMoves(const std::vector<Move>& moves, Engine& engine, double* seconds);

  KvCacheConfig config_;
  std::mutex mu_;  // guards entries_, lru_, used_, stats_ (not the I/O)
  std::unordered_map<std::string, Entry> entries_;
  std::list<std::string> lru_[3];  // front = least recently used
  uint64_t used_[3] = {0, 0, 0};
  KvStats stats_;
  std::unique_ptr<std::counting_semaphore<>> allocs_;
};

}  // namespace t0fs::bench::mlperf
