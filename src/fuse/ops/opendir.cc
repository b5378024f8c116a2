#include <cerrno>

#include "fuse/ops/ops.h"

namespace t0fs::fuse {

// OPENDIR: a handle that buffers the listing between READDIRs. No
// FOPEN_CACHE_DIR: listings come fresh from meta at each open.
void OpOpendir(OpContext& ctx, Request& req, Reply& reply) {
  abi::OpenIn in{};
  ArgReader args(req.args);
  if (!args.Read(&in)) return reply.Error(EINVAL);
  abi::OpenOut out{};
  out.fh = ctx.dirs.Add(std::make_shared<DirHandle>(InodeId(req.nodeid())));
  reply.Send(out);
}

}  // namespace t0fs::fuse
