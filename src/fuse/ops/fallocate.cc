#include <cerrno>

#include "fuse/ops/ops.h"

namespace t0fs::fuse {

// FALLOCATE: File::Fallocate. Chunk files are sparse and there is no space
// reservation, so mode 0 only extends the size and KEEP_SIZE is a no-op;
// PUNCH_HOLE|KEEP_SIZE and ZERO_RANGE make the range read zeros (on a file
// the kernel serves by passthrough, the local file system does them on the
// chunk file). Other modes: EOPNOTSUPP (docs/fuse.md).
void OpFallocate(OpContext& ctx, Request& req, Reply& reply) {
  abi::FallocateIn in{};
  ArgReader args(req.args);
  if (!args.Read(&in)) return reply.Error(EINVAL);
  auto file = ctx.files.Get(in.fh);
  if (!file) return reply.Error(EBADF);
  if (in.offset + in.length < in.offset) return reply.Error(EFBIG);
  Status st = file->Fallocate(static_cast<int>(in.mode), in.offset, in.length);
  if (st.code() == StatusCode::kNotSupported) return reply.Error(EOPNOTSUPP);
  if (!st.ok()) return reply.Fail(st);
  reply.SendEmpty();
}

}  // namespace t0fs::fuse
