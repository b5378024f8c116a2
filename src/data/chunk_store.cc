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
  std::lock_guard lock(mu_);
  volumes_[id] = VolumeState{dir, count};
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
    RETURN_IF_ERROR(NameLocked(chunk));
    ASSIGN_OR_RETURN(file, OpenFile(dir, chunk, create, &created));
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

Result<std::shared_ptr<ChunkFile>> ChunkStore::GetForRead(VolumeId volume, ChunkId chunk,
                                                          uint64_t min_version, uint64_t* version) {
  ASSIGN_OR_RETURN(std::shared_ptr<ChunkFile> file, Get(volume, chunk, false));
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
  auto file = Get(volume, chunk, false);
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
  ASSIGN_OR_RETURN(std::shared_ptr<ChunkFile> file, GetForWrite(volume, chunk, base_version));
  RETURN_IF_ERROR(file->Write(offset, data, version));
  return sync ? file->Sync() : Status::Ok();
}

Status ChunkStore::Truncate(VolumeId volume, ChunkId chunk, uint64_t length, uint64_t version,
                            uint64_t base_version) {
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

Status ChunkStore::Remove(VolumeId volume, ChunkId chunk) {
  ASSIGN_OR_RETURN(std::string dir, DirOf(volume));
  {
    std::lock_guard naming(unnamed_mu_);
    ForgetUnnamedLocked(chunk);  // the files go with their last descriptor
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

Result<LocalFds> ChunkStore::OpenLocal(VolumeId volume, ChunkId chunk, bool create, bool writable,
                                       bool direct, bool lazy, uint64_t base_version) {
  ASSIGN_OR_RETURN(std::string dir, DirOf(volume));
  if (lazy && create && writable && !direct && base_version == 0) {
    ASSIGN_OR_RETURN(std::optional<LocalFds> unnamed, OpenUnnamed(volume, dir, chunk));
    if (unnamed) return std::move(*unnamed);
  }
  // Creates the files and the header through the cached path first.
  ASSIGN_OR_RETURN(std::shared_ptr<ChunkFile> file,
                   create ? GetForWrite(volume, chunk, base_version) : Get(volume, chunk, false));
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
  return Status::Ok();
}

void ChunkStore::DropTemp(VolumeId volume, ChunkId chunk) {
  auto dir = DirOf(volume);
  if (!dir.ok()) return;
  ::unlink((ChunkDataPath(*dir, chunk) + ".tmp").c_str());
  ::unlink((ChunkCrcPath(*dir, chunk) + ".tmp").c_str());
}

namespace {

// Links an unnamed file (O_TMPFILE) as `path`. An existing name of the same
// file is fine (named before); another file there: kExists.
Status LinkAs(int fd, const std::string& path) {
  const std::string proc = fmt::format("/proc/self/fd/{}", fd);
  if (::linkat(AT_FDCWD, proc.c_str(), AT_FDCWD, path.c_str(), AT_SYMLINK_FOLLOW) == 0) return Status::Ok();
  if (errno != EEXIST) return Status::FromErrno(errno, "name " + path);
  struct stat ours {}, named {};
  if (::fstat(fd, &ours) == 0 && ::stat(path.c_str(), &named) == 0 && ours.st_ino == named.st_ino &&
      ours.st_dev == named.st_dev) {
    return Status::Ok();
  }
  return Status(StatusCode::kExists, path + " is another file");
}

// Unnamed files nobody can still write to and that hold nothing: the
// client's writer lock is gone and the data file is empty.
bool Abandoned(ChunkFile& files) {
  auto length = files.Length();
  auto writer = files.WriterAlive();
  return length.ok() && *length == 0 && writer.ok() && !*writer;
}

}  // namespace

Result<std::optional<LocalFds>> ChunkStore::OpenUnnamed(VolumeId volume, const std::string& dir, ChunkId chunk) {
  std::lock_guard naming(unnamed_mu_);
  auto it = unnamed_.find(chunk);
  if (it == unnamed_.end()) {
    {
      std::lock_guard lock(mu_);
      if (cache_.count(chunk) != 0) return std::optional<LocalFds>();  // it has files
    }
    struct stat sb {};
    if (::stat(ChunkDataPath(dir, chunk).c_str(), &sb) == 0) return std::optional<LocalFds>();
    // Two unnamed files on the volume's file system (so that they can be
    // linked into it); the checksum file gets its header now.
    UniqueFd data(::open(dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600));
    UniqueFd crc(data.valid() ? ::open(dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600) : -1);
    if (!crc.valid()) {
      // No O_TMPFILE here (or no descriptors left): name the files at once.
      LOG_DEBUG("volume {}: no unnamed chunk files ({}); chunk {} is created with its name", volume,
                std::strerror(errno), chunk);
      return std::optional<LocalFds>();
    }
    auto files = std::make_unique<ChunkFile>(chunk, std::move(data), std::move(crc), false);
    RETURN_IF_ERROR(files->InitOrValidate());
    RETURN_IF_ERROR(files->HoldKeeper());  // until these files are named or dropped
    MakeRoomLocked();
    const uint64_t seq = ++unnamed_seq_;
    last_unnamed_ = std::chrono::steady_clock::now();
    it = unnamed_.emplace(chunk, Unnamed{volume, std::move(files), 0, seq, last_unnamed_}).first;
    unnamed_order_.emplace(seq, chunk);
  } else if (it->second.volume != volume) {
    return std::optional<LocalFds>();
  }
  it->second.handed++;
  // The client's descriptors: the data file's is shared; the checksum
  // file's is its own open file description (its writer lock is then its
  // own, which MakeRoomLocked can see). Another opener of the same new
  // chunk gets the same files and sees what the kernel wrote to them.
  const ChunkFile& files = *it->second.files;
  UniqueFd data(::fcntl(files.data_fd(), F_DUPFD_CLOEXEC, 0));
  UniqueFd crc(::open(fmt::format("/proc/self/fd/{}", files.crc_fd()).c_str(), O_RDWR | O_CLOEXEC));
  struct stat sb {};
  if (!data.valid() || !crc.valid() || ::fstat(data.get(), &sb) != 0) {
    return Status::FromErrno(errno, fmt::format("open unnamed chunk {} for a local client", chunk));
  }
  return std::optional<LocalFds>(
      LocalFds{std::move(data), std::move(crc), ChunkStat{static_cast<uint64_t>(sb.st_size), 0}, true});
}

void ChunkStore::MakeRoomLocked() {
  while (unnamed_.size() >= unnamed_capacity_ && !unnamed_order_.empty()) {
    const ChunkId oldest = unnamed_order_.begin()->second;
    Status named = Abandoned(*unnamed_.at(oldest).files) ? Status::Ok() : NameLocked(oldest);
    if (!named.ok()) LOG_WARN("chunk {}: naming its unnamed files: {}; dropped", oldest, named.ToString());
    ForgetUnnamedLocked(oldest);  // named, or empty and nobody writes: no data to keep
  }
}

Status ChunkStore::NameLocked(ChunkId chunk) {
  auto it = unnamed_.find(chunk);
  if (it == unnamed_.end()) return Status::Ok();
  ASSIGN_OR_RETURN(std::string dir, DirOf(it->second.volume));
  RETURN_IF_ERROR(
      Link(it->second.volume, dir, chunk, it->second.files->data_fd(), it->second.files->crc_fd()));
  ForgetUnnamedLocked(chunk);
  return Status::Ok();
}

void ChunkStore::ForgetUnnamedLocked(ChunkId chunk) {
  auto it = unnamed_.find(chunk);
  if (it == unnamed_.end()) return;
  unnamed_order_.erase(it->second.seq);
  unnamed_.erase(it);
}

Status ChunkStore::Link(VolumeId volume, const std::string& dir, ChunkId chunk, int data_fd, int crc_fd) {
  const std::string data_path = ChunkDataPath(dir, chunk);
  const std::string crc_path = ChunkCrcPath(dir, chunk);
  struct stat ours {}, ours_crc {}, named {};
  if (::fstat(data_fd, &ours) != 0 || ::fstat(crc_fd, &ours_crc) != 0) {
    return Status::FromErrno(errno, fmt::format("stat chunk {}", chunk));
  }
  if (::stat(data_path.c_str(), &named) == 0) {
    if (named.st_ino == ours.st_ino && named.st_dev == ours.st_dev) return Status::Ok();  // named before
    return Status(StatusCode::kExists,
                  fmt::format("chunk {} got other files while this node had forgotten its unnamed ones", chunk));
  }
  if (!S_ISREG(ours.st_mode) || !S_ISREG(ours_crc.st_mode) || ours.st_nlink != 0 || ours_crc.st_nlink != 0) {
    return Status(StatusCode::kInvalidArgument, fmt::format("chunk {}: only unnamed files can be adopted", chunk));
  }
  // The checksums first: a data file never has a name without them. A
  // checksum file without data (a crash between the two links) is stale.
  Status crc_named = LinkAs(crc_fd, crc_path);
  if (crc_named.code() == StatusCode::kExists) {
    if (::unlink(crc_path.c_str()) != 0 && errno != ENOENT) return Status::FromErrno(errno, "remove " + crc_path);
    crc_named = LinkAs(crc_fd, crc_path);
  }
  RETURN_IF_ERROR(crc_named);
  RETURN_IF_ERROR(LinkAs(data_fd, data_path));
  std::lock_guard lock(mu_);
  ++volumes_[volume].chunks;
  return Status::Ok();
}

Status ChunkStore::Adopt(VolumeId volume, ChunkId chunk, int data_fd, int crc_fd) {
  ASSIGN_OR_RETURN(std::string dir, DirOf(volume));
  std::lock_guard naming(unnamed_mu_);
  RETURN_IF_ERROR(Link(volume, dir, chunk, data_fd, crc_fd));
  ForgetUnnamedLocked(chunk);
  return Status::Ok();
}

Status ChunkStore::Reuse(VolumeId volume, ChunkId old_chunk, ChunkId chunk, int data_fd,
                         int crc_fd) {
  ASSIGN_OR_RETURN(std::string dir, DirOf(volume));
  std::lock_guard naming(unnamed_mu_);
  auto it = unnamed_.find(old_chunk);
  if (it == unnamed_.end()) {
    return Status(StatusCode::kDataNoChunk,
                  fmt::format("chunk {} has no unnamed files here", old_chunk));
  }
  Unnamed& u = it->second;
  if (u.volume != volume) {
    return Status(StatusCode::kInvalidArgument,
                  fmt::format("chunk {} is not on volume {}", old_chunk, volume));
  }
  struct stat ours {
  }, ours_crc{}, theirs{}, theirs_crc{};
  if (::fstat(u.files->data_fd(), &ours) != 0 || ::fstat(u.files->crc_fd(), &ours_crc) != 0) {
    return Status::FromErrno(errno, fmt::format("stat unnamed chunk {}", old_chunk));
  }
  if (::fstat(data_fd, &theirs) != 0 || ::fstat(crc_fd, &theirs_crc) != 0 ||
      theirs.st_ino != ours.st_ino || theirs.st_dev != ours.st_dev ||
      theirs_crc.st_ino != ours_crc.st_ino || theirs_crc.st_dev != ours_crc.st_dev) {
    return Status(
        StatusCode::kInvalidArgument,
        fmt::format("the descriptors given are not the unnamed files of chunk {}", old_chunk));
  }
  // Handed out once: nobody but the caller (and the kernel it handed them
  // to, done with them before it closed the file) can write them.
  if (u.handed != 1 || ours.st_size != 0) {
    return Status(StatusCode::kBusy,
                  fmt::format("chunk {}: unnamed files {} (handed out {} times)", old_chunk,
                              ours.st_size != 0 ? "written" : "shared", u.handed));
  }
  if (unnamed_.count(chunk) != 0)
    return Status(StatusCode::kExists, fmt::format("chunk {} has files", chunk));
  {
    std::lock_guard lock(mu_);
    if (cache_.count(chunk) != 0)
      return Status(StatusCode::kExists, fmt::format("chunk {} has files", chunk));
  }
  struct stat sb {};
  if (::stat(ChunkDataPath(dir, chunk).c_str(), &sb) == 0 ||
      ::stat(ChunkCrcPath(dir, chunk).c_str(), &sb) == 0) {
    return Status(StatusCode::kExists, fmt::format("chunk {} has files", chunk));
  }
  // Our descriptors again, under the new id (the same open file
  // descriptions: the keeper lock stays held); blank files, a new header.
  UniqueFd data(::fcntl(u.files->data_fd(), F_DUPFD_CLOEXEC, 0));
  UniqueFd crc(data.valid() ? ::fcntl(u.files->crc_fd(), F_DUPFD_CLOEXEC, 0) : -1);
  if (!crc.valid())
    return Status::FromErrno(errno, fmt::format("reuse unnamed chunk {}", old_chunk));
  // (No header lock: nobody else writes these files, and the caller may
  // hold its writer byte in the header's range.)
  auto files = std::make_unique<ChunkFile>(chunk, std::move(data), std::move(crc), false);
  std::byte header[kChunkHeaderSize];
  EncodeChunkCrcHeader(ChunkCrcHeader{chunk, 0}, header);
  Status blank = PwriteFull(files->crc_fd(), header, sizeof header, 0);
  if (blank.ok() && (::ftruncate(files->data_fd(), 0) != 0 ||
                     ::ftruncate(files->crc_fd(), kChunkHeaderSize) != 0)) {
    blank = Status::FromErrno(errno,
                              fmt::format("empty unnamed chunk {} for chunk {}", old_chunk, chunk));
  }
  if (blank.ok()) blank = files->ReadHeader();
  if (blank.ok()) blank = files->HoldKeeper();
  unnamed_order_.erase(u.seq);
  unnamed_.erase(
      it);  // on a failure too: its header may be gone (the caller drops its descriptors)
  RETURN_IF_ERROR(blank);
  const uint64_t seq = ++unnamed_seq_;
  last_unnamed_ = std::chrono::steady_clock::now();
  unnamed_.emplace(chunk, Unnamed{volume, std::move(files), /*handed=*/1, seq, last_unnamed_});
  unnamed_order_.emplace(seq, chunk);
  ++reused_;
  return Status::Ok();
}

uint64_t ChunkStore::ReusedCount() const {
  std::lock_guard naming(unnamed_mu_);
  return reused_;
}

size_t ChunkStore::TrimUnnamed(std::chrono::steady_clock::duration min_age) {
  constexpr size_t kMaxLooks = 4096;  // per call: a bounded pause for the openers
  const auto now = std::chrono::steady_clock::now();
  std::vector<std::unique_ptr<ChunkFile>> dropped;  // closed (the inodes freed) after the lock
  {
    std::lock_guard naming(unnamed_mu_);
    // Not in the middle of a burst of creates while there is room: freeing
    // inodes between allocations slows the allocations on some file
    // systems (ext4 without a journal skips recently freed inodes).
    if (unnamed_.size() < unnamed_capacity_ / 2 && now - last_unnamed_ < min_age) return 0;
    const uint64_t last = unnamed_seq_;  // the ones this call re-queues are not looked at again
    size_t looks = 0;
    for (auto at = unnamed_order_.begin(); at != unnamed_order_.end() && at->first <= last && looks < kMaxLooks;
         ++looks) {
      auto it = unnamed_.find(at->second);
      if (now - it->second.since < min_age) break;  // in order of `since`
      Unnamed& u = it->second;
      if (Abandoned(*u.files)) {
        dropped.push_back(std::move(u.files));
        unnamed_.erase(it);
      } else {
        u.since = now;  // still written or held: looked at again later
        u.seq = ++unnamed_seq_;
        unnamed_order_.emplace(u.seq, at->second);
      }
      at = unnamed_order_.erase(at);
    }
  }
  return dropped.size();
}

size_t ChunkStore::UnnamedCount() const {
  std::lock_guard naming(unnamed_mu_);
  return unnamed_.size();
}

}  // namespace t0fs::data
