// The FUSE-over-io_uring part of the kernel ABI (protocol 7.42+, Linux 6.14+),
// declared here because Debian 12's <linux/fuse.h> predates it. Layouts are
// the kernel's (include/uapi/linux/fuse.h); the static_asserts pin them.
#pragma once

#include <cstddef>
#include <cstdint>

namespace t0fs::fuse::abi {

// INIT flag: the server will fetch requests through io_uring (flags2 bit 9).
// The kernel offers it only with /sys/module/fuse/parameters/enable_uring on.
inline constexpr uint64_t kOverIoUring = 1ull << 41;

inline constexpr size_t kUringInOutHeaderSize = 128;  // fuse_in_header / fuse_out_header
inline constexpr size_t kUringOpInOutSize = 128;      // the op's fixed arguments

// IORING_OP_URING_CMD command ops on /dev/fuse.
inline constexpr uint32_t kUringCmdRegister = 1;        // hand an entry to the kernel, fetch
inline constexpr uint32_t kUringCmdCommitAndFetch = 2;  // answer, then fetch the next

struct UringEntInOut {
  uint64_t flags;
  uint64_t commit_id;   // set by the kernel with a request; sent back with its answer
  uint32_t payload_sz;  // bytes in the payload buffer (request args / answer)
  uint32_t padding;
  uint64_t reserved;
};

// The header buffer of one ring entry (iovec 0 of REGISTER).
struct UringReqHeader {
  std::byte in_out[kUringInOutHeaderSize];  // InHeader in, OutHeader out
  std::byte op_in[kUringOpInOutSize];       // the request's first (fixed) argument
  UringEntInOut ring_ent_in_out;
};

// The command area of a 128-byte SQE.
struct UringCmdReq {
  uint64_t flags;
  uint64_t commit_id;
  uint16_t qid;  // queue = CPU whose requests this entry serves
  uint8_t padding[6];
};

static_assert(sizeof(UringEntInOut) == 32);
static_assert(sizeof(UringReqHeader) == 288);
static_assert(sizeof(UringCmdReq) == 24);

}  // namespace t0fs::fuse::abi
