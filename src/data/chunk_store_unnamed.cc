// ChunkStore's unnamed chunk files (data/chunk_store.h, OpenLocal with
// `lazy`): made, handed out, named (Adopt, another writer), reused under a
// new id (Reuse), dropped (TrimUnnamed, past the capacity, Remove).
#include "data/chunk_store.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/io_backend.h"
#include "common/logging.h"

namespace t0fs::data {

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
    RETURN_IF_ERROR(RefuseRemovedLocked(volume, chunk));
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
  NotePlacedLocked(chunk);  // (Link runs under unnamed_mu_)
  std::lock_guard lock(mu_);
  ++volumes_[volume].chunks;
  return Status::Ok();
}

Status ChunkStore::Adopt(VolumeId volume, ChunkId chunk, int data_fd, int crc_fd) {
  ASSIGN_OR_RETURN(std::string dir, DirOf(volume));
  std::lock_guard naming(unnamed_mu_);
  RETURN_IF_ERROR(RefuseRemovedLocked(volume, chunk));
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
