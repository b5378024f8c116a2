// INIT negotiation: the first request of every FUSE connection.
//
// NegotiateInit() is a pure function from the kernel's INIT arguments to our
// reply (tested against fake kernels); HandshakeInit() reads INIT from the
// device, answers it, and returns what was agreed. docs/fuse.md explains
// each flag we ask for and each we decline.
#pragma once

#include <chrono>
#include <cstdint>
#include <span>
#include <string>

#include "common/status.h"
#include "fuse/protocol/abi.h"
#include "fuse/protocol/uring_abi.h"

namespace t0fs::fuse {

// The flags t0fs asks for (each enabled only if the kernel offers it).
// AUTO_INVAL_DATA: a read through the page cache first refreshes attributes
// that are out of date (an OPEN marks them so: close-to-open for the size,
// docs/fuse.md); without it the kernel reads up to the size it cached.
inline constexpr uint64_t kWantedInitFlags =
    abi::init::kAsyncRead | abi::init::kBigWrites | abi::init::kAtomicOTrunc |
    abi::init::kParallelDirops | abi::init::kMaxPages | abi::init::kDoReaddirplus |
    abi::init::kReaddirplusAuto | abi::init::kCacheSymlinks | abi::init::kInitExt |
    abi::init::kAsyncDio | abi::init::kHandleKillprivV2 | abi::init::kAutoInvalData;

struct InitOptions {
  uint32_t max_write = 1u << 20;      // bytes per WRITE request
  uint32_t max_readahead = 1u << 20;  // cap on the kernel's offer
  uint16_t max_background = 64;       // async requests (readahead, AIO) in flight
  uint64_t want = kWantedInitFlags;
  // Ask for FUSE_PASSTHROUGH (kernel >= 6.9): open files served by the kernel
  // from a backing file. Registering one needs CAP_SYS_ADMIN.
  bool passthrough = false;
  // Ask for FUSE_OVER_IO_URING (Linux 6.14+, offered only with the fuse
  // module's enable_uring parameter on): requests then come through io_uring
  // queues (uring.h) once they are registered.
  bool io_uring = false;
};

// How deep the file systems under a passthrough backing file may be stacked
// (1 = ext4/xfs directly; 2 also allows volumes on overlayfs, as in containers).
inline constexpr uint32_t kPassthroughStackDepth = 2;

// What INIT agreed on (FuseServer::info()).
struct NegotiatedInit {
  uint32_t kernel_major = 0;
  uint32_t kernel_minor = 0;
  uint32_t minor = 0;         // protocol minor in use: min(kernel's, abi::kMaxMinor)
  uint64_t kernel_flags = 0;  // everything the kernel offered (flags | flags2 << 32)
  uint64_t flags = 0;         // what we enabled
  uint32_t max_write = 0;
  uint32_t max_readahead = 0;
  uint32_t max_pages = 0;
  uint32_t max_background = 0;
  bool passthrough_offered = false;  // kernel offered FUSE_PASSTHROUGH
  bool passthrough = false;          // ... and we enabled it
  bool io_uring_offered = false;     // kernel offered FUSE_OVER_IO_URING
  bool io_uring = false;             // ... and we enabled it
};

struct InitDecision {
  enum class Kind {
    kAccept,  // send `out`; the session is up
    kRetry,   // kernel major > ours: send `out` (our major) and wait for another INIT
    kRefuse,  // answer `error`; the mount fails
  };
  Kind kind = Kind::kRefuse;
  abi::InitOut out{};
  size_t out_size = sizeof(abi::InitOut);
  int error = 0;
  std::string message;  // why, for kRefuse
  NegotiatedInit info;
};

// `args` are the INIT arguments after the header.
InitDecision NegotiateInit(std::span<const std::byte> args, const InitOptions& options);

// Waits up to `timeout` for INIT on `fd`, answers it, returns the outcome.
// Anything but INIT before it is answered EIO.
Result<NegotiatedInit> HandshakeInit(int fd, const InitOptions& options,
                                     std::chrono::milliseconds timeout);

// One line for the log: "protocol 7.45 (kernel 7.45), max_write 1 MiB, ...".
std::string DescribeInit(const NegotiatedInit& info);

}  // namespace t0fs::fuse
