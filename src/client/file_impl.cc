#include "client/file_impl.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>

#include <fmt/format.h>

#include "common/buffer.h"
#include "common/io_backend.h"
#include "common/logging.h"

namespace t0fs::client {

FileImpl::FileImpl(ClientImpl& client, std::shared_ptr<InodeState> state, HandleId handle, int flags,
                   Attr attr)
    : client_(client), state_(std::move(state)), handle_(handle), flags_(flags), attr_(attr) {}

FileImpl::~FileImpl() {
  Status st = Close();
  if (!st.ok()) LOG_WARN("closing inode {} on destruction: {}", state_->ino, st.ToString());
}

uint64_t FileImpl::size() const {
  std::lock_guard lock(state_->mu);
  return state_->size;
}

Attr FileImpl::attr() const {
  Attr a = attr_;
  a.size = size();
  return a;
}

Result<size_t> FileImpl::Read(uint64_t offset, std::span<std::byte> buf) {
  if (closed_) return Status(StatusCode::kBadHandle, "file is closed");
  if ((flags_ & O_ACCMODE) == O_WRONLY) return Status(StatusCode::kBadHandle, "file is open write-only");
  const bool direct = (flags_ & O_DIRECT) != 0;
  uint64_t end;
  {
    std::lock_guard lock(state_->mu);
    if (offset >= state_->size) return size_t{0};
    end = std::min<uint64_t>(state_->size, offset + buf.size());
  }
  const uint64_t cs = state_->chunk_size;
  size_t done = 0;
  while (offset + done < end) {
    uint64_t pos = offset + done;
    uint64_t index = pos / cs;
    uint64_t in_chunk = pos % cs;
    size_t piece = static_cast<size_t>(std::min<uint64_t>(cs - in_chunk, end - pos));
    std::span<std::byte> out = buf.subspan(done, piece);
    ASSIGN_OR_RETURN(size_t got, client_.ReadPiece(*state_, index, in_chunk, out, direct));
    // Within the file size, bytes the chunk file does not hold are a hole.
    if (got < piece) std::memset(out.data() + got, 0, piece - got);
    done += piece;
  }
  return done;
}

Result<size_t> FileImpl::Write(uint64_t offset, std::span<const std::byte> data) {
  if (closed_) return Status(StatusCode::kBadHandle, "file is closed");
  if ((flags_ & O_ACCMODE) == O_RDONLY) return Status(StatusCode::kBadHandle, "file is open read-only");
  if (data.empty()) return size_t{0};
  if (flags_ & O_APPEND) {
    std::lock_guard append(state_->append_mu);
    uint64_t at;
    {
      std::lock_guard lock(state_->mu);
      at = state_->size;
    }
    return WriteAt(at, data);
  }
  return WriteAt(offset, data);
}

Result<size_t> FileImpl::WriteAt(uint64_t offset, std::span<const std::byte> data) {
  const bool direct = (flags_ & O_DIRECT) != 0;
  const uint64_t cs = state_->chunk_size;
  const uint64_t end = offset + data.size();
  if (end < offset) return Status(StatusCode::kFileTooBig, "write beyond the largest offset");
  size_t done = 0;
  while (done < data.size()) {
    uint64_t pos = offset + done;
    uint64_t index = pos / cs;
    uint64_t in_chunk = pos % cs;
    size_t piece = static_cast<size_t>(std::min<uint64_t>(cs - in_chunk, data.size() - done));
    const bool streaming = in_chunk + piece == cs;  // this write reaches the chunk's end
    ASSIGN_OR_RETURN(CachedChunk chunk, client_.AllocateChunk(*state_, index, streaming));
    // Every write of this session to a chunk carries one version: the
    // committed one + 1. Meta records it at commit.
    uint64_t version;
    {
      std::lock_guard lock(state_->mu);
      uint64_t base = 0;
      for (const ReplicaInfo& r : chunk.info.replicas) {
        if (r.state == 0) base = std::max(base, r.version);
      }
      auto [it, inserted] = state_->dirty_versions.emplace(chunk.info.replicas.front().chunk, base + 1);
      version = it->second;
    }
    RETURN_IF_ERROR(client_.WritePiece(*state_, chunk, in_chunk, data.subspan(done, piece), version, direct));
    done += piece;
    std::lock_guard lock(state_->mu);
    state_->size = std::max(state_->size, pos + piece);
    state_->write_generation++;
    state_->last_write = WallNow();
  }
  return done;
}

Status FileImpl::Flush() {
  if (closed_) return Status::Ok();
  if (passthrough_writer_) {
    std::lock_guard setup(state_->passthrough_mu);
    RETURN_IF_ERROR(SyncPassthrough(/*last=*/false));
  }
  return client_.Commit(*state_, handle_, /*durable=*/false);
}

Status FileImpl::Fsync(bool /*datasync*/) {
  if (closed_) return Status(StatusCode::kBadHandle, "file is closed");
  if (passthrough_writer_) {
    // Size and mtime from the chunk file; its checksums stay pending (and
    // durable as such) until the last writer closes: rebuilding them means
    // reading the whole chunk, too much for every fsync of a growing file.
    std::lock_guard setup(state_->passthrough_mu);
    RETURN_IF_ERROR(SyncPassthrough(/*last=*/false));
  }
  RETURN_IF_ERROR(client_.SyncReplicas(*state_));
  return client_.Commit(*state_, handle_, /*durable=*/true);
}

Result<PassthroughFile> FileImpl::OpenPassthrough(bool write, bool join) {
  if (closed_) return Status(StatusCode::kBadHandle, "file is closed");
  if ((flags_ & O_ACCMODE) == O_RDONLY) write = false;
  if (passthrough_writer_) return Status(StatusCode::kInvalidArgument, "passthrough is already open");
  ASSIGN_OR_RETURN(std::shared_ptr<ChunkFile> file, client_.OpenPassthrough(*state_, write, join));
  if (write) passthrough_writer_ = true;
  PassthroughFile out;
  out.write = write;
  out.fd = UniqueFd(::fcntl(file->data_fd(), F_DUPFD_CLOEXEC, 0));
  if (!out.fd.valid()) {
    Status err = Status::FromErrno(errno, "duplicate the chunk file descriptor");
    AbandonPassthrough();
    return err;
  }
  return out;
}

void FileImpl::AbandonPassthrough() {
  if (!passthrough_writer_.exchange(false)) return;
  Status st = LeavePassthrough();
  if (!st.ok()) LOG_WARN("inode {}: leaving passthrough: {}", state_->ino, st.ToString());
}

Status FileImpl::LeavePassthrough() {
  std::lock_guard setup(state_->passthrough_mu);
  bool last;
  {
    std::lock_guard lock(state_->mu);
    last = --state_->passthrough.writers == 0;
  }
  Status st = SyncPassthrough(last);
  if (last) {
    std::shared_ptr<ChunkFile> file;
    {
      std::lock_guard lock(state_->mu);
      file = std::move(state_->passthrough.file);
      state_->passthrough = InodeState::Passthrough{};
    }
    if (file) file->ReleaseWriter();
  }
  return st;
}

Status FileImpl::SyncPassthrough(bool last) {
  InodeState& st = *state_;
  std::shared_ptr<ChunkFile> file;
  {
    std::lock_guard lock(st.mu);
    file = st.passthrough.file;
  }
  if (!file) return Status::Ok();
  ASSIGN_OR_RETURN(uint64_t length, file->Length());
  if (length > st.chunk_size) {
    ASSIGN_OR_RETURN(bool changed, client_.PassthroughChanged(st));
    if (changed || last) RETURN_IF_ERROR(MoveOverflow(*file, length, last));
  }
  RETURN_IF_ERROR(client_.NotePassthroughWrites(st));
  bool needs_rebuild;
  {
    std::lock_guard lock(st.mu);
    needs_rebuild = st.passthrough.needs_rebuild;
  }
  if (last && needs_rebuild) {
    RETURN_IF_ERROR(file->RebuildChecksums(/*clear_pending=*/last));
    client_.CountPassthrough(0, /*rebuilt=*/true);
    std::lock_guard lock(st.mu);
    st.passthrough.needs_rebuild = false;
  } else if (last) {
    RETURN_IF_ERROR(file->ClearChecksumsPending());
  }
  return Status::Ok();
}

Status FileImpl::MoveOverflow(ChunkFile& file, uint64_t length, bool cut) {
  // Bytes the kernel wrote past the chunk's end belong to the next chunks:
  // copy the data extents there (holes stay holes, so nothing already in
  // those chunks is overwritten with zeros); `cut` drops them from chunk 0.
  const uint64_t cs = state_->chunk_size;
  const int fd = file.data_fd();
  AlignedBuffer buf(1 << 20);
  uint64_t moved = 0;
  for (off_t pos = static_cast<off_t>(cs); static_cast<uint64_t>(pos) < length;) {
    off_t data = ::lseek(fd, pos, SEEK_DATA);
    if (data < 0) {
      if (errno == ENXIO) break;
      return Status::FromErrno(errno, "find data past the passthrough chunk");
    }
    off_t hole = ::lseek(fd, data, SEEK_HOLE);
    if (hole < 0) hole = static_cast<off_t>(length);
    for (uint64_t off = static_cast<uint64_t>(data); off < static_cast<uint64_t>(hole);) {
      size_t want = static_cast<size_t>(std::min<uint64_t>(buf.size(), static_cast<uint64_t>(hole) - off));
      ASSIGN_OR_RETURN(size_t n, PreadFull(fd, buf.data(), want, off));
      if (n == 0) break;
      RETURN_IF_ERROR(WriteAt(off, std::span<const std::byte>(buf.data(), n)).status());
      off += n;
      moved += n;
    }
    pos = hole;
  }
  if (cut) RETURN_IF_ERROR(file.Truncate(cs, 0));
  if (moved > 0) {
    LOG_INFO("inode {}: {} written past its {} chunk through passthrough moved to the next chunks", state_->ino,
             FormatByteSize(moved), FormatByteSize(cs));
  }
  client_.CountPassthrough(moved, false);
  return Status::Ok();
}

Status FileImpl::Truncate(uint64_t size) {
  if (closed_) return Status(StatusCode::kBadHandle, "file is closed");
  return client_.Truncate(state_->ino, state_.get(), size).status();
}

Status FileImpl::Close() {
  if (closed_.exchange(true)) return Status::Ok();
  Status left = Status::Ok();
  if (passthrough_writer_.exchange(false)) left = LeavePassthrough();
  Status committed = client_.Commit(*state_, handle_, /*durable=*/false);
  Status released = client_.ReleaseHandle(handle_);
  client_.Forget(state_);
  if (!left.ok()) return left;
  return committed.ok() ? released : committed;
}

}  // namespace t0fs::client
