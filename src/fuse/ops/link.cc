#include <cerrno>

#include "fuse/ops/attr_convert.h"
#include "fuse/ops/ops.h"

namespace t0fs::fuse {

// LINK: the header's nodeid is the new parent; oldnodeid the inode linked.
void OpLink(OpContext& ctx, Request& req, Reply& reply) {
  abi::LinkIn in{};
  ArgReader args(req.args);
  std::string_view name;
  if (!args.Read(&in) || !args.ReadName(&name)) return reply.Error(EINVAL);
  ReplyNewEntry(ctx, reply, ctx.client.Link(InodeId(in.oldnodeid), InodeId(req.nodeid()), name));
}

}  // namespace t0fs::fuse
