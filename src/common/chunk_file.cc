#include "common/chunk_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <vector>

#include "common/buffer.h"
#include "common/crc32c.h"
#include "common/io_backend.h"

namespace t0fs {
namespace {

constexpr uint64_t kB = kChunkBlockSize;
constexpr uint64_t kVersionOffset = kChunkVersionOffset;
constexpr uint64_t kFlagsOffset = 32;      // u32 flags
constexpr uint32_t kFlagChecksumsPending = 1;
constexpr uint64_t kWriterByte = 40;       // OFD-locked (shared) by passthrough writers
constexpr uint64_t kKeeperByte = 41;  // OFD-locked (shared) by the data node keeping unnamed files
constexpr uint64_t kWholeFile = UINT64_MAX / kB / 8;  // a block count meaning "to the end"

uint32_t ZeroBlockCrc() {
  static const uint32_t crc = Crc32cOfZeros(kChunkBlockSize);
  return crc;
}

uint64_t CrcOffset(uint64_t block) { return kChunkHeaderSize + block * 4; }

bool Aligned(uint64_t v) { return v % kB == 0; }
bool AlignedPtr(const void* p) { return reinterpret_cast<uintptr_t>(p) % kB == 0; }

// Scratch for unaligned transfers, one per thread, grown on demand.
AlignedBuffer& Scratch(size_t size) {
  thread_local AlignedBuffer buffer;
  buffer.Reserve(size);
  return buffer;
}

template <typename T>
void PutLe(std::byte* out, T v) {
  for (size_t byte = 0; byte < sizeof(T); ++byte) {
    out[byte] = static_cast<std::byte>((static_cast<uint64_t>(v) >> (8 * byte)) & 0xff);
  }
}

template <typename T>
T GetLe(const std::byte* in) {
  uint64_t v = 0;
  for (size_t byte = 0; byte < sizeof(T); ++byte) v |= static_cast<uint64_t>(in[byte]) << (8 * byte);
  return static_cast<T>(v);
}

// An OFD lock on [start, start+len) (len 0: to the end). `wait`: block until
// granted; otherwise false when another open file description holds a
// conflicting lock.
Result<bool> OfdLockRange(int fd, short type, uint64_t start, uint64_t len, bool wait) {
  struct flock fl {};
  fl.l_type = type;
  fl.l_whence = SEEK_SET;
  fl.l_start = static_cast<off_t>(start);
  fl.l_len = static_cast<off_t>(len);
  while (::fcntl(fd, wait ? F_OFD_SETLKW : F_OFD_SETLK, &fl) != 0) {
    if (!wait && (errno == EAGAIN || errno == EACCES)) return false;
    if (errno != EINTR) return Status::FromErrno(errno, "lock chunk checksums");
  }
  return true;
}

Status OfdLock(int fd, short type, uint64_t start, uint64_t len) {
  return OfdLockRange(fd, type, start, len, /*wait=*/true).status();
}

Result<bool> OfdTryLock(int fd, short type, uint64_t start, uint64_t len) {
  return OfdLockRange(fd, type, start, len, /*wait=*/false);
}

// In-process exclusion of overlapping block ranges of one ChunkFile object
// (threads sharing a descriptor do not exclude each other through OFD locks).
// Different objects of the same chunk use different descriptors, so the OFD
// lock serialises them.
struct HeldRange {
  const ChunkFile* file;
  uint64_t first, end;  // blocks [first, end)
  bool operator==(const HeldRange&) const = default;
};
struct RangeTable {
  std::mutex mu;  // guards held
  std::condition_variable cv;
  std::vector<HeldRange> held;
};

RangeTable& TableFor(const ChunkFile* file) {
  // Striped by object address so that ChunkFile stays small.
  static RangeTable tables[64];
  return tables[(reinterpret_cast<uintptr_t>(file) >> 6) % 64];
}

}  // namespace

// Locks blocks [first, first+count): in this process via the range table,
// across processes via an OFD lock on the matching checksum bytes.
class ChunkFile::RangeLock {
 public:
  // `shared`: a reader re-checking a block takes a read lock (its checksum
  // descriptor may be read-only); it still waits for writers of the range.
  RangeLock(ChunkFile* file, uint64_t first, uint64_t count, bool shared = false)
      : file_(file), table_(TableFor(file)), first_(first), end_(first + count) {
    std::unique_lock lock(table_.mu);
    table_.cv.wait(lock, [&] {
      for (const HeldRange& r : table_.held) {
        if (r.file == file_ && r.first < end_ && first_ < r.end) return false;
      }
      return true;
    });
    table_.held.push_back(HeldRange{file_, first_, end_});
    lock.unlock();
    uint64_t len = count >= kWholeFile ? 0 : count * 4;  // 0 = to the end of file
    status_ = OfdLock(file_->crc_.get(), shared ? F_RDLCK : F_WRLCK, CrcOffset(first_), len);
  }
  ~RangeLock() {
    if (status_.ok()) {
      uint64_t len = end_ - first_ >= kWholeFile ? 0 : (end_ - first_) * 4;
      (void)OfdLock(file_->crc_.get(), F_UNLCK, CrcOffset(first_), len);
    }
    std::lock_guard lock(table_.mu);
    auto it = std::find(table_.held.begin(), table_.held.end(), HeldRange{file_, first_, end_});
    if (it != table_.held.end()) table_.held.erase(it);
    table_.cv.notify_all();
  }
  const Status& status() const { return status_; }

