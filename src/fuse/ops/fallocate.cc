#include <fcntl.h>

#include <cerrno>

#include "fuse/ops/ops.h"

namespace t0fs::fuse {

// FALLOCATE. t0fs chunk files are sparse and the Client has no space
// reservation, so mode 0 only extends the size (as posix_fallocate's visible
// effect) and KEEP_SIZE is a no-op; space is not reserved (docs/fuse.md).
// Hole punching and the other modes are EOPNOTSUPP.
void OpFallocate(OpContext& ctx, Request& req, Reply& reply) {
  abi::FallocateIn in{};
  ArgReader args(req.args);
  if (!args.Read(&in)) return reply.Error(EINVAL);
  auto file = ctx.files.Get(in.fh);
  if (!file) return reply.Error(EBADF);
  if (in.mode == FALLOC_FL_KEEP_SIZE) return reply.SendEmpty();
  if (in.mode != 0) return reply.Error(EOPNOTSUPP);
  uint64_t end = in.offset + in.length;
  if (end < in.offset) return reply.Error(EFBIG);
  if (end > file->size()) {
    Status st = file->Truncate(end);
    if (!st.ok()) return reply.Fail(st);
  }
  reply.SendEmpty();
}

}  // namespace t0fs::fuse
