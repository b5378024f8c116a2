#include "bench/mlperf/kvcache_tiers.h"

#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include <fmt/format.h>

#include "bench/cache_drop.h"
#include "bench/mlperf/file_sink.h"
#include "bench/mlperf/formats.h"
#include "bench/mlperf/kvcache_config.h"
#include "bench/mlperf/sample_reader.h"
#include "bench/pattern.h"
#include "common/buffer.h"
#include "common/clock.h"

namespace t0fs::bench::mlperf {

KvCache::KvCache(const KvCacheConfig& config) : config_(config) {
  if (config_.max_concurrent_allocs > 0) {
    allocs_ = std::make_unique<std::counting_semaphore<>>(config_.max_concurrent_allocs);
  }
}

KvCache::~KvCache() = default;

Status KvCache::Init() {
  RETURN_IF_ERROR(MakeDirs(config_.dir));
  if (config_.storage_bytes == 0) {
    struct statvfs vfs {};
    if (::statvfs(config_.dir.c_str(), &vfs) != 0) {
      return Status::FromErrno(errno, "statvfs " + config_.dir);
    }
    config_.storage_bytes =
        static_cast<uint64_t>(static_cast<double>(vfs.f_bavail) * vfs.f_frsize * 0.95);
  }
  return Status::Ok();
}

uint64_t KvCache::EntryBytes(uint64_t tokens) const {
  double b = static_cast<double>(tokens * config_.bytes_per_token) * config_.scale;
  return std::max<uint64_t>(1, static_cast<uint64_t>(b));
}

uint64_t KvCache::Capacity(Tier t) const {
  switch (t) {
    case Tier::kGpu: return config_.gpu_bytes;
    case Tier::kCpu: return config_.cpu_bytes;
    case Tier::kStorage: return config_.storage_bytes;
    case Tier::kNone: return 0;
  }
  return 0;
}

void KvCache::Place(const std::string& key, Entry& e, Tier t) {
  e.tier = t;
  used_[static_cast<int>(t)] += e.bytes;
  auto& list = lru_[static_cast<int>(t)];
  e.lru = list.insert(list.end(), key);
}

void KvCache::Unplace(Entry& e) {
  if (e.tier == Tier::kNone) return;
  int t = static_cast<int>(e.tier);
  used_[t] -= e.bytes;
  lru_[t].erase(e.lru);
  e.tier = Tier::kNone;
}

bool KvCache::MakeRoom(Tier t, uint64_t bytes, std::vector<Move>* moves) {
  const double limit = kTierFill * static_cast<double>(Capacity(t));
  if (static_cast<double>(bytes) > limit) return false;
  int ti = static_cast<int>(t);
  auto it = lru_[ti].begin();
  while (static_cast<double>(used_[ti] + bytes) > limit && it != lru_[ti].end()) {
    const std::string victim = *it++;
    Entry& v = entries_[victim];
    if (v.busy > 0) continue;
    Tier down = t == Tier::kGpu ? Tier::kCpu : t == Tier::kCpu ? Tier::kStorage : Tier::kNone;
    Unplace(v);
    while (down != Tier::kNone && Capacity(down) == 0) {
      down = down == Tier::kCpu ? Tier::kStorage : Tier::kNone;
    }
    if (down != Tier::kNone && MakeRoom(down, v.bytes, moves)) {
      Place(victim, v, down);
      ++v.busy;
      ++stats_.demotions;
      moves->push_back({victim, v.bytes, t, down});
    } else {
      ++stats_.evictions;
      if (t == Tier::kStorage) moves->push_back({victim, v.bytes, t, Tier::kNone});
      entries_.erase(victim);
    }
    it = lru_[ti].begin();
  }
  return static_cast<double>(used_[ti] + bytes) <= limit;
}

double KvCache::MemoryCopy(uint64_t bytes) {
  // One 8 MiB source/destination pair per thread; the cost is memcpy's.
  thread_local AlignedBuffer src(8 << 20), dst(8 << 20);
  uint64_t t0 = MonoNanos();
  while (bytes > 0) {
    size_t n = static_cast<size_t>(std::min<uint64_t>(bytes, dst.size()));
    std::memcpy(dst.data(), src.data(), n);
    bytes -= n;
  }
  return static_cast<double>(MonoNanos() - t0) / 1e9;
}

Result<double> KvCache::StorageWrite(const std::string& key, uint64_t bytes, Engine& engine) {
  ASSIGN_OR_RETURN(FileSink sink, FileSink::Open(engine, PathOf(key), Mix64(config_.seed) ^
                                                                          std::hash<std::string>{}(key)));
  // np.save of a float16 array (layers, 2, tokens, kv_heads, head_dim) as one vector.
  uint64_t elems = bytes / 2;
  Status st = sink.Append(NpyHeader("<f2", fmt::format("({},)", elems), elems));
  if (st.ok()) st = sink.AppendRandom(elems * 2);
  uint64_t written = sink.offset();
  Status fin = sink.Finish(/*fsync=*/true);
  if (st.ok()) st = fin;
  if (!st.ok()) {
    ::unlink(PathOf(key).c_str());  // a failed or stopped write leaves no file
    return st;
  }
  std::lock_guard<std::mutex> lock(mu_);
  stats_.storage_write_bytes += written;
  ++stats_.storage_writes;
  stats_.write_device_ns.Record(sink.fsync_ns());
  return static_cast<double>(sink.write_ns() + sink.fsync_ns()) / 1e9;
}

Result<double> KvCache::StorageRead(const std::string& key, Engine& engine) {
  std::string path = PathOf(key);
  if (config_.drop_before_read) FadviseDontNeed(path);
  auto left = FileResidency(path);
  ReadOptions ro;
  ro.transfer = config_.transfer;
  uint64_t t0 = MonoNanos();
  ASSIGN_OR_RETURN(uint64_t got, SampleReader(engine, ro).ReadWhole(path));
  uint64_t ns = MonoNanos() - t0;
  std::lock_guard<std::mutex> lock(mu_);
  if (left.ok()) {
    stats_.read_pages += left->pages;
    stats_.read_pages_resident += left->resident;
  }
  stats_.storage_read_bytes += got;
  ++stats_.storage_reads;
  stats_.read_device_ns.Record(ns);
  return static_cast<double>(ns) / 1e9;
}

Status KvCache::DoMoves(const std::vector<Move>& moves, Engine& engine, double* seconds) {
  for (const Move& m : moves) {
    if (m.to == Tier::kNone) {
      ::unlink(PathOf(m.key).c_str());
      continue;
    }
    if (m.to == Tier::kStorage) {
      ASSIGN_OR_RETURN(double s, StorageWrite(m.key, m.bytes, engine));
      *seconds += s;
    } else {
      *seconds += MemoryCopy(m.bytes);
    }
    if (m.from == Tier::kStorage) ::unlink(PathOf(m.key).c_str());
    std::lock_guard<std::mutex> lock(mu_);
    auto it = entries_.find(m.key);
    if (it != entries_.end() && it->second.busy > 0) --it->second.busy;
  }
  return Status::Ok();
}

Result<KvAccess> KvCache::Allocate(const std::string& key, uint64_t tokens, Engine& engine) {
  if (allocs_) allocs_->acquire();
  struct Release {
    std::counting_semaphore<>* sem;
    ~Release() {
      if (sem) sem->release();
    }
  } release{allocs_.get()};
  const uint64_t bytes = EntryBytes(tokens);
  std::vector<Move> moves;
  Tier tier = Tier::kNone;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto found = entries_.find(key);
    if (found != entries_.end()) {
      if (found->second.busy > 0) return KvAccess{};  // being written by another request
      if (found->second.tier == Tier::kStorage) moves.push_back({key, 0, Tier::kStorage, Tier::kNone});
      Unplace(found->second);
      entries_.erase(found);
    }
    for (Tier t : {Tier::kGpu, Tier::kCpu, Tier::kStorage}) {
      if (Capacity(t) == 0) continue;
      if (MakeRoom(t, bytes, &moves)) {
        tier = t;
        break;
      }
    }
    if (tier == Tier::kNone) return Status(StatusCode::kNoSpace, "kv cache: no tier has room");
    Entry& e = entries_[key];
    e.bytes = bytes;
    e.busy = 1;
    Place(key, e, tier);
  }
  KvAccess out;
  out.tier = tier;
  Status st = DoMoves(moves, engine, &out.seconds);
  if (st.ok()) {
    if (tier == Tier::kStorage) {
      auto s = StorageWrite(key, bytes, engine);
      if (s.ok()) {
        out.seconds += *s;
      } else {
        st = s.status();
      }
    } else {
      out.seconds += MemoryCopy(bytes);
      std::lock_guard<std::mutex> lock(mu_);
      stats_.memory_write_bytes += bytes;
    }
  }
  std::lock_guard<std::mutex> lock(mu_);
  auto it = entries_.find(key);
  if (it != entries_.end() && it->second.busy > 0) --it->second.busy;
  if (!st.ok()) return st;
  return out;
}

