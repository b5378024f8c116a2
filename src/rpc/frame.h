// The frame: every RPC message on a TCP or unix socket.
//
//   offset size field
//   0      4    magic        "T0F1" (0x31463054 little-endian)
//   4      2    method       rpc::Method
//   6      2    flags        bit 0: response; other bits must be 0
//   8      8    request_id   echoed in the response
//   16     4    status       response: StatusCode number (0 = ok); request: 0
//   20     4    header_len   bytes of protobuf header (or, on error, UTF-8 message)
//   24     4    payload_len  raw bytes after the header (chunk data)
//   28     4    reserved     must be 0
//
// All integers little-endian. Lengths are checked against FrameLimits before
// anything is allocated (docs/formats/rpc.md has the full grammar).
#pragma once

#include <sys/socket.h>
#include <sys/uio.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "common/fd.h"
#include "common/status.h"
#include "rpc/methods.h"

namespace t0fs::rpc {

inline constexpr uint32_t kFrameMagic = 0x31463054;  // "T0F1"
inline constexpr size_t kFrameHeaderSize = 32;
inline constexpr uint16_t kFlagResponse = 1;

struct FrameLimits {
  uint32_t max_header = 4u << 20;    // protobuf part: layouts and directory pages
  uint32_t max_payload = 17u << 20;  // raw part: one chunk I/O (16 MiB) plus slack
};

struct FrameHeader {
  Method method = Method::kHello;
  uint16_t flags = 0;
  uint64_t request_id = 0;
  uint32_t status = 0;
  uint32_t header_len = 0;
  uint32_t payload_len = 0;

  bool is_response() const { return (flags & kFlagResponse) != 0; }
};

void EncodeFrameHeader(const FrameHeader& h, std::byte out[kFrameHeaderSize]);
// Decodes `in` into `out` and validates magic, flags, reserved and the length
// bounds. `out` is filled even when validation fails, so that an error reply
// can name the request it refuses.
Status DecodeFrameHeader(std::span<const std::byte, kFrameHeaderSize> in, const FrameLimits& limits,
                         FrameHeader* out);

// Descriptors (unix sockets only) travel with SCM_RIGHTS on the first byte
// of a frame: the replies of OpenLocal and PrepareLocal, AdoptLocal's request.
inline constexpr size_t kMaxFrameFds = 64;
// Room for kMaxFrameFds descriptors in a message's control data.
struct FdControl {
  alignas(cmsghdr) char bytes[CMSG_SPACE(sizeof(int) * kMaxFrameFds)];
};
// Puts `fds` (at most kMaxFrameFds) into `msg`'s control data.
void AttachFds(msghdr& msg, std::span<const int> fds, FdControl& control);
// Takes the descriptors a received `msg` carries (closed when `out` is null).
void TakeFds(msghdr& msg, std::vector<UniqueFd>* out);

// After a gather send from parts[first..] sent `n` bytes: the parts sent
// whole are passed over, the one sent in part is trimmed to what is left.
// The index of the first part with bytes left (parts.size() when none).
size_t SkipSent(std::span<iovec> parts, size_t first, size_t n);

// Bytes received ahead of what a reader has taken from a stream. A frame's
// head, header and a small payload are sent in one call and usually arrive
// together: one receive of up to kSize bytes takes them all, where reading
// the head and then the body took two receives (and, in the server, two
// wake-ups of its event loop). A reader takes what is buffered first and
// receives the rest of a large payload straight into its own buffer.
class ReadAhead {
 public:
  static constexpr size_t kSize = 4096;

  size_t size() const { return end_ - begin_; }
  // Moves up to `n` buffered bytes to `out`; how many it moved.
  size_t Take(std::byte* out, size_t n);
  // The free room for the next receive (buffered bytes moved to the
  // front first); then Added(bytes received).
  std::span<std::byte> Room();
  void Added(size_t n) { end_ += n; }

 private:
  std::array<std::byte, kSize> bytes_;
  size_t begin_ = 0;
  size_t end_ = 0;
};

}  // namespace t0fs::rpc
