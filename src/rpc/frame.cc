#include "rpc/frame.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

namespace t0fs::rpc {
namespace {

template <typename T>
void Put(std::byte* out, T v) {
  for (size_t byte = 0; byte < sizeof(T); ++byte) {
    out[byte] = static_cast<std::byte>((static_cast<uint64_t>(v) >> (8 * byte)) & 0xff);
  }
}

template <typename T>
T Get(const std::byte* in) {
  uint64_t v = 0;
  for (size_t byte = 0; byte < sizeof(T); ++byte) {
    v |= static_cast<uint64_t>(in[byte]) << (8 * byte);
  }
  return static_cast<T>(v);
}

}  // namespace

void EncodeFrameHeader(const FrameHeader& h, std::byte out[kFrameHeaderSize]) {
  Put<uint32_t>(out + 0, kFrameMagic);
  Put<uint16_t>(out + 4, static_cast<uint16_t>(h.method));
  Put<uint16_t>(out + 6, h.flags);
  Put<uint64_t>(out + 8, h.request_id);
  Put<uint32_t>(out + 16, h.status);
  Put<uint32_t>(out + 20, h.header_len);
  Put<uint32_t>(out + 24, h.payload_len);
  Put<uint32_t>(out + 28, 0);
}

Status DecodeFrameHeader(std::span<const std::byte, kFrameHeaderSize> in, const FrameLimits& limits,
                         FrameHeader* out) {
  const std::byte* p = in.data();
  FrameHeader& h = *out;
  h.method = static_cast<Method>(Get<uint16_t>(p + 4));
  h.flags = Get<uint16_t>(p + 6);
  h.request_id = Get<uint64_t>(p + 8);
  h.status = Get<uint32_t>(p + 16);
  h.header_len = Get<uint32_t>(p + 20);
  h.payload_len = Get<uint32_t>(p + 24);
  if (Get<uint32_t>(p) != kFrameMagic) {
    return Status(StatusCode::kRpcMalformed, "bad frame magic (not a t0fs peer?)");
  }
  if ((h.flags & ~kFlagResponse) != 0 || Get<uint32_t>(p + 28) != 0) {
    return Status(StatusCode::kRpcMalformed, "unknown frame flags");
  }
  if (h.header_len > limits.max_header) {
    return Status(StatusCode::kRpcTooLarge,
                  fmt::format("frame header of {} bytes exceeds {}", h.header_len, limits.max_header));
  }
  if (h.payload_len > limits.max_payload) {
    return Status(StatusCode::kRpcTooLarge, fmt::format("frame payload of {} bytes exceeds {}",
                                                        h.payload_len, limits.max_payload));
  }
  return Status::Ok();
}

std::string_view MethodName(Method m) {
  switch (m) {
    case Method::kHello: return "Hello";
    case Method::kOpenSession: return "OpenSession";
    case Method::kRenewSession: return "RenewSession";
    case Method::kCloseSession: return "CloseSession";
    case Method::kChanges: return "Changes";
    case Method::kLookup: return "Lookup";
    case Method::kGetAttr: return "GetAttr";
    case Method::kSetAttr: return "SetAttr";
    case Method::kMakeNode: return "MakeNode";
    case Method::kUnlink: return "Unlink";
    case Method::kRmdir: return "Rmdir";
    case Method::kRename: return "Rename";
    case Method::kLink: return "Link";
    case Method::kReadLink: return "ReadLink";
    case Method::kReadDir: return "ReadDir";
    case Method::kStatFs: return "StatFs";
    case Method::kGetXattr: return "GetXattr";
    case Method::kSetXattr: return "SetXattr";
    case Method::kListXattr: return "ListXattr";
    case Method::kRemoveXattr: return "RemoveXattr";
    case Method::kOpen: return "Open";
    case Method::kRelease: return "Release";
    case Method::kGetLayout: return "GetLayout";
    case Method::kAllocate: return "Allocate";
    case Method::kCommit: return "Commit";
    case Method::kReserveChunks: return "ReserveChunks";
    case Method::kRegisterNode: return "RegisterNode";
    case Method::kHeartbeat: return "Heartbeat";
    case Method::kClusterStatus: return "ClusterStatus";
    case Method::kFsck: return "Fsck";
    case Method::kChunkList: return "ChunkList";
    case Method::kObjective: return "Objective";
    case Method::kReportReplica: return "ReportReplica";
    case Method::kNodeAdmin: return "NodeAdmin";
    case Method::kQueueOrphans: return "QueueOrphans";
    case Method::kChunkRead: return "ChunkRead";
    case Method::kChunkWrite: return "ChunkWrite";
    case Method::kChunkTruncate: return "ChunkTruncate";
    case Method::kChunkRemove: return "ChunkRemove";
    case Method::kChunkSync: return "ChunkSync";
    case Method::kChunkStat: return "ChunkStat";
    case Method::kOpenLocal: return "OpenLocal";
    case Method::kListChunks: return "ListChunks";
    case Method::kAdoptLocal: return "AdoptLocal";
    case Method::kPrepareLocal: return "PrepareLocal";
    case Method::kObjectRead:
      return "ObjectRead";
  }
  return "Unknown";
}

void AttachFds(msghdr& msg, std::span<const int> fds, FdControl& control) {
  msg.msg_control = control.bytes;
  msg.msg_controllen = CMSG_SPACE(sizeof(int) * fds.size());
  cmsghdr* c = CMSG_FIRSTHDR(&msg);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof(int) * fds.size());
  std::memcpy(CMSG_DATA(c), fds.data(), sizeof(int) * fds.size());
}

void TakeFds(msghdr& msg, std::vector<UniqueFd>* out) {
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
    const size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (size_t idx = 0; idx < count; ++idx) {
      int fd = -1;
      std::memcpy(&fd, CMSG_DATA(c) + idx * sizeof(int), sizeof fd);
      UniqueFd owned(fd);  // closed unless the caller takes it
      if (out != nullptr) out->push_back(std::move(owned));
    }
  }
}

size_t SkipSent(std::span<iovec> parts, size_t first, size_t n) {
  while (first < parts.size() && n >= parts[first].iov_len) {
    n -= parts[first].iov_len;
    ++first;
  }
  if (first < parts.size()) {
    parts[first].iov_base = static_cast<char*>(parts[first].iov_base) + n;
    parts[first].iov_len -= n;
  }
  return first;
}

size_t ReadAhead::Take(std::byte* out, size_t n) {
  n = std::min(n, size());
  if (n == 0) return 0;
  std::memcpy(out, bytes_.data() + begin_, n);
  begin_ += n;
  if (begin_ == end_) begin_ = end_ = 0;
  return n;
}

std::span<std::byte> ReadAhead::Room() {
  if (begin_ > 0) {
    std::memmove(bytes_.data(), bytes_.data() + begin_, size());
    end_ -= begin_;
    begin_ = 0;
  }
  return std::span(bytes_.data() + end_, kSize - end_);
}

}  // namespace t0fs::rpc
