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

FileImpl::FileImpl(ClientImpl& client, std::shared_ptr<InodeState> state, OpenHandles::Key handle,
                   int flags, Attr attr)
    : client_(client), state_(std::move(state)), handle_(handle), flags_(flags), attr_(attr) {
  std::lock_guard lock(state_->mu);
  seen_lost_commits_ = state_->lost_commits;
}

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
  if (passthrough_) {
    if (std::shared_ptr<ChunkFile> held = Passthrough::Held(*state_)) return ReadHeld(*held, offset, buf);
  }
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
    ASSIGN_OR_RETURN(size_t got, client_.replicas().Read(*state_, index, in_chunk, out, direct));
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
  std::shared_ptr<ChunkFile> held = passthrough_ ? Passthrough::Held(*state_) : nullptr;
  if (flags_ & O_APPEND) {
    std::lock_guard append(state_->append_mu);
    if (held) RETURN_IF_ERROR(client_.passthrough().NoteWrites(*state_));
    uint64_t at;
    {
      std::lock_guard lock(state_->mu);
      at = state_->size;
    }
    return held ? WriteHeld(*held, at, data) : WriteAt(at, data);
  }
  return held ? WriteHeld(*held, offset, data) : WriteAt(offset, data);
}

Result<size_t> FileImpl::ReadHeld(ChunkFile& held, uint64_t offset, std::span<std::byte> buf) {
  // The kernel may have written (and grown the file) since the last note.
  RETURN_IF_ERROR(client_.passthrough().NoteWrites(*state_));
  uint64_t end;
  {
    std::lock_guard lock(state_->mu);
    if (offset >= state_->size) return size_t{0};
    end = std::min<uint64_t>(state_->size, offset + buf.size());
  }
  const size_t want = static_cast<size_t>(end - offset);
  // Unverified, as the kernel reads it: its checksums may be pending.
  ASSIGN_OR_RETURN(size_t got, PreadFull(held.data_fd(), buf.data(), want, offset));
  if (got < want) std::memset(buf.data() + got, 0, want - got);
  return want;
}

Result<size_t> FileImpl::WriteHeld(ChunkFile& held, uint64_t offset, std::span<const std::byte> data) {
  if (offset + data.size() < offset) return Status(StatusCode::kFileTooBig, "write beyond the largest offset");
  // Exactly as the kernel writes it; noted (size, version) as its writes are.
  RETURN_IF_ERROR(PwriteFull(held.data_fd(), data.data(), data.size(), offset));
  RETURN_IF_ERROR(client_.passthrough().NoteWrites(*state_));
  return data.size();
}

