#include <cerrno>

#include "fuse/ops/attr_convert.h"
#include "fuse/ops/ops.h"

namespace t0fs::fuse {

// MKDIR: mode is permission bits only (umask applied by the kernel).
void OpMkdir(OpContext& ctx, Request& req, Reply& reply) {
  abi::MkdirIn in{};
  ArgReader args(req.args);
  std::string_view name;
  if (!args.Read(&in) || !args.ReadName(&name)) return reply.Error(EINVAL);
  ReplyNewEntry(ctx, reply,
                ctx.client.Mkdir(InodeId(req.nodeid()), name, in.mode & 07777, CallerOf(req)));
}

}  // namespace t0fs::fuse
