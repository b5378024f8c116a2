#include <algorithm>
#include <cerrno>

#include "fuse/ops/ops.h"

namespace t0fs::fuse {
namespace {

// Bytes one request copies at most; copy_file_range(2) may copy less and the
// caller loops. Bounds how long a worker is busy with one request.
constexpr uint64_t kMaxCopy = uint64_t(1) << 30;
// COPY_FILE_RANGE (pre-7.45) answers in a 32-bit WriteOut.
constexpr uint64_t kMaxCopy32 = 0xfffff000u;

}  // namespace

// COPY_FILE_RANGE / COPY_FILE_RANGE_64: copied inside the daemon through the
// worker's buffer, 1 MiB at a time, so the data does not cross into the
// kernel and back twice. Between pieces an INTERRUPT stops the copy and the
// bytes copied so far are returned (a short copy, as the syscall allows).
void OpCopyFileRange(OpContext& ctx, Request& req, Reply& reply) {
  abi::CopyFileRangeIn in{};
  ArgReader args(req.args);
  if (!args.Read(&in)) return reply.Error(EINVAL);
  if (in.flags != 0) return reply.Error(EINVAL);
  auto src = ctx.files.Get(in.fh_in);
  auto dst = ctx.files.Get(in.fh_out);
  if (!src || !dst) return reply.Error(EBADF);
  // Overlapping ranges of one file: EINVAL, as copy_file_range(2) says (the
  // kernel checks this against its own idea of the size, which may be stale).
  auto end = [](uint64_t off, uint64_t len) { return off + len < off ? UINT64_MAX : off + len; };
  if (src->ino() == dst->ino() && in.off_out < end(in.off_in, in.len) && in.off_in < end(in.off_out, in.len)) {
    return reply.Error(EINVAL);
  }
  const bool wide = req.opcode() == uint32_t(abi::Opcode::kCopyFileRange64);
  const uint64_t len = std::min(in.len, wide ? kMaxCopy : std::min(kMaxCopy, kMaxCopy32));
  std::span<std::byte> buf = req.scratch;
  uint64_t copied = 0;
  Status error;
  while (copied < len && !req.interrupted()) {
    std::span<std::byte> piece = buf.first(std::min<uint64_t>(buf.size(), len - copied));
    size_t filled = 0;
    while (filled < piece.size()) {
      auto n = src->Read(in.off_in + copied + filled, piece.subspan(filled));
      if (!n.ok()) {
        error = n.status();
        break;
      }
      if (*n == 0) break;
      filled += *n;
    }
    if (filled == 0) break;
    auto written = dst->Write(in.off_out + copied, piece.first(filled));
    if (!written.ok()) {
      error = written.status();
      break;
    }
    copied += *written;
    if (*written < filled || filled < piece.size() || !error.ok()) break;
  }
  if (copied == 0 && !error.ok()) return reply.Fail(error);
  if (wide) {
    abi::CopyFileRangeOut out{copied};
    return reply.Send(out);
  }
  abi::WriteOut out{};
  out.size = static_cast<uint32_t>(copied);
  reply.Send(out);
}

}  // namespace t0fs::fuse
