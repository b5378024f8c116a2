#include "fuse/ops/attr_convert.h"
#include "fuse/ops/ops.h"

namespace t0fs::fuse {

// READLINK: the target, without a NUL. The kernel caches it
// (FUSE_CACHE_SYMLINKS): symlinks never change.
void OpReadlink(OpContext& ctx, Request& req, Reply& reply) {
  auto target = ctx.client.ReadLink(InodeId(req.nodeid()));
  if (!target.ok()) return FailInode(reply, target.status());
  reply.SendBytes(std::as_bytes(std::span(target->data(), target->size())));
}

}  // namespace t0fs::fuse
