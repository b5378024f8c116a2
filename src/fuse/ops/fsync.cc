#include <cerrno>

#include "fuse/ops/ops.h"

namespace t0fs::fuse {

// FSYNC: fsync(2) / fdatasync(2).
void OpFsync(OpContext& ctx, Request& req, Reply& reply) {
  abi::FsyncIn in{};
  ArgReader args(req.args);
  if (!args.Read(&in)) return reply.Error(EINVAL);
  auto file = ctx.files.Get(in.fh);
  if (!file) return reply.Error(EBADF);
  Status st = file->Fsync((in.fsync_flags & abi::kFsyncFdatasync) != 0);
  if (!st.ok()) return reply.Fail(st);
  reply.SendEmpty();
}

}  // namespace t0fs::fuse