Result<size_t> FileImpl::WriteAt(uint64_t offset, std::span<const std::byte> data) {
  const bool direct = (flags_ & O_DIRECT) != 0;
  const uint64_t cs = state_->chunk_size;
  const uint64_t end = offset + data.size();
  if (end < offset) return Status(StatusCode::kFileTooBig, "write beyond the largest offset");
  size_t done = 0;
  bool again = false;  // the piece at `done` is written once more (its chunk left the layout)
  while (done < data.size()) {
    uint64_t pos = offset + done;
    uint64_t index = pos / cs;
    uint64_t in_chunk = pos % cs;
    size_t piece = static_cast<size_t>(std::min<uint64_t>(cs - in_chunk, data.size() - done));
    const bool streaming = in_chunk + piece == cs;  // this write reaches the chunk's end
    ASSIGN_OR_RETURN(CachedChunk chunk, client_.layouts().Allocate(*state_, index, streaming));
    // Every write of this session to a chunk carries one version: the
    // committed one + 1. Meta records it at commit.
    const ChunkId id = chunk.info.replicas.front().chunk;
    uint64_t version;
    {
      std::lock_guard lock(state_->mu);
      const uint64_t base = CommittedVersion(chunk.info);
      auto [it, inserted] = state_->dirty_versions.try_emplace(id, base + 1);
      version = it->second;
      if (inserted) state_->landed_writes[id] = 0;
    }
    Status wrote = client_.replicas().Write(*state_, chunk, in_chunk, data.subspan(done, piece),
                                            version, direct);
    {
      std::lock_guard lock(state_->mu);
      if (wrote.ok()) {
        // Dirty again if a commit settled the version while this write was
        // on its way (InodeState::landed_writes); a newer version's writes
        // count for themselves.
        auto [dirty, redirtied] = state_->dirty_versions.try_emplace(id, version);
        if (redirtied) state_->landed_writes[id] = 0;
        if (dirty->second == version) state_->landed_writes[id]++;
        state_->size = std::max(state_->size, pos + piece);
        state_->write_generation++;
        state_->last_write = WallNow();
      } else if (auto dirty = state_->dirty_versions.find(id);
                 dirty != state_->dirty_versions.end() && dirty->second == version) {
        // Nothing landed for this version: nothing to commit (a write still
        // on its way makes it dirty again when it lands). Settled meanwhile
        // (no dirty entry): stays so.
        auto landed = state_->landed_writes.find(id);
        if (landed != state_->landed_writes.end() && landed->second == 0) {
          state_->landed_writes.erase(landed);
          state_->dirty_versions.erase(dirty);
        }
      }
    }
    if (wrote.code() == StatusCode::kStale && !again) {
      // The nodes have no file at the layout's version: the layout predates
      // an offload or a drop, or another client truncated the chunk away.
      // The piece goes where meta's layout says now (the same chunk at its
      // new version, or the chunk meta allocates), once; the version is
      // taken from that layout.
      again = true;
      RETURN_IF_ERROR(client_.layouts().Refresh(*state_, index, 1));
      continue;
    }
    RETURN_IF_ERROR(wrote);
    again = false;
    done += piece;
  }
  return done;
}

Status FileImpl::Flush() {
  if (closed_) return Status::Ok();
  if (passthrough_writer_) {
    std::lock_guard setup(state_->passthrough_mu);
    RETURN_IF_ERROR(SyncPassthrough(/*last=*/false));
  }
  return client_.commits().Commit(*state_, handle(), /*durable=*/false, &seen_lost_commits_);
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
  RETURN_IF_ERROR(client_.replicas().Sync(*state_));
  return client_.commits().Commit(*state_, handle(), /*durable=*/true, &seen_lost_commits_);
}

Result<PassthroughFile> FileImpl::OpenPassthrough(bool write, bool join) {
  if (closed_) return Status(StatusCode::kBadHandle, "file is closed");
  if ((flags_ & O_ACCMODE) == O_RDONLY) write = false;
  if (passthrough_) return Status(StatusCode::kInvalidArgument, "passthrough is already open");
  ASSIGN_OR_RETURN(std::shared_ptr<ChunkFile> file, client_.passthrough().Open(*state_, write, join));
  passthrough_ = true;
  passthrough_writer_ = write;
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
  if (!passthrough_.exchange(false)) return;
  Status st = LeavePassthrough();
  if (!st.ok()) LOG_WARN("inode {}: leaving passthrough: {}", state_->ino, st.ToString());
}

Status FileImpl::LeavePassthrough() {
  std::lock_guard setup(state_->passthrough_mu);
  const bool writer = passthrough_writer_.exchange(false);
  Passthrough::Release rel = Passthrough::Leave(*state_, writer);
  LOG_DEBUG("inode {}: leaves passthrough ({}{}{})", state_->ino, writer ? "writer" : "reader",
            rel.last_writer ? ", last writer" : "", rel.last_open ? ", last open" : "");
  Status st = Status::Ok();
  std::optional<uint64_t> length;  // the chunk file's, when the sync looked
  if (rel.last_writer) {
    st = SyncPassthrough(/*last=*/true, &length);
    if (!st.ok()) length.reset();
    // An unnamed chunk file left empty may go back to the chunk pool
    // (ClientImpl::RecycleChunkFiles), which holds its writer byte as for
    // every prepared file: kept rather than released and taken again.
    if (rel.file && !(length == 0u && rel.file->unnamed())) rel.file->ReleaseWriter();
    Passthrough::Forget(*state_, /*writer_only=*/true);
  }
  if (rel.last_open) {
    // Nobody reads the chunk file as the whole file any more: bytes past the
    // chunk's end were copied to the later chunks (or are zeros a truncate
    // made), so they go.
    if (rel.file && st.ok() && !length) {
      auto now = rel.file->Length();
      if (now.ok()) length = *now;
      st = now.status();
    }
    if (rel.file && st.ok() && *length > state_->chunk_size) {
      // (A reader may be the last: its descriptors are read-only.)
      auto writable = Passthrough::Writable(rel.file);
      st = writable.ok() ? (*writable)->Truncate(state_->chunk_size, 0) : writable.status();
    }
    Passthrough::Forget(*state_, /*writer_only=*/false);
  }
  return st;
}