Result<KvAccess> KvCache::Read(const std::string& key, Engine& engine) {
  Tier tier;
  uint64_t bytes;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = entries_.find(key);
    if (it == entries_.end() || it->second.busy > 0 || it->second.tier == Tier::kNone) {
      ++stats_.misses;
      return KvAccess{};
    }
    Entry& e = it->second;
    ++stats_.hits;
    tier = e.tier;
    bytes = e.bytes;
    ++e.busy;
    auto& list = lru_[static_cast<int>(tier)];
    list.splice(list.end(), list, e.lru);  // most recently used
  }
  KvAccess out;
  out.tier = tier;
  Result<double> s = tier == Tier::kStorage ? StorageRead(key, engine) : Result<double>(MemoryCopy(bytes));
  std::lock_guard<std::mutex> lock(mu_);
  if (tier != Tier::kStorage) stats_.memory_read_bytes += bytes;
  auto it = entries_.find(key);
  if (it != entries_.end() && it->second.busy > 0) --it->second.busy;
  if (!s.ok()) return s.status();
  out.seconds = *s;
  return out;
}

KvStats KvCache::Stats() {
  std::lock_guard<std::mutex> lock(mu_);
  KvStats s = stats_;
  s.storage_entries = lru_[static_cast<int>(Tier::kStorage)].size();
  return s;
}

void KvCache::RemoveAll() {
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& key : lru_[static_cast<int>(Tier::kStorage)]) ::unlink(PathOf(key).c_str());
  for (auto& l : lru_) l.clear();
  entries_.clear();
  ::rmdir(config_.dir.c_str());
}

}  // namespace t0fs::bench::mlperf
