#include "client/passthrough.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>

#include "common/logging.h"

namespace t0fs::client {
namespace {

Result<struct stat> StatChunkData(const ChunkFile& file) {
  struct stat sb {};
  if (::fstat(file.data_fd(), &sb) != 0) return Status::FromErrno(errno, "stat the passthrough chunk file");
  return sb;
}

Timespec CtimeOf(const struct stat& sb) { return {sb.st_ctim.tv_sec, static_cast<uint32_t>(sb.st_ctim.tv_nsec)}; }

// The chunk file differs from what the last note saw (caller holds st.mu).
bool DiffersFromSeen(const InodeState& st, const struct stat& sb) {
  return st.passthrough.seen_size != static_cast<int64_t>(sb.st_size) || !(st.passthrough.seen_ctime == CtimeOf(sb));
}

}  // namespace

PassthroughVerdict PassthroughEligibility(const LayoutInfo& layout, NodeId node) {
  PassthroughVerdict v;
  if (layout.chunk_size == 0) {
    v.reason = "not a regular file";
    return v;
  }
  const uint64_t chunks = (layout.size + layout.chunk_size - 1) / layout.chunk_size;
  if (chunks > 1 || layout.chunks.size() > 1) {
    v.reason = fmt::format("the data spans {} chunks of {} (passthrough needs one)",
                           std::max<uint64_t>(chunks, layout.chunks.size()), FormatByteSize(layout.chunk_size));
    return v;
  }
  if (layout.chunks.empty() || layout.chunks.front().index != 0) {
    v.reason = layout.size == 0 ? "no data yet (a writer on a node chosen by placement=local qualifies)"
                                : "the file is a hole (no chunk holds data)";
    return v;
  }
  const ChunkInfo& c = layout.chunks.front();
  const ReplicaInfo* local = nullptr;
  for (const ReplicaInfo& r : c.replicas) {
    if (r.node == node && node.valid()) local = &r;
  }
  if (local == nullptr) {
    v.reason = node.valid() ? fmt::format("no replica on node {}", node) : "this host is not a data node";
    return v;
  }
  if (local->state == ReplicaState::kOffloaded) {
    v.reason = fmt::format(
        "the replica on node {} is offloaded (keep-local): reads go to the object tier or the "
        "cells, a write stages it back",
        node);
    return v;
  }
  if (local->state != ReplicaState::kHealthy) {
    v.reason = fmt::format("the replica on node {} is not healthy (being repaired)", node);
    return v;
  }
  if (c.replicas.size() == 1) {
    v.mode = PassthroughMode::kReadWrite;
    v.reason = fmt::format("reads and writes (one chunk, its only replica is on node {})", node);
  } else {
    v.mode = PassthroughMode::kRead;
    v.reason = fmt::format("reads only (writes must reach {} replicas through the mount)", c.replicas.size());
  }
  return v;
}

std::shared_ptr<ChunkFile> Passthrough::Held(InodeState& st) {
  std::lock_guard lock(st.mu);
  return st.passthrough.opens > 0 ? st.passthrough.file : nullptr;
}

Result<std::shared_ptr<ChunkFile>> Passthrough::Open(InodeState& st, bool write, bool join) {
  // Not eligible: the caller serves the file itself; but an open that must
  // join the kernel's backing and cannot is refused (kBusy).
  auto no = [join](std::string why) {
    return Status(join ? StatusCode::kBusy : StatusCode::kNotSupported, std::move(why));
  };
  if (!local_bypass_) return no("the local bypass is off");
  if (std::shared_ptr<ChunkFile> held = Held(st); held && join) {
    // The kernel serves this inode from `held` already: join that very file
    // (whatever the layout says now); a writer only if no other replica must
    // receive its writes.
    if (write) {
      ASSIGN_OR_RETURN(std::optional<CachedChunk> chunk, layouts_.ChunkFor(st, 0));
      if (!chunk) return no(fmt::format("inode {}: chunk 0 left the layout (truncated by another client)", st.ino));
      if (chunk->info.replicas.size() > 1) {
        return Status(StatusCode::kBusy,
                      fmt::format("inode {} is read through passthrough on this node and has {} replicas: it "
                                  "cannot be opened for writing here until those readers close",
                                  st.ino, chunk->info.replicas.size()));
      }
      // Readers held it through read-only descriptors: the writer needs
      // writable ones of the same file (the kernel reopens it by path).
      const ReplicaInfo& local = chunk->info.replicas.front();
      if (!replicas_.IsLocal(local)) return no(fmt::format("inode {}: chunk 0 moved off this node", st.ino));
      ASSIGN_OR_RETURN(std::shared_ptr<ChunkFile> writable,
                       replicas_.LocalFile(st, local, chunk->cap, /*for_write=*/true, /*direct=*/false,
                                           /*retry=*/false));
      struct stat a {}, b {};
      if (::fstat(writable->data_fd(), &a) != 0 || ::fstat(held->data_fd(), &b) != 0 || a.st_ino != b.st_ino ||
          a.st_dev != b.st_dev) {
        return no(fmt::format("inode {}: the chunk file changed under the passthrough readers", st.ino));
      }
      RETURN_IF_ERROR(Hold(st, writable, write));
      std::lock_guard lock(st.mu);
      st.passthrough.file = writable;
      return writable;
    }
    RETURN_IF_ERROR(Hold(st, held, write));
    return held;
  }
  uint64_t size;
  {
    std::lock_guard lock(st.mu);
    size = st.size;
  }
  ASSIGN_OR_RETURN(std::optional<CachedChunk> chunk, layouts_.ChunkFor(st, 0));
  if (!chunk && write && size == 0) {
    ASSIGN_OR_RETURN(CachedChunk fresh, layouts_.Allocate(st, 0, /*streaming=*/false));
    chunk = fresh;
  }
  LayoutInfo layout;
  layout.chunk_size = st.chunk_size;
  layout.size = size;
  {
    std::lock_guard lock(st.mu);
    for (const auto& [index, cached] : st.layout) layout.chunks.push_back(cached.info);
  }
  PassthroughVerdict verdict = PassthroughEligibility(layout, meta_.local_node());
  const bool eligible = write ? verdict.mode == PassthroughMode::kReadWrite : verdict.mode != PassthroughMode::kNone;
  if (!eligible) return no(verdict.reason);
  const ReplicaInfo* local = nullptr;
  for (const ReplicaInfo& r : chunk->info.replicas) {
    if (replicas_.IsLocal(r)) local = &r;
  }
  if (local == nullptr) return no("no local replica");
  // A chunk never written (a new file) may get unnamed files: a file
  // nobody writes to then costs the data node no directory entries.
  auto opened =
      replicas_.LocalFile(st, *local, chunk->cap, write, /*direct=*/false, /*retry=*/false,
                          /*lazy=*/write && local->version == 0);
  // No file at the layout's version on this node (a stale layout, or a lost
  // file): the normal path reports it and asks meta again.
  if (opened.status().code() == StatusCode::kStale) return no(opened.status().message());
  ASSIGN_OR_RETURN(std::shared_ptr<ChunkFile> file, std::move(opened));
  if (!file) return no("the local replica holds no data yet");
  if (file->version() < local->version) RETURN_IF_ERROR(file->ReadHeader());
  if (file->version() < local->version) return no("the local replica is stale");
  ASSIGN_OR_RETURN(struct stat sb, StatChunkData(*file));
  const struct stat* seen = &sb;
  const uint64_t length = static_cast<uint64_t>(sb.st_size);
  if (length != size) {
    // The chunk file must be the file byte for byte: the kernel reads it to
    // its end. A writer makes it so (bytes past the size are not committed
    // data; a size beyond it is a hole); a reader takes the normal path.
    if (!write) return no(fmt::format("the local chunk file holds {} bytes, the file {}", length, size));
    RETURN_IF_ERROR(file->Truncate(size, 0));
    seen = nullptr;
  }
  RETURN_IF_ERROR(Hold(st, file, write, seen));
  return file;
}

Status Passthrough::Hold(InodeState& st, const std::shared_ptr<ChunkFile>& file, bool write,
                         const struct stat* seen) {
  std::lock_guard setup(st.passthrough_mu);
  bool first_writer;
  {
    std::lock_guard lock(st.mu);
    first_writer = write && st.passthrough.writers == 0;
  }
  struct stat empty {};
  bool starts_empty = false;
  if (first_writer) {
    // Before the kernel can write: checksums stop being enforced, and the
    // writer byte tells the scrubber someone is alive.
    RETURN_IF_ERROR(file->MarkChecksumsPending());
    if (!file->holds_writer()) RETURN_IF_ERROR(file->HoldWriter());  // a prepared chunk's is held already
    // An empty chunk file (a new file) changes size at the kernel's first
    // write, so a close without writes needs no commit. Any other starts as
    // written: an overwrite of the same size may keep the ctime on kernels
    // without fine-grained timestamps.
    if (seen != nullptr) {
      empty = *seen;  // the caller's, taken after its last change of the file
    } else {
      ASSIGN_OR_RETURN(empty, StatChunkData(*file));
    }
    starts_empty = empty.st_size == 0;
  }
  std::lock_guard lock(st.mu);
  LOG_DEBUG("inode {}: {} joins passthrough ({} open, {} writers before)", st.ino, write ? "writer" : "reader",
            st.passthrough.opens, st.passthrough.writers);
  // The held file is a writer's once one holds it: a reader that got in
  // first (two opens racing past Held) holds read-only descriptors, and the
  // notes and rebuilds of the kernel's writes need ones that can write.
  if (st.passthrough.opens++ == 0 || first_writer) st.passthrough.file = file;
  if (write && st.passthrough.writers++ == 0) {
    st.passthrough.seen_size = starts_empty ? 0 : -1;
    st.passthrough.seen_ctime = starts_empty ? CtimeOf(empty) : Timespec{};
  }
  stats_.passthrough_opens++;
  return Status::Ok();
}

Passthrough::Release Passthrough::Leave(InodeState& st, bool write) {
  std::lock_guard lock(st.mu);
  Release out;
  out.file = st.passthrough.file;
  out.last_writer = write && --st.passthrough.writers == 0;
  out.last_open = --st.passthrough.opens == 0;
  return out;
}

void Passthrough::Forget(InodeState& st, bool writer_only) {
  std::lock_guard lock(st.mu);
  InodeState::Passthrough& pt = st.passthrough;
  pt.seen_size = -1;
  pt.seen_ctime = Timespec{};
  pt.needs_rebuild = false;
  pt.overflow_dirty = false;
  if (!writer_only) pt = InodeState::Passthrough{};
}

Status Passthrough::NoteWrites(InodeState& st, std::optional<uint64_t>* length) {
  std::shared_ptr<ChunkFile> file;
  {
    std::lock_guard lock(st.mu);
    if (st.passthrough.writers > 0) file = st.passthrough.file;
  }
  if (!file) return Status::Ok();
  ASSIGN_OR_RETURN(struct stat before, StatChunkData(*file));
  if (length != nullptr) *length = static_cast<uint64_t>(before.st_size);
  {
    std::lock_guard lock(st.mu);
    if (!DiffersFromSeen(st, before)) return Status::Ok();
    // Its checksums are rebuilt at the last writer's close, also when the
    // writes cannot be recorded below (their chunk left the layout).
    st.passthrough.needs_rebuild = true;
  }
  // The kernel wrote (or may have): a write of this session to chunk 0,
  // with the chunk file's size and mtime.
  ASSIGN_OR_RETURN(std::optional<CachedChunk> chunk, layouts_.ChunkFor(st, 0));
  // Chunk 0 may be another chunk by now (truncated away by another client
  // and allocated again): its version is not this file's to record.
  if (!chunk || chunk->info.replicas.empty() ||
      chunk->info.replicas.front().chunk != file->chunk()) {
    return Status(StatusCode::kIoError,
                  fmt::format("inode {}: the chunk written through passthrough left the layout (truncated or "
                              "removed by another client meanwhile)", st.ino));
  }
  const ChunkId id = chunk->info.replicas.front().chunk;
  uint64_t version;
  {
    std::lock_guard lock(st.mu);
    version = st.dirty_versions.emplace(id, CommittedVersion(chunk->info) + 1).first->second;
  }
  RETURN_IF_ERROR(file->SetVersion(version));
  ASSIGN_OR_RETURN(struct stat after, StatChunkData(*file));
  if (length != nullptr) *length = static_cast<uint64_t>(after.st_size);
  std::lock_guard lock(st.mu);
  // The chunk file is the file (InodeState::Passthrough): its length is the
  // size, also when it shrank (a truncate this client made).
  st.size = static_cast<uint64_t>(before.st_size);
  st.written_nodes[id] = {meta_.local_node()};
  st.unsynced[id] = 0;
  st.write_generation++;
  st.last_write = Timespec{before.st_mtim.tv_sec, static_cast<uint32_t>(before.st_mtim.tv_nsec)};
  st.passthrough.seen_size = static_cast<int64_t>(after.st_size);
  st.passthrough.seen_ctime = CtimeOf(after);
  st.passthrough.needs_rebuild = true;
  st.passthrough.overflow_dirty = true;
  return Status::Ok();
}

Result<bool> Passthrough::ChangedSinceSeen(InodeState& st, ChunkFile& file) {
  ASSIGN_OR_RETURN(struct stat now, StatChunkData(file));
  std::lock_guard lock(st.mu);
  return DiffersFromSeen(st, now);
}

void Passthrough::Count(uint64_t overflow_bytes, bool rebuilt) {
  stats_.passthrough_overflow_bytes += overflow_bytes;
  if (rebuilt) stats_.passthrough_rebuilds++;
}

Result<std::shared_ptr<ChunkFile>> Passthrough::Writable(std::shared_ptr<ChunkFile> held) {
  auto writable = [](int fd) {
    const int flags = ::fcntl(fd, F_GETFL);
    return flags >= 0 && (flags & O_ACCMODE) == O_RDWR;
  };
  if (writable(held->data_fd()) && writable(held->crc_fd())) return held;
  auto reopen = [&](int fd) -> Result<UniqueFd> {
    UniqueFd again(::open(fmt::format("/proc/self/fd/{}", fd).c_str(), O_RDWR | O_CLOEXEC));
    if (!again.valid()) {
      return Status::FromErrno(
          errno,
          fmt::format("chunk {}: open the passthrough readers' file for writing", held->chunk()));
    }
    return again;
  };
  ASSIGN_OR_RETURN(UniqueFd data, reopen(held->data_fd()));
  ASSIGN_OR_RETURN(UniqueFd crc, reopen(held->crc_fd()));
  auto file =
      std::make_shared<ChunkFile>(held->chunk(), std::move(data), std::move(crc), /*direct=*/false);
  RETURN_IF_ERROR(file->ReadHeader());
  return file;
}

}  // namespace t0fs::client
