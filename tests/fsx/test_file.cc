#include "test_file.h"

#include <errno.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <new>

namespace t0fs::fsx {

UniqueFd& UniqueFd::operator=(UniqueFd&& other) noexcept {
  if (this != &other) {
    Close();
    fd_ = other.Release();
  }
  return *this;
}

UniqueFd::~UniqueFd() {
  Close();
}

int UniqueFd::Release() {
  int fd = fd_;
  fd_ = -1;
  return fd;
}

int UniqueFd::Close() {
  if (fd_ < 0) return 0;
  int rc = ::close(fd_);
  fd_ = -1;
  return rc == 0 ? 0 : errno;
}

AlignedBuffer::AlignedBuffer(uint64_t size) : size_(size) {
  void* p = std::aligned_alloc(4096, std::max<uint64_t>(4096, (size + 4095) / 4096 * 4096));
  if (p == nullptr) throw std::bad_alloc();
  data_.reset(static_cast<uint8_t*>(p));
}

int TestFile::OpenFlags() const {
  return O_RDWR | O_CLOEXEC | (direct() ? O_DIRECT : 0);
}

std::optional<Failure> TestFile::OpenExtra(int extra, UniqueFd& out) const {
  int fd = ::open(path_.c_str(), OpenFlags() | extra, 0644);
  if (fd < 0)
    return SyscallFailure(fmt::format("open({}, 0x{:x})", path_, OpenFlags() | extra), errno);
  out = UniqueFd(fd);
  return std::nullopt;
}

std::optional<Failure> TestFile::OpenMain(bool truncate) {
  return OpenExtra(O_CREAT | (truncate ? O_TRUNC : 0), main_);
}

std::optional<Failure> TestFile::OpenSecond() {
  return OpenExtra(0, second_);
}

std::optional<Failure> TestFile::CloseMain() {
  if (int err = main_.Close()) return SyscallFailure("close(fd0)", err);
  return std::nullopt;
}

std::optional<Failure> TestFile::CloseSecond() {
  if (int err = second_.Close()) return SyscallFailure("close(fd1)", err);
  return std::nullopt;
}

std::optional<Failure> TestFile::ReadRange(int slot, uint64_t offset, uint64_t length,
                                           uint64_t size, std::vector<uint8_t>& out) {
  constexpr uint64_t kPiece = 1 << 20;
  if (!read_buffer_) read_buffer_ = std::make_unique<AlignedBuffer>(kPiece);
  const uint64_t align = direct() ? kDirectAlign : 1;
  const uint64_t start = offset / align * align;
  const uint64_t end = (offset + length + align - 1) / align * align;
  // What a correct file system returns: up to the end of file, not past it.
  const uint64_t expected_end = std::clamp(size, start, end);
  out.clear();
  uint64_t pos = start;
  while (pos < end) {
    const uint64_t piece = std::min(kPiece, end - pos);
    ssize_t n = ::pread(fd(slot), read_buffer_->data(), piece, static_cast<off_t>(pos));
    if (n < 0) {
      return SyscallFailure(
          fmt::format("pread(fd{}, 0x{:x}, len 0x{:x}) [size 0x{:x}]", slot, pos, piece, size),
          errno);
    }
    // Keep what lies inside [offset, offset + length).
    const uint64_t got_end = pos + static_cast<uint64_t>(n);
    const uint64_t keep_from = std::max(pos, offset);
    const uint64_t keep_to = std::min(got_end, offset + length);
    if (keep_to > keep_from) {
      const uint8_t* from = read_buffer_->data() + (keep_from - pos);
      out.insert(out.end(), from, from + (keep_to - keep_from));
    }
    pos = got_end;
    if (static_cast<uint64_t>(n) < piece) break;  // end of file, or a short read checked below
  }
  if (pos < expected_end) {
    return Fail(
        fmt::format("short read: pread(fd{}) of 0x{:x}..0x{:x} stopped at 0x{:x}, before the "
                    "end of file at 0x{:x}",
                    slot, start, end, pos, size));
  }
  if (pos > expected_end) {
    // What came from past the end: zeros (a size gone wrong) or old data (not cut).
    const uint64_t past = std::max(expected_end, offset);
    std::string bytes;
    for (uint64_t idx = past - offset; idx < out.size() && idx < past - offset + 16; ++idx) {
      bytes += fmt::format(" {:02x}", out[idx]);
    }
    return Fail(fmt::format(
        "pread(fd{}) of 0x{:x}..0x{:x} returned data up to 0x{:x}, past the end of file at "
        "0x{:x}{}{}",
        slot, start, end, pos, size, bytes.empty() ? "" : "; bytes from 0x",
        bytes.empty() ? "" : fmt::format("{:x}:{}", past, bytes)));
  }
  return std::nullopt;
}

}  // namespace t0fs::fsx
