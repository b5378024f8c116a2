#include "client/file_impl.h"

#include <fcntl.h>

#include <cstring>

#include <fmt/format.h>

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
  return client_.Commit(*state_, handle_, /*durable=*/false);
}

Status FileImpl::Fsync(bool /*datasync*/) {
  if (closed_) return Status(StatusCode::kBadHandle, "file is closed");
  RETURN_IF_ERROR(client_.SyncReplicas(*state_));
  return client_.Commit(*state_, handle_, /*durable=*/true);
}

Status FileImpl::Truncate(uint64_t size) {
  if (closed_) return Status(StatusCode::kBadHandle, "file is closed");
  return client_.Truncate(state_->ino, state_.get(), size).status();
}

Status FileImpl::Close() {
  if (closed_.exchange(true)) return Status::Ok();
  Status committed = client_.Commit(*state_, handle_, /*durable=*/false);
  Status released = client_.ReleaseHandle(handle_);
  client_.Forget(state_);
  return committed.ok() ? released : committed;
}

}  // namespace t0fs::client
