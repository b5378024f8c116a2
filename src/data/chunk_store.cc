#include "data/chunk_store.h"

#include <dirent.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>

#include "common/buffer.h"
#include "common/io_backend.h"
#include "common/logging.h"
#include "ec/cells.h"

namespace t0fs::data {
namespace {

// Parses "<16 hex>.dat".
bool ParseChunkName(const char* name, uint64_t* id) {
  std::string_view n(name);
  if (n.size() != 20 || !n.ends_with(".dat")) return false;
  auto [ptr, ec] = std::from_chars(n.data(), n.data() + 16, *id, 16);
  return ec == std::errc() && ptr == n.data() + 16;
}

template <typename F>
void ForEachChunkFile(const std::string& dir, F f) {
  for (int sub = 0; sub < 256; ++sub) {
    std::string path = fmt::format("{}/chunks/{:02x}", dir, sub);
    DIR* d = ::opendir(path.c_str());
    if (d == nullptr) continue;
    while (dirent* e = ::readdir(d)) {
      uint64_t id = 0;
      if (ParseChunkName(e->d_name, &id)) f(ChunkId(id));
    }
    ::closedir(d);
  }
}

}  // namespace

void ChunkStore::AddVolume(VolumeId id, const std::string& dir) {
  uint64_t count = 0;
  ForEachChunkFile(dir, [&](ChunkId) { ++count; });
  {
    // The chunks it removed lately, before this process (their time here
    // counted back from the wall clock's age of each).
    auto log = std::make_unique<RemovedLog>(dir, kRemovedMemory, kRemovedCapacity);
    const int64_t now_ms = WallMillisNow();
    const auto now = std::chrono::steady_clock::now();
    std::vector<RemovedLog::Removal> removals = log->Load(now_ms);
    std::lock_guard naming(unnamed_mu_);
    for (const RemovedLog::Removal& r : removals) {
      const auto when = now - std::chrono::milliseconds(std::max<int64_t>(now_ms - r.wall_ms, 0));
      removed_[r.chunk] = Removed{id, when};
      removed_order_.emplace_back(when, r.chunk);
    }
    if (!removals.empty()) {
      LOG_INFO(
          "volume {}: {} chunk(s) removed in the last {} min are refused to writers with "
          "older layouts",
          dir, removals.size(), kRemovedMemory.count());
    }
    removed_logs_[id] = std::move(log);
  }
  std::lock_guard lock(mu_);
  volumes_[id] = VolumeState{dir, count};
}

void ChunkStore::NotePlacedLocked(ChunkId chunk) {
  const auto now = std::chrono::steady_clock::now();
  placed_[chunk] = now;
  placed_order_.emplace_back(now, chunk);
  while (!placed_order_.empty() && (placed_order_.size() > kPlacedCapacity ||
                                    now - placed_order_.front().first > kPlacedMemory)) {
    auto [when, old] = placed_order_.front();
    placed_order_.pop_front();
    if (now - when <= kPlacedMemory) placed_forgotten_ = std::max(placed_forgotten_, when);
    if (auto it = placed_.find(old); it != placed_.end() && it->second == when) placed_.erase(it);
  }
}

void ChunkStore::NoteCellWritten(ChunkId chunk) {
  if (!ec::IsCellId(chunk)) return;
  std::lock_guard naming(unnamed_mu_);
  NotePlacedLocked(chunk);
}

void ChunkStore::LogRemovalLocked(VolumeId volume, ChunkId chunk, bool placed) {
  auto it = removed_logs_.find(volume);
  if (it == removed_logs_.end()) return;
  Status logged = it->second->Append(chunk, placed, WallMillisNow());
  uint64_t held = 0;
  if (!logged.ok() && removed_log_warnings_.Allow(&held)) {
    LOG_WARN(
        "chunk {}: the volume's list of removed chunks was not updated ({}); a restart "
        "forgets it{}",
        chunk, logged.ToString(), LogLimit::HeldBackNote(held));
  }
}

Result<uint64_t> ChunkStore::CountStoredBytes(VolumeId volume) const {
  ASSIGN_OR_RETURN(std::string dir, DirOf(volume));
  uint64_t bytes = 0;
  for (int sub = 0; sub < 256; ++sub) {
    const std::string path = fmt::format("{}/chunks/{:02x}", dir, sub);
    DIR* d = ::opendir(path.c_str());
    if (d == nullptr) continue;
    while (dirent* e = ::readdir(d)) {
      const std::string_view name(e->d_name);
      if (!name.ends_with(".dat") && !name.ends_with(".crc")) continue;
      struct stat st {};
      if (::fstatat(::dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
        bytes += static_cast<uint64_t>(st.st_blocks) * 512;
      }
    }
    ::closedir(d);
  }
  return bytes;
}

bool ChunkStore::HasVolume(VolumeId id) const {
  std::lock_guard lock(mu_);
  return volumes_.count(id) != 0;
}

uint64_t ChunkStore::ChunkCount(VolumeId volume) const {
  std::lock_guard lock(mu_);
  auto it = volumes_.find(volume);
  return it == volumes_.end() ? 0 : it->second.chunks;
}

std::vector<std::pair<std::string, uint64_t>> ChunkStore::VolumeChunkCounts() const {
  std::lock_guard lock(mu_);
  std::vector<std::pair<std::string, uint64_t>> out;
  for (const auto& [id, state] : volumes_) out.emplace_back(state.dir, state.chunks);
  return out;
}

Result<std::string> ChunkStore::DirOf(VolumeId volume) const {
  std::lock_guard lock(mu_);
  auto it = volumes_.find(volume);
  if (it == volumes_.end()) {
    return Status(StatusCode::kDataNoVolume, fmt::format("volume {} is not on this node", volume));
  }
  return it->second.dir;
}

Result<std::shared_ptr<ChunkFile>> ChunkStore::OpenFile(const std::string& dir, ChunkId chunk,
                                                        bool create, bool* created) {
  std::string data_path = ChunkDataPath(dir, chunk);
  int flags = O_RDWR | O_CLOEXEC;
  UniqueFd data(::open(data_path.c_str(), flags));
  if (!data.valid() && errno == ENOENT && create) {
    data = UniqueFd(::open(data_path.c_str(), flags | O_CREAT | O_EXCL, 0600));
    if (data.valid()) {
      *created = true;
    } else if (errno == EEXIST) {  // a concurrent creator won
      data = UniqueFd(::open(data_path.c_str(), flags));
    }
  }
  if (!data.valid()) {
    if (errno == ENOENT) return Status(StatusCode::kDataNoChunk, fmt::format("chunk {} not found", chunk));
    return Status::FromErrno(errno, fmt::format("open chunk {}", chunk));
  }
  std::string crc_path = ChunkCrcPath(dir, chunk);
  UniqueFd crc(::open(crc_path.c_str(), O_RDWR | O_CLOEXEC | O_CREAT, 0600));
  if (!crc.valid()) return Status::FromErrno(errno, fmt::format("open checksums of chunk {}", chunk));
  auto file = std::make_shared<ChunkFile>(chunk, std::move(data), std::move(crc), false);
  RETURN_IF_ERROR(file->InitOrValidate());
  return file;
}

Result<std::shared_ptr<ChunkFile>> ChunkStore::Get(VolumeId volume, ChunkId chunk, bool create) {
  {
    std::lock_guard lock(mu_);
    auto it = cache_.find(chunk);
    if (it != cache_.end() && it->second.volume == volume) {
      lru_.splice(lru_.begin(), lru_, it->second.pos);
      return it->second.file;
    }
  }
  ASSIGN_OR_RETURN(std::string dir, DirOf(volume));
  bool created = false;
  std::shared_ptr<ChunkFile> file;
  if (create) {
    // A writer of a chunk kept unnamed (a lazy OpenLocal) names it first,
    // so that it and the local client share the files.
    std::lock_guard naming(unnamed_mu_);
    RETURN_IF_ERROR(RefuseRemovedLocked(volume, chunk));
    RETURN_IF_ERROR(NameLocked(chunk));
    ASSIGN_OR_RETURN(file, OpenFile(dir, chunk, create, &created));
    if (created) NotePlacedLocked(chunk);
  } else {
    ASSIGN_OR_RETURN(file, OpenFile(dir, chunk, create, &created));
  }
  std::lock_guard lock(mu_);
  if (created) ++volumes_[volume].chunks;
  auto it = cache_.find(chunk);
  if (it != cache_.end()) {
    if (it->second.volume == volume) return it->second.file;  // another thread opened it meanwhile
    lru_.erase(it->second.pos);
    cache_.erase(it);
  }
  lru_.push_front(chunk);
  cache_.emplace(chunk, Entry{volume, file, lru_.begin()});
  while (cache_.size() > capacity_) {
    cache_.erase(lru_.back());
    lru_.pop_back();
  }
  return file;
}

Result<std::shared_ptr<ChunkFile>> ChunkStore::GetCommitted(VolumeId volume, ChunkId chunk,
                                                            uint64_t version) {
  auto file = Get(volume, chunk, false);
  if (version == 0 || file.ok() || file.status().code() != StatusCode::kDataNoChunk) return file;
  {
    // A version was committed, so its files have a name: a chunk still kept
    // unnamed here is named now (its client names it before it commits, but
    // may have lost track of the files it was given).
    std::lock_guard naming(unnamed_mu_);
    if (unnamed_.count(chunk) == 0) return file;
    RETURN_IF_ERROR(NameLocked(chunk));
  }
  return Get(volume, chunk, false);
}

Result<std::shared_ptr<ChunkFile>> ChunkStore::GetForRead(VolumeId volume, ChunkId chunk,
                                                          uint64_t min_version, uint64_t* version) {
  ASSIGN_OR_RETURN(std::shared_ptr<ChunkFile> file, GetCommitted(volume, chunk, min_version));
  if (file->version() < min_version) {
    RETURN_IF_ERROR(file->ReadHeader());  // a local client may have written meanwhile
    if (file->version() < min_version) {
      return Status(StatusCode::kStale, fmt::format("chunk {} is at version {}, wanted {}", chunk,
                                                    file->version(), min_version));
    }
  }
  *version = file->version();
  return file;
}

Result<ChunkStore::Sendable> ChunkStore::ReadForSend(VolumeId volume, ChunkId chunk,
                                                     uint64_t offset, size_t len,
                                                     uint64_t min_version, uint64_t* version,
                                                     std::string* crcs) {
  ASSIGN_OR_RETURN(std::shared_ptr<ChunkFile> file,
                   GetForRead(volume, chunk, min_version, version));
  UniqueFd data(::fcntl(file->data_fd(), F_DUPFD_CLOEXEC, 0));
  if (!data.valid())
    return Status::FromErrno(errno, fmt::format("chunk {}: descriptor to send from", chunk));
  ASSIGN_OR_RETURN(size_t n, file->ChecksumsFor(offset, len, crcs));
  return Sendable{std::move(data), n};
}

Result<size_t> ChunkStore::Read(VolumeId volume, ChunkId chunk, uint64_t offset,
                                std::span<std::byte> buf, uint64_t min_version, uint64_t* version,
                                bool direct) {
  ASSIGN_OR_RETURN(std::shared_ptr<ChunkFile> file,
                   GetForRead(volume, chunk, min_version, version));
  if (direct) {
    // The reader asked for the drive (O_DIRECT), as a local reader through
    // the bypass gets: a descriptor of its own, same checksum rules. An
    // unaligned request reads the whole blocks around it (ChunkFile's
    // aligned scratch), so it never comes from this node's page cache.
    ASSIGN_OR_RETURN(std::string dir, DirOf(volume));
    UniqueFd data(::open(ChunkDataPath(dir, chunk).c_str(), O_RDONLY | O_CLOEXEC | O_DIRECT));
    UniqueFd crc(::open(ChunkCrcPath(dir, chunk).c_str(), O_RDONLY | O_CLOEXEC));
    if (data.valid() && crc.valid()) {
      ChunkFile uncached(chunk, std::move(data), std::move(crc), /*direct=*/true);
      RETURN_IF_ERROR(uncached.ReadHeader());
      return uncached.Read(offset, buf);
    }
    // A file system without O_DIRECT (tmpfs): the cached path below.
  }
  return file->Read(offset, buf);
}

Result<std::shared_ptr<ChunkFile>> ChunkStore::GetForWrite(VolumeId volume, ChunkId chunk,
                                                           uint64_t base_version) {
  if (base_version == 0) return Get(volume, chunk, true);
  auto file = GetCommitted(volume, chunk, base_version);
  if (!file.ok() && file.status().code() == StatusCode::kDataNoChunk) {
    return Status(
        StatusCode::kStale,
        fmt::format(
            "chunk {} has no file on this node, but the writer's layout has it at version {}",
            chunk, base_version));
  }
  if (!file.ok()) return file.status();
  // A local client writes the header through its own descriptor.
  if ((*file)->version() < base_version) RETURN_IF_ERROR((*file)->ReadHeader());
  if ((*file)->version() < base_version) {
    return Status(StatusCode::kStale,
                  fmt::format("chunk {} is at version {} on this node, the writer's layout has {}",
                              chunk, (*file)->version(), base_version));
  }
  return file;
}

Status ChunkStore::Write(VolumeId volume, ChunkId chunk, uint64_t offset,
                         std::span<const std::byte> data, uint64_t version, bool sync,
                         uint64_t base_version) {
  NoteCellWritten(chunk);
  ASSIGN_OR_RETURN(std::shared_ptr<ChunkFile> file, GetForWrite(volume, chunk, base_version));
  RETURN_IF_ERROR(file->Write(offset, data, version));
  return sync ? file->Sync() : Status::Ok();
}

Status ChunkStore::Truncate(VolumeId volume, ChunkId chunk, uint64_t length, uint64_t version,
                            uint64_t base_version) {
  NoteCellWritten(chunk);
  ASSIGN_OR_RETURN(std::shared_ptr<ChunkFile> file, GetForWrite(volume, chunk, base_version));
  return file->Truncate(length, version);
}

Status ChunkStore::Sync(VolumeId volume, ChunkId chunk) {
  auto file = Get(volume, chunk, false);
  if (!file.ok() && file.status().code() == StatusCode::kDataNoChunk) return Status::Ok();
  if (!file.ok()) return file.status();
  return (*file)->Sync();
}

Result<ChunkStat> ChunkStore::Stat(VolumeId volume, ChunkId chunk) {
  ASSIGN_OR_RETURN(std::shared_ptr<ChunkFile> file, Get(volume, chunk, false));
  RETURN_IF_ERROR(file->ReadHeader());
  ASSIGN_OR_RETURN(uint64_t length, file->Length());
  return ChunkStat{length, file->version()};
}

Status ChunkStore::Remove(VolumeId volume, ChunkId chunk,
                          std::optional<std::chrono::steady_clock::time_point> queued_before) {
  ASSIGN_OR_RETURN(std::string dir, DirOf(volume));
  // Held to the end: a creator checks removed_ and creates under it.
  std::lock_guard naming(unnamed_mu_);
  const auto now = std::chrono::steady_clock::now();
  if (queued_before) {
    auto placed = placed_.find(chunk);
    if (now - *queued_before > kPlacedMemory || *queued_before <= placed_forgotten_) {
      return Status(StatusCode::kTryAgain,
                    fmt::format("the removal of chunk {} came too late to tell whether it was "
                                "placed here since",
                                chunk));
    }
    if (placed != placed_.end() && placed->second >= *queued_before) {
      return Status(StatusCode::kTryAgain,
                    fmt::format("chunk {} was placed here since its removal was queued", chunk));
    }
  }
  ForgetUnnamedLocked(chunk);  // the files go with their last descriptor
  // (An erasure-coded cell's id is written again at each version it is
  // encoded at, by the data node meta tells to: not remembered.)
  if (!ec::IsCellId(chunk)) {
    removed_[chunk] = Removed{volume, now};
    removed_order_.emplace_back(now, chunk);
    LogRemovalLocked(volume, chunk, /*placed=*/false);
  }
  while (!removed_order_.empty() && (removed_order_.size() > kRemovedCapacity ||
                                     now - removed_order_.front().first > kRemovedMemory)) {
    auto [when, old] = removed_order_.front();
    removed_order_.pop_front();
    if (auto it = removed_.find(old); it != removed_.end() && it->second.when == when) {
      removed_.erase(it);
    }
  }
  {
    std::lock_guard lock(mu_);
    auto it = cache_.find(chunk);
    if (it != cache_.end()) {
      lru_.erase(it->second.pos);
      cache_.erase(it);
    }
  }
  std::string data_path = ChunkDataPath(dir, chunk);
  bool existed = ::unlink(data_path.c_str()) == 0;
  if (!existed && errno != ENOENT) return Status::FromErrno(errno, "remove " + data_path);
  std::string crc_path = ChunkCrcPath(dir, chunk);
  if (::unlink(crc_path.c_str()) != 0 && errno != ENOENT) {
    return Status::FromErrno(errno, "remove " + crc_path);
  }
  if (existed) {
    std::lock_guard lock(mu_);
    auto& state = volumes_[volume];
    if (state.chunks > 0) --state.chunks;
  }
  return Status::Ok();
}

Status ChunkStore::RefuseRemovedLocked(VolumeId volume, ChunkId chunk) {
  auto it = removed_.find(chunk);
  if (it == removed_.end() || it->second.volume != volume ||
      std::chrono::steady_clock::now() - it->second.when > kRemovedMemory) {
    return Status::Ok();
  }
  return Status(StatusCode::kStale,
                fmt::format("chunk {} was removed from this node: the writer's layout is older "
                            "than meta's",
                            chunk));
}

Result<LocalFds> ChunkStore::OpenLocal(VolumeId volume, ChunkId chunk, bool create, bool writable,
                                       bool direct, bool lazy, uint64_t base_version) {
  ASSIGN_OR_RETURN(std::string dir, DirOf(volume));
  if (lazy && create && writable && !direct && base_version == 0) {
    ASSIGN_OR_RETURN(std::optional<LocalFds> unnamed, OpenUnnamed(volume, dir, chunk));
    if (unnamed) return std::move(*unnamed);
  }
  // Creates the files and the header through the cached path first.
  ASSIGN_OR_RETURN(std::shared_ptr<ChunkFile> file,
                   create ? GetForWrite(volume, chunk, base_version)
                          : GetCommitted(volume, chunk, base_version));
  RETURN_IF_ERROR(file->ReadHeader());
  int mode = writable ? O_RDWR : O_RDONLY;
  UniqueFd data(::open(ChunkDataPath(dir, chunk).c_str(), mode | O_CLOEXEC | (direct ? O_DIRECT : 0)));
  if (!data.valid()) return Status::FromErrno(errno, fmt::format("open chunk {} for a local client", chunk));
  // The checksum file is always writable for writers (they update it) and
  // readers take no locks, so read-only is enough for them.
  UniqueFd crc(::open(ChunkCrcPath(dir, chunk).c_str(), mode | O_CLOEXEC));
  if (!crc.valid()) return Status::FromErrno(errno, fmt::format("open checksums of chunk {}", chunk));
  ASSIGN_OR_RETURN(uint64_t length, file->Length());
  return LocalFds{std::move(data), std::move(crc), ChunkStat{length, file->version()}};
}

Result<std::vector<ChunkId>> ChunkStore::ChunkIds(VolumeId volume) {
  ASSIGN_OR_RETURN(std::string dir, DirOf(volume));
  std::vector<ChunkId> ids;
  ForEachChunkFile(dir, [&](ChunkId id) { ids.push_back(id); });
  std::sort(ids.begin(), ids.end());
  return ids;
}

Result<std::vector<ChunkListing>> ChunkStore::List(VolumeId volume, ChunkId after, size_t max,
                                                   bool* eof) {
  ASSIGN_OR_RETURN(std::string dir, DirOf(volume));
  std::vector<ChunkId> ids;
  ForEachChunkFile(dir, [&](ChunkId id) {
    if (id > after) ids.push_back(id);
  });
  std::sort(ids.begin(), ids.end());
  *eof = ids.size() <= max;
  if (ids.size() > max) ids.resize(max);
  std::vector<ChunkListing> out;
  for (ChunkId id : ids) {
    ChunkListing item{id, volume, 0, 0};
    auto stat = Stat(volume, id);
    if (stat.ok()) {
      item.length = stat->length;
      item.version = stat->version;
    }
    out.push_back(item);
  }
  return out;
}

}  // namespace t0fs::data

namespace t0fs::data {

std::vector<VolumeId> ChunkStore::Volumes() const {
  std::lock_guard lock(mu_);
  std::vector<VolumeId> out;
  for (const auto& [id, state] : volumes_) out.push_back(id);
  std::sort(out.begin(), out.end());
  return out;
}

Status ChunkStore::Verify(VolumeId volume, ChunkId chunk) {
  ASSIGN_OR_RETURN(std::shared_ptr<ChunkFile> file, Get(volume, chunk, false));
  // Checksums left pending by a passthrough writer that is gone (its mount
  // died) are rebuilt here; a live writer's chunk reads unverified until it
  // rebuilds them itself at its last close.
  ASSIGN_OR_RETURN(bool rebuilt, file->RebuildIfAbandoned());
  if (rebuilt) LOG_INFO("chunk {}: checksums rebuilt after a passthrough writer went away", chunk);
  return file->VerifyAll();
}

Result<std::unique_ptr<ChunkFile>> ChunkStore::CreateTemp(VolumeId volume, ChunkId chunk) {
  ASSIGN_OR_RETURN(std::string dir, DirOf(volume));
  std::string data_path = ChunkDataPath(dir, chunk) + ".tmp";
  std::string crc_path = ChunkCrcPath(dir, chunk) + ".tmp";
  UniqueFd data(::open(data_path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
  if (!data.valid()) return Status::FromErrno(errno, "create " + data_path);
  UniqueFd crc(::open(crc_path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
  if (!crc.valid()) return Status::FromErrno(errno, "create " + crc_path);
  auto file = std::make_unique<ChunkFile>(chunk, std::move(data), std::move(crc), false);
  RETURN_IF_ERROR(file->InitOrValidate());
  return file;
}

Status ChunkStore::CommitTemp(VolumeId volume, ChunkId chunk) {
  ASSIGN_OR_RETURN(std::string dir, DirOf(volume));
  std::string data_path = ChunkDataPath(dir, chunk);
  std::string crc_path = ChunkCrcPath(dir, chunk);
  // Held to the end: a removal (Remove) sees this copy placed, or comes
  // after it is whole.
  std::lock_guard naming(unnamed_mu_);
  NotePlacedLocked(chunk);
  bool existed = ::access(data_path.c_str(), F_OK) == 0;
  {
    std::lock_guard lock(mu_);
    auto it = cache_.find(chunk);
    if (it != cache_.end()) {
      lru_.erase(it->second.pos);
      cache_.erase(it);
    }
  }
  // Checksums first: a crash between the renames leaves new checksums over
  // old data, which reads report as damage (and repair fixes) — never old
  // checksums blessing new data.
  if (::rename((crc_path + ".tmp").c_str(), crc_path.c_str()) != 0) {
    return Status::FromErrno(errno, "rename " + crc_path);
  }
  if (::rename((data_path + ".tmp").c_str(), data_path.c_str()) != 0) {
    return Status::FromErrno(errno, "rename " + data_path);
  }
  if (!existed) {
    std::lock_guard lock(mu_);
    ++volumes_[volume].chunks;
  }
  if (removed_.erase(chunk) != 0) {
    LogRemovalLocked(volume, chunk, /*placed=*/true);  // meta placed a replica here again
  }
  return Status::Ok();
}

void ChunkStore::DropTemp(VolumeId volume, ChunkId chunk) {
  auto dir = DirOf(volume);
  if (!dir.ok()) return;
  ::unlink((ChunkDataPath(*dir, chunk) + ".tmp").c_str());
  ::unlink((ChunkCrcPath(*dir, chunk) + ".tmp").c_str());
}

}  // namespace t0fs::data
