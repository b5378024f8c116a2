#include <cerrno>

#include "fuse/ops/ops.h"

namespace t0fs::fuse {

// RELEASE: the last reference to the handle is gone. The kernel does not
// wait for (or report) the answer, so a failing Close is only logged by the
// Client; FLUSH already reported errors to close(2).
void OpRelease(OpContext& ctx, Request& req, Reply& reply) {
  abi::ReleaseIn in{};
  ArgReader args(req.args);
  if (!args.Read(&in)) return reply.Error(EINVAL);
  auto file = ctx.files.Remove(in.fh);
  if (!file) return reply.Error(EBADF);
  ctx.passthrough.Release(reply.device(), in.fh);
  // A change the watcher held back while the inode was open here goes to
  // the kernel now, as the watcher would have sent it.
  const int device = reply.device();
  ctx.cached_opens.Released(in.fh,
                            [device](InodeId ino) { OpContext::InvalInode(device, ino, 0); });
  Status st = file->Close();
  if (!st.ok()) return reply.Fail(st);
  reply.SendEmpty();
}

}  // namespace t0fs::fuse
