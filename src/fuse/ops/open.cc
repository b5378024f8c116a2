#include <cerrno>

#include "fuse/ops/ops.h"

namespace t0fs::fuse {

// OPEN: flags are open(2)'s (O_TRUNC included, with ATOMIC_O_TRUNC; the
// kernel strips O_CREAT/O_EXCL/O_NOCTTY). O_APPEND and O_DIRECT are the
// Client's to honour.
void OpOpen(OpContext& ctx, Request& req, Reply& reply) {
  abi::OpenIn in{};
  ArgReader args(req.args);
  if (!args.Read(&in)) return reply.Error(EINVAL);
  auto file = ctx.client.Open(InodeId(req.nodeid()), static_cast<int>(in.flags));
  if (!file.ok()) return reply.Fail(file.status());
  if (in.open_flags & abi::kOpenKillSuidgid) {  // O_TRUNC by a caller without CAP_FSETID
    Status st = DropSetIdBits(ctx, (*file)->ino(), (*file)->attr().mode);
    if (!st.ok()) return reply.Fail(st);
  }
  abi::OpenOut out{};
  out.fh = ctx.files.Add(std::shared_ptr<client::File>(std::move(*file)));
  out.open_flags = kFileOpenFlags;
  reply.Send(out);
}

}  // namespace t0fs::fuse
