#include <cerrno>

#include "fuse/ops/attr_convert.h"
#include "fuse/ops/ops.h"

namespace t0fs::fuse {

// MKNOD: mode carries the type bits; the kernel already applied the umask
// (we do not negotiate FUSE_DONT_MASK).
void OpMknod(OpContext& ctx, Request& req, Reply& reply) {
  abi::MknodIn in{};
  ArgReader args(req.args);
  std::string_view name;
  if (!args.Read(&in) || !args.ReadName(&name)) return reply.Error(EINVAL);
  ReplyNewEntry(ctx, reply,
                ctx.client.Mknod(InodeId(req.nodeid()), name, in.mode, in.rdev, CallerOf(req)));
}

}  // namespace t0fs::fuse
