#include <cerrno>

#include "fuse/ops/ops.h"

namespace t0fs::fuse {

// FSYNCDIR: namespace changes are committed by meta when each operation is
// acknowledged, so there is nothing left to flush.
void OpFsyncdir(OpContext& ctx, Request& req, Reply& reply) {
  abi::FsyncIn in{};
  ArgReader args(req.args);
  if (!args.Read(&in)) return reply.Error(EINVAL);
  if (!ctx.dirs.Get(in.fh)) return reply.Error(EBADF);
  reply.SendEmpty();
}

}  // namespace t0fs::fuse