Status FileImpl::SyncPassthrough(bool last, std::optional<uint64_t>* length_out) {
  InodeState& st = *state_;
  std::shared_ptr<ChunkFile> file;
  {
    std::lock_guard lock(st.mu);
    file = st.passthrough.file;
  }
  if (!file) return Status::Ok();
  std::optional<uint64_t> seen;  // by the note, when a writer still holds the file
  RETURN_IF_ERROR(client_.passthrough().NoteWrites(st, &seen));
  if (!seen) {
    ASSIGN_OR_RETURN(seen, file->Length());
  }
  const uint64_t length = *seen;
  if (length_out != nullptr) *length_out = length;  // neither the move nor a rebuild changes it
  bool move;
  {
    std::lock_guard lock(st.mu);
    move = st.passthrough.overflow_dirty && length > st.chunk_size;
    if (move) st.passthrough.overflow_dirty = false;  // a write during the copy sets it again
  }
  if (move) {
    Status moved = MoveOverflow(*file, length);
    if (!moved.ok()) {
      std::lock_guard lock(st.mu);
      st.passthrough.overflow_dirty = true;
      return moved;
    }
  }
  bool needs_rebuild;
  {
    std::lock_guard lock(st.mu);
    needs_rebuild = st.passthrough.needs_rebuild;
  }
  if (last && !needs_rebuild) {
    // The last writer's note above looks at nothing (no writer holds the
    // file any more): the pending mark goes without a rebuild only when the
    // kernel did not change the file since the last look.
    ASSIGN_OR_RETURN(needs_rebuild, Passthrough::ChangedSinceSeen(st, *file));
  }
  if (last && needs_rebuild) {
    RETURN_IF_ERROR(file->RebuildChecksums(/*clear_pending=*/true));
    client_.passthrough().Count(0, /*rebuilt=*/true);
    std::lock_guard lock(st.mu);
    st.passthrough.needs_rebuild = false;
  } else if (last) {
    RETURN_IF_ERROR(file->ClearChecksumsPending());
  }
  return Status::Ok();
}

