// Request: one validated FUSE request as read from /dev/fuse, and ArgReader,
// the bounds-checked decoder of its arguments.
//
// Every length is checked before use: ParseRequest() accepts a buffer only if
// the header's len equals the bytes read and the extensions fit; ArgReader
// fails (returns false) instead of reading past the end, and the op answers
// EINVAL. Nothing here allocates.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string_view>

#include "common/status.h"
#include "fuse/protocol/abi.h"

namespace t0fs::fuse {

struct Request {
  abi::InHeader header{};             // copied out of the read buffer
  std::span<const std::byte> args;    // the opcode's arguments (extensions stripped)
  std::span<std::byte> scratch;       // the worker's reply buffer; handlers may use all of it
  const std::atomic<bool>* interrupted_flag = nullptr;
  uint32_t proto_minor = abi::kMaxMinor;  // negotiated minor

  uint32_t opcode() const { return header.opcode; }
  uint64_t unique() const { return header.unique; }
  uint64_t nodeid() const { return header.nodeid; }
  // True once the kernel sent an INTERRUPT for this request (the caller got a
  // signal). Long handlers poll it between Client calls.
  bool interrupted() const {
    return interrupted_flag != nullptr && interrupted_flag->load(std::memory_order_relaxed);
  }
};

// Validates the framing of `bytes` (exactly what one read() returned) and
// fills `out` (args, header). Errors are kFuseProtocol; when `bytes` holds at
// least a header the caller answers EIO, otherwise it can only drop it.
Status ParseRequest(std::span<const std::byte> bytes, Request* out);

// Sequential, bounds-checked reads from an argument span. Not thread-safe.
class ArgReader {
 public:
  explicit ArgReader(std::span<const std::byte> bytes) : rest_(bytes) {}

  // Copies the next sizeof(T) bytes into *out (no alignment assumed).
  template <typename T>
  bool Read(T* out) {
    if (rest_.size() < sizeof(T)) return false;
    std::memcpy(out, rest_.data(), sizeof(T));
    rest_ = rest_.subspan(sizeof(T));
    return true;
  }
  // A NUL-terminated path component: non-empty, no '/', at most kNameMax.
  bool ReadName(std::string_view* out);
  // A NUL-terminated string (a symlink target, an xattr name): non-empty.
  bool ReadString(std::string_view* out);
  bool ReadBytes(size_t n, std::span<const std::byte>* out);
  std::span<const std::byte> rest() const { return rest_; }

 private:
  std::span<const std::byte> rest_;
};

}  // namespace t0fs::fuse
