#include "fuse/protocol/init.h"

#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "common/buffer.h"
#include "common/config.h"
#include "common/logging.h"
#include "fuse/protocol/reply.h"
#include "fuse/protocol/request.h"

namespace t0fs::fuse {
namespace {

// Without FUSE_MAX_PAGES the kernel caps a request at 32 pages.
constexpr uint32_t kDefaultMaxPages = 32;

InitDecision Refuse(int error, std::string message) {
  InitDecision d;
  d.kind = InitDecision::Kind::kRefuse;
  d.error = error;
  d.message = std::move(message);
  return d;
}

}  // namespace

InitDecision NegotiateInit(std::span<const std::byte> args, const InitOptions& options) {
  abi::InitIn in{};
  if (args.size() < 8) {
    return Refuse(EINVAL, fmt::format("INIT of {} bytes has no version", args.size()));
  }
  std::memcpy(&in, args.data(), std::min(args.size(), sizeof(in)));
  if (in.major < abi::kKernelMajor) {
    return Refuse(EPROTO, fmt::format("kernel FUSE protocol {}.{} is too old (need 7.{}+)",
                                      in.major, in.minor, abi::kMinMinor));
  }
  if (in.major > abi::kKernelMajor) {
    // The kernel speaks a newer major: answer with ours; it sends INIT again.
    InitDecision d;
    d.kind = InitDecision::Kind::kRetry;
    d.out.major = abi::kKernelMajor;
    d.out.minor = abi::kMaxMinor;
    d.info.kernel_major = in.major;
    d.info.kernel_minor = in.minor;
    return d;
  }
  if (args.size() < abi::kInitInCompatSize) {
    return Refuse(EINVAL, fmt::format("INIT of {} bytes is truncated", args.size()));
  }
  if (in.minor < abi::kMinMinor) {
    return Refuse(EPROTO, fmt::format("kernel FUSE protocol 7.{} is too old (need 7.{}+)",
                                      in.minor, abi::kMinMinor));
  }

  uint64_t offered = in.flags;
  // flags2 exists only in the 64-byte INIT of minor 36+ and only with INIT_EXT.
  if ((in.flags & abi::init::kInitExt) != 0 && args.size() >= sizeof(abi::InitIn)) {
    offered |= uint64_t(in.flags2) << 32;
  }
  uint64_t want = options.want;
  if (options.passthrough) want |= abi::init::kPassthrough;
  if (options.io_uring) want |= abi::kOverIoUring;
  uint64_t enabled = offered & want;
  if ((enabled & abi::init::kInitExt) == 0) enabled &= 0xffffffffull;  // nowhere to send flags2

  InitDecision d;
  d.kind = InitDecision::Kind::kAccept;
  NegotiatedInit& info = d.info;
  info.kernel_major = in.major;
  info.kernel_minor = in.minor;
  info.minor = std::min(in.minor, abi::kMaxMinor);
  info.kernel_flags = offered;
  info.flags = enabled;
  info.passthrough_offered = (offered & abi::init::kPassthrough) != 0;
  info.passthrough = (enabled & abi::init::kPassthrough) != 0;
  info.io_uring_offered = (offered & abi::kOverIoUring) != 0;
  info.io_uring = (enabled & abi::kOverIoUring) != 0;
  info.max_readahead = std::min(in.max_readahead, options.max_readahead);
  uint32_t max_write = std::max<uint32_t>(options.max_write, kPageSize);
  if ((enabled & abi::init::kMaxPages) != 0) {
    info.max_pages = std::min<uint32_t>((max_write + kPageSize - 1) / kPageSize, 0xffff);
  } else {
    info.max_pages = kDefaultMaxPages;
    max_write = std::min<uint32_t>(max_write, kDefaultMaxPages * kPageSize);
  }
  info.max_write = max_write;
  info.max_background = options.max_background;

  abi::InitOut& out = d.out;
  out.major = abi::kKernelMajor;
  out.minor = info.minor;
  out.max_readahead = info.max_readahead;
  out.flags = static_cast<uint32_t>(enabled);
  out.flags2 = static_cast<uint32_t>(enabled >> 32);
  out.max_background = options.max_background;
  out.congestion_threshold = static_cast<uint16_t>(options.max_background * 3 / 4);
  out.max_write = max_write;
  out.time_gran = 1;  // timestamps are nanoseconds
  out.max_pages = static_cast<uint16_t>(info.max_pages);
  out.max_stack_depth = info.passthrough ? kPassthroughStackDepth : 0;
  d.out_size = sizeof(abi::InitOut);
  return d;
}

Result<NegotiatedInit> HandshakeInit(int fd, const InitOptions& options,
                                     std::chrono::milliseconds timeout) {
  // Before INIT the kernel's max_write is its default; a buffer this size
  // passes its "room for one WRITE" check whatever it is.
  AlignedBuffer buffer(options.max_write + 2 * kPageSize);
  // A few rounds: a newer-major kernel asks twice; anything before INIT is
  // answered EIO and skipped.
  for (int round = 0; round < 8; ++round) {
    pollfd pfd{fd, POLLIN, 0};
    int ready = ::poll(&pfd, 1, static_cast<int>(timeout.count()));
    if (ready < 0) {
      if (errno == EINTR) continue;
      return Status::FromErrno(errno, "poll /dev/fuse for INIT");
    }
    if (ready == 0) {
      return Status(StatusCode::kRpcTimeout,
                    fmt::format("no INIT from the kernel within {}", FormatDuration({timeout})));
    }
    ssize_t n = ::read(fd, buffer.data(), buffer.size());
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN || errno == ENOENT) continue;
      return Status::FromErrno(errno, "read INIT from /dev/fuse");
    }
    Request req;
    Status parsed = ParseRequest({buffer.data(), size_t(n)}, &req);
    if (!parsed.ok()) {
      if (size_t(n) >= sizeof(abi::InHeader)) Reply(fd, req.unique()).Error(EIO);
      return parsed.WithContext("INIT");
    }
    Reply reply(fd, req.unique());
    if (req.opcode() != uint32_t(abi::Opcode::kInit)) {
      reply.Error(EIO);
      continue;
    }
    InitDecision d = NegotiateInit(req.args, options);
    switch (d.kind) {
      case InitDecision::Kind::kAccept:
        reply.SendBytes(std::as_bytes(std::span(&d.out, 1)).first(d.out_size));
        return d.info;
      case InitDecision::Kind::kRetry:
        LOG_INFO("fuse: kernel offers protocol {}.{}; answering 7.{}", d.info.kernel_major,
                 d.info.kernel_minor, abi::kMaxMinor);
        reply.SendBytes(std::as_bytes(std::span(&d.out, 1)).first(d.out_size));
        continue;
      case InitDecision::Kind::kRefuse:
        reply.Error(d.error);
        return Status(StatusCode::kFuseProtocol, d.message);
    }
  }
  return Status(StatusCode::kFuseProtocol, "INIT negotiation did not converge");
}

std::string DescribeInit(const NegotiatedInit& info) {
  return fmt::format(
      "protocol 7.{} (kernel 7.{}), max_write {}, max_pages {}, max_readahead {}, "
      "max_background {}, passthrough {}; enabled: {}; kernel offered: {}",
      info.minor, info.kernel_minor, FormatByteSize(info.max_write), info.max_pages,
      FormatByteSize(info.max_readahead), info.max_background,
      info.passthrough ? "enabled" : info.passthrough_offered ? "offered (not enabled)" : "not offered",
      abi::FormatInitFlags(info.flags), abi::FormatInitFlags(info.kernel_flags));
}

}  // namespace t0fs::fuse
