#include <cerrno>

#include "fuse/ops/attr_convert.h"
#include "fuse/ops/ops.h"

namespace t0fs::fuse {

// SYMLINK: arguments are the new name, then the target (both NUL-terminated).
void OpSymlink(OpContext& ctx, Request& req, Reply& reply) {
  ArgReader args(req.args);
  std::string_view name, target;
  if (!args.ReadName(&name) || !args.ReadString(&target)) return reply.Error(EINVAL);
  ReplyNewEntry(ctx, reply, ctx.client.Symlink(InodeId(req.nodeid()), name, target, CallerOf(req)));
}

}  // namespace t0fs::fuse
