#include <cerrno>

#include "fuse/ops/ops.h"

namespace t0fs::fuse {

void OpRemovexattr(OpContext& ctx, Request& req, Reply& reply) {
  ArgReader args(req.args);
  std::string_view name;
  if (!args.ReadString(&name)) return reply.Error(EINVAL);
  Status st = ctx.client.RemoveXattr(InodeId(req.nodeid()), name);
  if (!st.ok()) return reply.Fail(st);
  reply.SendEmpty();
}

}  // namespace t0fs::fuse
