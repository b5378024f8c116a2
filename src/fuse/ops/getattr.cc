#include <cerrno>

#include "fuse/ops/attr_convert.h"
#include "fuse/ops/ops.h"

namespace t0fs::fuse {

// GETATTR. With GETATTR_FH (fstat) and a Client that no longer knows the
// inode (unlinked but still open here), the open File's attributes answer.
void OpGetattr(OpContext& ctx, Request& req, Reply& reply) {
  abi::GetattrIn in{};
  ArgReader args(req.args);
  if (!args.Read(&in)) return reply.Error(EINVAL);
  const InodeId ino(req.nodeid());
  auto attr = ctx.client.GetAttr(ino);
  if (!attr.ok() && (in.getattr_flags & abi::kGetattrFh) != 0) {
    if (auto file = ctx.files.Get(in.fh); file && file->ino() == ino) {
      return ReplyAttr(ctx, reply, file->attr());
    }
  }
  if (!attr.ok()) return FailInode(reply, attr.status());
  ReplyAttr(ctx, reply, *attr);
}

}  // namespace t0fs::fuse
