#include "mmap_io.h"

#include <errno.h>
#include <fmt/format.h>
#include <setjmp.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>

namespace t0fs::fsx {

namespace {

// The jump target of the copy in progress; null outside GuardedCopy.
sigjmp_buf* g_sigbus_jump = nullptr;

void OnSigbus(int) {
  if (g_sigbus_jump == nullptr) {
    signal(SIGBUS, SIG_DFL);
    raise(SIGBUS);
    return;
  }
  siglongjmp(*g_sigbus_jump, 1);
}

// memcpy that returns false instead of dying when the mapping faults.
bool GuardedCopy(void* dst, const void* src, size_t length) {
  sigjmp_buf jump;
  if (sigsetjmp(jump, 1) != 0) {
    g_sigbus_jump = nullptr;
    return false;
  }
  g_sigbus_jump = &jump;
  std::memcpy(dst, src, length);
  g_sigbus_jump = nullptr;
  return true;
}

const uint64_t kPage = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));

// A mapping of [offset, offset + length) rounded out to pages; unmapped on
// destruction, or by Unmap() which reports munmap's answer.
class Mapping {
 public:
  Mapping(int fd, uint64_t offset, uint64_t length, int prot)
      : start_(offset / kPage * kPage), length_(offset + length - start_) {
    void* p = mmap(nullptr, length_, prot, MAP_SHARED, fd, static_cast<off_t>(start_));
    if (p == MAP_FAILED) {
      error_ = errno;
    } else {
      base_ = static_cast<uint8_t*>(p);
    }
    at_ = base_ == nullptr ? nullptr : base_ + (offset - start_);
  }
  Mapping(const Mapping&) = delete;
  Mapping& operator=(const Mapping&) = delete;
  ~Mapping() { Unmap(); }

  int error() const { return error_; }
  uint8_t* at() const { return at_; }  // the byte at the requested offset
  int Sync() { return msync(base_, length_, MS_SYNC) == 0 ? 0 : errno; }
  int Unmap() {
    if (base_ == nullptr) return 0;
    int rc = munmap(base_, length_);
    base_ = nullptr;
    return rc == 0 ? 0 : errno;
  }

 private:
  uint64_t start_;
  uint64_t length_;
  uint8_t* base_ = nullptr;
  uint8_t* at_ = nullptr;
  int error_ = 0;
};

}  // namespace

void InstallSigbusHandler() {
  struct sigaction action {};
  action.sa_handler = OnSigbus;
  sigemptyset(&action.sa_mask);
  sigaction(SIGBUS, &action, nullptr);
}

std::optional<Failure> MapWrite(int fd, uint64_t offset, std::span<const uint8_t> bytes,
                                bool sync) {
  const std::string what = fmt::format("mapwrite 0x{:x} len 0x{:x}", offset, bytes.size());
  Mapping map(fd, offset, bytes.size(), PROT_READ | PROT_WRITE);
  if (map.error() != 0) return SyscallFailure(what + ": mmap", map.error());
  if (!GuardedCopy(map.at(), bytes.data(), bytes.size())) {
    return Fail(what + ": SIGBUS while storing to the mapping");
  }
  if (sync) {
    if (int err = map.Sync()) return SyscallFailure(what + ": msync", err);
  }
  if (int err = map.Unmap()) return SyscallFailure(what + ": munmap", err);
  return std::nullopt;
}

std::optional<Failure> MapRead(int fd, uint64_t offset, std::span<uint8_t> out) {
  const std::string what = fmt::format("mapread 0x{:x} len 0x{:x}", offset, out.size());
  Mapping map(fd, offset, out.size(), PROT_READ);
  if (map.error() != 0) return SyscallFailure(what + ": mmap", map.error());
  if (!GuardedCopy(out.data(), map.at(), out.size())) {
    return Fail(what + ": SIGBUS while loading from the mapping");
  }
  if (int err = map.Unmap()) return SyscallFailure(what + ": munmap", err);
  return std::nullopt;
}

}  // namespace t0fs::fsx