Status FileImpl::MoveOverflow(ChunkFile& file, uint64_t length) {
  // Bytes the kernel wrote past the chunk's end belong to the next chunks.
  // The chunk file is the whole file while it is held, so its holes are
  // zeros too: zeroed where a later chunk is allocated (it may hold bytes
  // copied by an earlier sync), skipped where not.
  const uint64_t cs = state_->chunk_size;
  const int fd = file.data_fd();
  AlignedBuffer buf(1 << 20);
  uint64_t moved = 0;
  for (off_t pos = static_cast<off_t>(cs); static_cast<uint64_t>(pos) < length;) {
    off_t data = ::lseek(fd, pos, SEEK_DATA);
    if (data < 0 && errno != ENXIO) return Status::FromErrno(errno, "find data past the passthrough chunk");
    if (data < 0) data = static_cast<off_t>(length);
    if (data > pos) RETURN_IF_ERROR(ZeroRange(static_cast<uint64_t>(pos), static_cast<uint64_t>(data)));
    if (static_cast<uint64_t>(data) >= length) break;
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
  if (moved > 0) {
    LOG_INFO("inode {}: {} written past its {} chunk through passthrough copied to the next chunks", state_->ino,
             FormatByteSize(moved), FormatByteSize(cs));
  }
  client_.passthrough().Count(moved, false);
  return Status::Ok();
}

Status FileImpl::ZeroRange(uint64_t offset, uint64_t end) {
  static const AlignedBuffer zeros = [] {
    AlignedBuffer b(1 << 20);
    std::memset(b.data(), 0, b.size());
    return b;
  }();
  const uint64_t cs = state_->chunk_size;
  for (uint64_t pos = offset; pos < end;) {
    const uint64_t index = pos / cs;
    const uint64_t chunk_end = std::min(end, (index + 1) * cs);
    ASSIGN_OR_RETURN(std::optional<CachedChunk> chunk, client_.layouts().ChunkFor(*state_, index));
    if (!chunk) {
      pos = chunk_end;  // a hole already
      continue;
    }
    size_t n = static_cast<size_t>(std::min<uint64_t>(zeros.size(), chunk_end - pos));
    RETURN_IF_ERROR(WriteAt(pos, std::span<const std::byte>(zeros.data(), n)).status());
    pos += n;
  }
  return Status::Ok();
}

Status FileImpl::Truncate(uint64_t size) {
  if (closed_) return Status(StatusCode::kBadHandle, "file is closed");
  return client_.commits().Truncate(state_->ino, state_.get(), size).status();
}

Status FileImpl::Fallocate(int mode, uint64_t offset, uint64_t length) {
  if (closed_) return Status(StatusCode::kBadHandle, "file is closed");
  if ((flags_ & O_ACCMODE) == O_RDONLY) return Status(StatusCode::kBadHandle, "file is open read-only");
  const uint64_t end = offset + length;
  if (length == 0) return Status(StatusCode::kInvalidArgument, "fallocate of 0 bytes");
  if (end < offset) return Status(StatusCode::kFileTooBig, "fallocate beyond the largest offset");
  const bool keep_size = (mode & FALLOC_FL_KEEP_SIZE) != 0;
  const int kind = mode & ~FALLOC_FL_KEEP_SIZE;
  if (kind != 0 && kind != FALLOC_FL_PUNCH_HOLE && kind != FALLOC_FL_ZERO_RANGE) {
    return Status(StatusCode::kNotSupported, fmt::format("fallocate mode {:#x}", mode));
  }
  if (kind == FALLOC_FL_PUNCH_HOLE && !keep_size) {
    return Status(StatusCode::kNotSupported, "PUNCH_HOLE needs KEEP_SIZE");
  }
  if (passthrough_writer_) {
    if (std::shared_ptr<ChunkFile> held = Passthrough::Held(*state_)) {
      // The held chunk file is the file: the local file system does it (and
      // the kernel reads the result directly).
      RETURN_IF_ERROR(client_.passthrough().NoteWrites(*state_));
      if (::fallocate(held->data_fd(), mode, static_cast<off_t>(offset), static_cast<off_t>(length)) != 0) {
        return Status::FromErrno(errno, "fallocate the passthrough chunk file");
      }
      return client_.passthrough().NoteWrites(*state_);
    }
  }
  uint64_t size;
  {
    std::lock_guard lock(state_->mu);
    size = state_->size;
  }
  if (kind != 0) RETURN_IF_ERROR(ZeroRange(offset, std::min(end, size)));
  // Space is not reserved (chunk files are sparse): mode 0 only extends.
  if (!keep_size && end > size) return Truncate(end);
  return Status::Ok();
}

Status FileImpl::Close() {
  if (closed_.exchange(true)) return Status::Ok();
  Status left = Status::Ok();
  if (passthrough_.exchange(false)) left = LeavePassthrough();
  Status committed =
      client_.commits().Commit(*state_, handle(), /*durable=*/false, &seen_lost_commits_);
  Status released = client_.ReleaseHandle(client_.handles().Remove(handle_));
  if (client_.open_files().Forget(state_)) client_.RecycleChunkFiles(state_);
  if (!left.ok()) return left;
  return committed.ok() ? released : committed;
}

}  // namespace t0fs::client