 private:
  ChunkFile* file_;
  RangeTable& table_;
  uint64_t first_, end_;
  Status status_;
};

uint32_t BlockChecksum(const std::byte* block, size_t n) {
  uint32_t crc = Crc32c(std::span(block, n));
  if (n < kB) {
    static const std::vector<std::byte> zeros(kChunkBlockSize);
    crc = Crc32c(std::span(zeros.data(), kB - n), crc);
  }
  return crc ^ ZeroBlockCrc();
}

int64_t VerifyBlocks(std::span<const std::byte> bytes, std::string_view crcs) {
  const size_t blocks = (bytes.size() + kB - 1) / kB;
  if (crcs.size() != blocks * 4) return 0;
  for (size_t idx = 0; idx < blocks; ++idx) {
    const size_t start = idx * kB;
    const uint32_t stored =
        GetLe<uint32_t>(reinterpret_cast<const std::byte*>(crcs.data() + idx * 4));
    if (BlockChecksum(bytes.data() + start, std::min<size_t>(kB, bytes.size() - start)) != stored) {
      return static_cast<int64_t>(idx);
    }
  }
  return -1;
}

std::string ChunkDataPath(const std::string& volume_dir, ChunkId chunk) {
  return fmt::format("{}/chunks/{:02x}/{:016x}.dat", volume_dir, chunk.value() & 0xff, chunk.value());
}

std::string ChunkCrcPath(const std::string& volume_dir, ChunkId chunk) {
  return fmt::format("{}/chunks/{:02x}/{:016x}.crc", volume_dir, chunk.value() & 0xff, chunk.value());
}

ChunkFile::ChunkFile(ChunkId chunk, UniqueFd data, UniqueFd crc, bool direct)
    : chunk_(chunk), data_(std::move(data)), crc_(std::move(crc)), direct_(direct) {}

void EncodeChunkCrcHeader(const ChunkCrcHeader& header,
                          std::span<std::byte, kChunkHeaderSize> out) {
  std::memset(out.data(), 0, out.size());
  PutLe<uint32_t>(out.data() + 0, kChunkMagic);
  PutLe<uint32_t>(out.data() + 4, kChunkFormat);
  PutLe<uint32_t>(out.data() + 8, kChunkBlockSize);
  PutLe<uint64_t>(out.data() + 16, header.chunk.value());
  PutLe<uint64_t>(out.data() + kVersionOffset, header.version);
}

Result<ChunkCrcHeader> DecodeChunkCrcHeader(std::span<const std::byte> in) {
  if (in.size() < kChunkHeaderSize || GetLe<uint32_t>(in.data()) != kChunkMagic) {
    return Status(StatusCode::kCorruption, "no t0fs checksum header");
  }
  if (GetLe<uint32_t>(in.data() + 4) != kChunkFormat ||
      GetLe<uint32_t>(in.data() + 8) != kChunkBlockSize) {
    return Status(StatusCode::kCorruption,
                  fmt::format("unsupported chunk format {} (block size {})",
                              GetLe<uint32_t>(in.data() + 4), GetLe<uint32_t>(in.data() + 8)));
  }
  return ChunkCrcHeader{ChunkId(GetLe<uint64_t>(in.data() + 16)),
                        GetLe<uint64_t>(in.data() + kVersionOffset)};
}

Status ChunkFile::InitOrValidate() {
  struct stat st {};
  if (::fstat(crc_.get(), &st) != 0) return Status::FromErrno(errno, "stat checksum file");
  if (static_cast<uint64_t>(st.st_size) < kChunkHeaderSize) {
    std::lock_guard header_lock(header_mu_);  // with the OFD lock: one creator writes the header
    RETURN_IF_ERROR(OfdLock(crc_.get(), F_WRLCK, 0, kChunkHeaderSize));
    Status st2 = Status::Ok();
    if (::fstat(crc_.get(), &st) != 0) {
      st2 = Status::FromErrno(errno, "stat checksum file");
    } else if (static_cast<uint64_t>(st.st_size) < kChunkHeaderSize) {
      std::byte header[kChunkHeaderSize];
      EncodeChunkCrcHeader(ChunkCrcHeader{chunk_, 0}, header);
      st2 = PwriteFull(crc_.get(), header, sizeof header, 0);
    }
    (void)OfdLock(crc_.get(), F_UNLCK, 0, kChunkHeaderSize);
    RETURN_IF_ERROR(st2);
  }
  return ReadHeader();
}

Status ChunkFile::ReadHeader() {
  std::byte header[kChunkHeaderSize];
  ASSIGN_OR_RETURN(size_t n, PreadFull(crc_.get(), header, sizeof header, 0));
  auto decoded = DecodeChunkCrcHeader(std::span<const std::byte>(header, n));
  if (!decoded.ok()) {
    return Status(StatusCode::kCorruption,
                  fmt::format("chunk {}: checksum file: {}", chunk_, decoded.status().message()));
  }
  if (decoded->chunk != chunk_) {
    return Status(
        StatusCode::kCorruption,
        fmt::format("chunk {}: checksum file belongs to chunk {}", chunk_, decoded->chunk));
  }
  uint64_t stored = decoded->version;
  uint64_t cur = version_.load();
  while (stored > cur && !version_.compare_exchange_weak(cur, stored)) {
  }
  return Status::Ok();
}

Result<uint64_t> ChunkFile::Length() const {
  struct stat st {};
  if (::fstat(data_.get(), &st) != 0) return Status::FromErrno(errno, "stat chunk");
  return static_cast<uint64_t>(st.st_size);
}

Status ChunkFile::ReadCrcs(uint64_t first_block, size_t count, uint32_t* out) {
  if (count == 0) return Status::Ok();
  std::vector<std::byte> raw(count * 4);
  ASSIGN_OR_RETURN(size_t n, PreadFull(crc_.get(), raw.data(), raw.size(), CrcOffset(first_block)));
  // Entries past the end of the checksum file are zero: all-zero blocks.
  std::memset(raw.data() + n, 0, raw.size() - n);
  for (size_t idx = 0; idx < count; ++idx) out[idx] = GetLe<uint32_t>(raw.data() + idx * 4);
  return Status::Ok();
}

Result<int64_t> ChunkFile::FindBadBlock(const std::byte* bytes, size_t n, uint64_t first_block,
                                        size_t blocks) {
  uint32_t small[64];
  std::vector<uint32_t> large;
  uint32_t* stored = small;
  if (blocks > 64) {
    large.resize(blocks);
    stored = large.data();
  }
  RETURN_IF_ERROR(ReadCrcs(first_block, blocks, stored));
  for (size_t idx = 0; idx < blocks; ++idx) {
    size_t start = idx * kB;
    size_t valid = start >= n ? 0 : std::min<size_t>(kB, n - start);
    if (BlockChecksum(bytes + start, valid) != stored[idx]) return static_cast<int64_t>(idx);
  }
  return int64_t{-1};
}

Result<size_t> ChunkFile::ReadUnverified(uint64_t offset, std::byte* buf, size_t len) {
  return PreadFull(data_.get(), buf, len, offset);
}

Result<size_t> ChunkFile::ChecksumsFor(uint64_t offset, size_t len, std::string* crcs) {
  if (!Aligned(offset))
    return Status(StatusCode::kInvalidArgument, "checksums of an unaligned read");
  ASSIGN_OR_RETURN(uint64_t length, Length());
  const size_t n =
      offset >= length ? 0 : static_cast<size_t>(std::min<uint64_t>(len, length - offset));
  const size_t blocks = (n + kB - 1) / kB;
  std::vector<uint32_t> stored(blocks);
  RETURN_IF_ERROR(ReadCrcs(offset / kB, blocks, stored.data()));
  const size_t at = crcs->size();
  crcs->resize(at + blocks * 4);
  for (size_t idx = 0; idx < blocks; ++idx) {
    PutLe<uint32_t>(reinterpret_cast<std::byte*>(crcs->data() + at + idx * 4), stored[idx]);
  }
  return n;
}

Result<size_t> ChunkFile::Read(uint64_t offset, std::span<std::byte> buf) {
  if (buf.empty()) return size_t{0};
  const uint64_t first = offset / kB;
  const uint64_t span_start = first * kB;
  const uint64_t span_end = AlignUp(offset + buf.size(), kB);
  const bool in_place = Aligned(offset) && Aligned(buf.size()) && (!direct_ || AlignedPtr(buf.data()));
  std::byte* bytes = in_place ? buf.data() : Scratch(span_end - span_start).data();
  const size_t span_len = in_place ? buf.size() : span_end - span_start;

  ASSIGN_OR_RETURN(size_t n, ReadUnverified(span_start, bytes, span_len));
  ASSIGN_OR_RETURN(int64_t bad, FindBadBlock(bytes, n, first, (n + kB - 1) / kB));
  if (bad >= 0) {
    // A writer may have been between its data and checksum updates: wait for
    // it by taking the range, then look once more before calling it corrupt.
    RangeLock lock(this, first, span_len / kB, /*shared=*/true);
    RETURN_IF_ERROR(lock.status());
    ASSIGN_OR_RETURN(n, ReadUnverified(span_start, bytes, span_len));
    ASSIGN_OR_RETURN(bad, FindBadBlock(bytes, n, first, (n + kB - 1) / kB));
    if (bad >= 0) {
      // Data written through FUSE passthrough is not covered until the
      // writer rebuilds the checksums: return it as it is.
      ASSIGN_OR_RETURN(bool pending, ChecksumsPending());
      if (pending) bad = -1;
    }
    if (bad >= 0) {
      uint64_t block = first + static_cast<uint64_t>(bad);
      return Status(StatusCode::kDataChecksum,
                    fmt::format("chunk {}: checksum mismatch in block {} (bytes {}..{})", chunk_, block,
                                block * kB, (block + 1) * kB));
    }
  }
  size_t skip = offset - span_start;
  size_t avail = n > skip ? std::min<size_t>(n - skip, buf.size()) : 0;
  if (!in_place && avail > 0) std::memcpy(buf.data(), bytes + skip, avail);
  return avail;
}

Status ChunkFile::Write(uint64_t offset, std::span<const std::byte> data, uint64_t version) {
  if (!data.empty()) {
    const uint64_t first = offset / kB;
    const uint64_t count = (offset + data.size() - 1) / kB - first + 1;
    RangeLock lock(this, first, count);
    RETURN_IF_ERROR(lock.status());
    RETURN_IF_ERROR(WriteLocked(offset, data));
  }
  return RecordVersion(version);
}

Status ChunkFile::WriteLocked(uint64_t offset, std::span<const std::byte> data) {
  const uint64_t first = offset / kB;
  const uint64_t end = offset + data.size();
  const uint64_t span_start = first * kB;
  const uint64_t span_end = AlignUp(end, kB);
  const size_t blocks = (span_end - span_start) / kB;
  std::vector<std::byte> crc_bytes(blocks * 4);

  const bool whole_blocks = Aligned(offset) && Aligned(data.size());
  if (whole_blocks && (!direct_ || AlignedPtr(data.data()))) {
    for (size_t idx = 0; idx < blocks; ++idx) {
      PutLe<uint32_t>(crc_bytes.data() + idx * 4, BlockChecksum(data.data() + idx * kB, kB));
    }
    RETURN_IF_ERROR(PwriteFull(data_.get(), data.data(), data.size(), offset));
  } else {
    // Read-modify-write of the edge blocks in an aligned scratch span.
    ASSIGN_OR_RETURN(uint64_t length, Length());
    std::byte* scratch = Scratch(span_end - span_start).data();
    std::memset(scratch, 0, span_end - span_start);
    if (!whole_blocks) {
      // Only the edge blocks hold bytes this write does not replace.
      if (!Aligned(offset)) {
        ASSIGN_OR_RETURN(size_t got, ReadUnverified(span_start, scratch, kB));
        (void)got;
      }
      uint64_t tail_start = span_end - kB;
      if (!Aligned(end) && (tail_start != span_start || Aligned(offset))) {
        ASSIGN_OR_RETURN(size_t got, ReadUnverified(tail_start, scratch + (tail_start - span_start), kB));
        (void)got;
      }
    }
    std::memcpy(scratch + (offset - span_start), data.data(), data.size());
    const uint64_t new_length = std::max(length, end);
    for (size_t idx = 0; idx < blocks; ++idx) {
      uint64_t block_start = span_start + idx * kB;
      size_t valid = block_start >= new_length ? 0 : std::min<uint64_t>(kB, new_length - block_start);
      PutLe<uint32_t>(crc_bytes.data() + idx * 4, BlockChecksum(scratch + idx * kB, valid));
    }
    if (direct_) {
      // O_DIRECT moves whole aligned blocks; trim the tail back afterwards.
      RETURN_IF_ERROR(PwriteFull(data_.get(), scratch, span_end - span_start, span_start));
      if (span_end > new_length && ::ftruncate(data_.get(), static_cast<off_t>(new_length)) != 0) {
        return Status::FromErrno(errno, fmt::format("chunk {}: truncate after direct write", chunk_));
      }
    } else {
      RETURN_IF_ERROR(PwriteFull(data_.get(), data.data(), data.size(), offset));
    }
  }
  Status st = PwriteFull(crc_.get(), crc_bytes.data(), crc_bytes.size(), CrcOffset(first));
  return st.WithContext(fmt::format("chunk {}: write checksums", chunk_));
}

Status ChunkFile::RecordVersion(uint64_t version) {
  if (version <= version_.load()) return Status::Ok();
  std::lock_guard header_lock(header_mu_);
  RETURN_IF_ERROR(OfdLock(crc_.get(), F_WRLCK, kVersionOffset, 8));
  std::byte raw[8];
  Status st = Status::Ok();
  auto n = PreadFull(crc_.get(), raw, sizeof raw, kVersionOffset);
  if (!n.ok()) {
    st = n.status();
  } else {
    uint64_t stored = *n == 8 ? GetLe<uint64_t>(raw) : 0;
    if (version > stored) {
      PutLe<uint64_t>(raw, version);
      st = PwriteFull(crc_.get(), raw, sizeof raw, kVersionOffset);
    }
    uint64_t best = std::max(stored, version);
    uint64_t cur = version_.load();
    while (best > cur && !version_.compare_exchange_weak(cur, best)) {
    }
  }
  (void)OfdLock(crc_.get(), F_UNLCK, kVersionOffset, 8);
  return st;
}

Status ChunkFile::Truncate(uint64_t length, uint64_t version) {
  {
    const uint64_t first = length / kB;
    RangeLock lock(this, first, kWholeFile);
    RETURN_IF_ERROR(lock.status());
    if (::ftruncate(data_.get(), static_cast<off_t>(length)) != 0) {
      return Status::FromErrno(errno, fmt::format("chunk {}: truncate", chunk_));
    }
    const uint64_t blocks = (length + kB - 1) / kB;
    if (::ftruncate(crc_.get(), static_cast<off_t>(CrcOffset(blocks))) != 0) {
      return Status::FromErrno(errno, fmt::format("chunk {}: truncate checksums", chunk_));
    }
    if (!Aligned(length)) {
      std::byte* scratch = Scratch(kB).data();
      ASSIGN_OR_RETURN(size_t n, ReadUnverified(first * kB, scratch, kB));
      std::byte raw[4];
      PutLe<uint32_t>(raw, BlockChecksum(scratch, n));
      RETURN_IF_ERROR(PwriteFull(crc_.get(), raw, sizeof raw, CrcOffset(first)));
    }
  }
  return RecordVersion(version);
}

Status ChunkFile::MarkChecksumsPending() {
  std::lock_guard header_lock(header_mu_);
  RETURN_IF_ERROR(OfdLock(crc_.get(), F_WRLCK, kFlagsOffset, 4));
  std::byte raw[4];
  PutLe<uint32_t>(raw, kFlagChecksumsPending);
  Status st = PwriteFull(crc_.get(), raw, sizeof raw, kFlagsOffset);
  (void)OfdLock(crc_.get(), F_UNLCK, kFlagsOffset, 4);
  return st.WithContext(fmt::format("chunk {}: mark checksums pending", chunk_));
}

Result<bool> ChunkFile::ChecksumsPending() {
  std::byte raw[4];
  ASSIGN_OR_RETURN(size_t n, PreadFull(crc_.get(), raw, sizeof raw, kFlagsOffset));
  return n == sizeof raw && (GetLe<uint32_t>(raw) & kFlagChecksumsPending) != 0;
}

Result<size_t> ChunkFile::ReadSparingCache(uint64_t offset, std::byte* buf, size_t len) {
  // A rebuild runs when the kernel's release of a passthrough writer arrives,
  // after close() returned: it must leave the page cache as it found it (a
  // benchmark that dropped the caches in between must not find the file
  // cached again, and a large checkpoint must not evict what others cache).
  // A range wholly cached is read from the cache; any other goes around it by
  // O_DIRECT through a descriptor of its own (a buffered read, even with
  // RWF_NOWAIT, reads ahead into the cache). mincore() of a mapping says
  // which pages are cached without reading any.
  if (direct_ || !Aligned(offset) || !AlignedPtr(buf)) return ReadUnverified(offset, buf, len);
  bool cached = false;
  if (void* addr =
          ::mmap(nullptr, len, PROT_READ, MAP_SHARED, data_.get(), static_cast<off_t>(offset));
      addr != MAP_FAILED) {
    const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
    std::vector<unsigned char> pages((len + page - 1) / page);
    cached = ::mincore(addr, len, pages.data()) == 0 &&
             std::all_of(pages.begin(), pages.end(), [](unsigned char v) { return (v & 1) != 0; });
    ::munmap(addr, len);
  }
  if (!cached) {
    UniqueFd direct(::open(fmt::format("/proc/self/fd/{}", data_.get()).c_str(),
                           O_RDONLY | O_DIRECT | O_CLOEXEC));
    if (direct.valid()) {
      auto n = PreadFull(direct.get(), buf, AlignUp(len, kB), offset);
      if (n.ok()) return std::min(*n, len);
    }
  }
  return ReadUnverified(offset, buf, len);
}

Status ChunkFile::RebuildChecksums(bool clear_pending) {
  constexpr size_t kPiece = 1 << 20;
  {
    RangeLock lock(this, 0, kWholeFile);  // excludes writers through this class
    RETURN_IF_ERROR(lock.status());
    ASSIGN_OR_RETURN(uint64_t length, Length());
    AlignedBuffer buf(kPiece);
    std::vector<std::byte> crcs(kPiece / kB * 4);
    for (uint64_t offset = 0; offset < length; offset += kPiece) {
      size_t want = static_cast<size_t>(std::min<uint64_t>(kPiece, AlignUp(length - offset, kB)));
      ASSIGN_OR_RETURN(size_t n, ReadSparingCache(offset, buf.data(), want));
      size_t blocks = (n + kB - 1) / kB;
      for (size_t idx = 0; idx < blocks; ++idx) {
        size_t valid = std::min<size_t>(kB, n - idx * kB);
        PutLe<uint32_t>(crcs.data() + idx * 4, BlockChecksum(buf.data() + idx * kB, valid));
      }
      RETURN_IF_ERROR(PwriteFull(crc_.get(), crcs.data(), blocks * 4, CrcOffset(offset / kB)));
      if (n < want) {
        length = offset + n;  // shortened meanwhile (truncate)
        break;
      }
    }
    if (::ftruncate(crc_.get(), static_cast<off_t>(CrcOffset((length + kB - 1) / kB))) != 0) {
      return Status::FromErrno(errno, fmt::format("chunk {}: truncate checksums", chunk_));
    }
  }
  return clear_pending ? ClearChecksumsPending() : Status::Ok();
}

Status ChunkFile::ClearChecksumsPending() {
  std::lock_guard header_lock(header_mu_);
  RETURN_IF_ERROR(OfdLock(crc_.get(), F_WRLCK, kFlagsOffset, 4));
  std::byte raw[4] = {};
  Status st = PwriteFull(crc_.get(), raw, sizeof raw, kFlagsOffset);
  (void)OfdLock(crc_.get(), F_UNLCK, kFlagsOffset, 4);
  return st.WithContext(fmt::format("chunk {}: clear checksums pending", chunk_));
}

Status ChunkFile::HoldWriter() {
  RETURN_IF_ERROR(OfdLock(crc_.get(), F_RDLCK, kWriterByte, 1));
  holds_writer_.store(true);
  return Status::Ok();
}

void ChunkFile::ReleaseWriter() {
  holds_writer_.store(false);
  (void)OfdLock(crc_.get(), F_UNLCK, kWriterByte, 1);
}

Result<bool> ChunkFile::HeldElsewhere(uint64_t byte) {
  ASSIGN_OR_RETURN(bool free, OfdTryLock(crc_.get(), F_WRLCK, byte, 1));
  if (free) (void)OfdLock(crc_.get(), F_UNLCK, byte, 1);
  return !free;
}

Result<bool> ChunkFile::WriterAlive() {
  return HeldElsewhere(kWriterByte);
}

Status ChunkFile::HoldKeeper() {
  return OfdLock(crc_.get(), F_RDLCK, kKeeperByte, 1);
}

Result<bool> ChunkFile::KeeperAlive() {
  return HeldElsewhere(kKeeperByte);
}

Result<bool> ChunkFile::RebuildIfAbandoned() {
  ASSIGN_OR_RETURN(bool pending, ChecksumsPending());
  if (!pending) return false;
  ASSIGN_OR_RETURN(bool free, OfdTryLock(crc_.get(), F_WRLCK, kWriterByte, 1));
  if (!free) return false;  // a passthrough writer is alive
  Status st = RebuildChecksums(/*clear_pending=*/true);
  (void)OfdLock(crc_.get(), F_UNLCK, kWriterByte, 1);
  RETURN_IF_ERROR(st);
  return true;
}

Status ChunkFile::Sync() {
  if (::fdatasync(data_.get()) != 0) return Status::FromErrno(errno, fmt::format("chunk {}: fdatasync", chunk_));
  if (::fdatasync(crc_.get()) != 0) return Status::FromErrno(errno, fmt::format("chunk {}: fdatasync checksums", chunk_));
  return Status::Ok();
}

Status ChunkFile::VerifyAll() {
  constexpr size_t kPiece = 1 << 20;
  AlignedBuffer buf(kPiece);
  for (uint64_t offset = 0;; offset += kPiece) {
    ASSIGN_OR_RETURN(size_t n, Read(offset, buf.span()));
    if (n < kPiece) return Status::Ok();
  }
}

}  // namespace t0fs
