#include <cerrno>

#include "fuse/ops/ops.h"

namespace t0fs::fuse {

// WRITE: the data follows WriteIn in the request buffer, page-aligned (see
// WorkerContext), and is handed to File::Write in place. KILL_SUIDGID (a
// writer without CAP_FSETID) costs a SetAttr only if the open-time mode
// has setuid/setgid bits.
void OpWrite(OpContext& ctx, Request& req, Reply& reply) {
  abi::WriteIn in{};
  ArgReader args(req.args);
  std::span<const std::byte> data;
  if (!args.Read(&in) || !args.ReadBytes(in.size, &data)) return reply.Error(EINVAL);
  auto file = ctx.files.Get(in.fh);
  if (!file) return reply.Error(EBADF);
  auto n = file->Write(in.offset, data);
  if (!n.ok()) return reply.Fail(n.status());
  if (in.write_flags & abi::kWriteKillSuidgid) {
    (void)DropSetIdBits(ctx, file->attr(), req.header.gid);  // the data is written either way
  }
  abi::WriteOut out{};
  out.size = static_cast<uint32_t>(*n);
  reply.Send(out);
}

}  // namespace t0fs::fuse
