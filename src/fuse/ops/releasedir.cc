#include <cerrno>

#include "fuse/ops/ops.h"

namespace t0fs::fuse {

void OpReleasedir(OpContext& ctx, Request& req, Reply& reply) {
  abi::ReleaseIn in{};
  ArgReader args(req.args);
  if (!args.Read(&in)) return reply.Error(EINVAL);
  if (!ctx.dirs.Remove(in.fh)) return reply.Error(EBADF);
  reply.SendEmpty();
}

}  // namespace t0fs::fuse
