#include <cerrno>

#include "fuse/ops/ops.h"

namespace t0fs::fuse {

// FLUSH: sent at every close(2) of a descriptor of the handle. Committing
// here (size, mtime, chunk versions) is what makes close-to-open work: a
// later open anywhere sees the data. Errors reach close(2).
void OpFlush(OpContext& ctx, Request& req, Reply& reply) {
  abi::FlushIn in{};
  ArgReader args(req.args);
  if (!args.Read(&in)) return reply.Error(EINVAL);
  auto file = ctx.files.Get(in.fh);
  if (!file) return reply.Error(EBADF);
  Status st = file->Flush();
  if (!st.ok()) return reply.Fail(st);
  reply.SendEmpty();
}

}  // namespace t0fs::fuse
