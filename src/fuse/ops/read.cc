#include <cerrno>

#include "fuse/ops/ops.h"

namespace t0fs::fuse {

// READ: File::Read fills the worker's aligned reply buffer and the reply is
// written from it (no copy). A short answer means end of file to the kernel,
// which then shrinks its idea of the size; so the buffer is filled until
// `size` or a 0-byte read.
void OpRead(OpContext& ctx, Request& req, Reply& reply) {
  abi::ReadIn in{};
  ArgReader args(req.args);
  if (!args.Read(&in)) return reply.Error(EINVAL);
  if (in.size > req.scratch.size()) return reply.Error(EINVAL);  // beyond max_read
  auto file = ctx.files.Get(in.fh);
  if (!file) return reply.Error(EBADF);
  std::span<std::byte> buf = req.scratch.first(in.size);
  size_t filled = 0;
  while (filled < buf.size()) {
    auto n = file->Read(in.offset + filled, buf.subspan(filled));
    if (!n.ok()) {
      if (filled > 0) break;  // what we have is valid; the next READ reports the error
      return reply.Fail(n.status());
    }
    if (*n == 0) break;
    filled += *n;
  }
  reply.SendBytes(buf.first(filled));
}

}  // namespace t0fs::fuse
