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
  auto out = AddOpenFile(ctx, reply, std::move(*file), static_cast<int>(in.flags));
  if (!out.ok()) return reply.Fail(out.status());
  reply.Send(*out);
}

Result<abi::OpenOut> AddOpenFile(OpContext& ctx, const Reply& reply, std::unique_ptr<client::File> file,
                                 int flags) {
  const InodeId ino = file->ino();
  PassthroughTable::Decision d = ctx.passthrough.Open(reply.device(), ino, *file, flags);
  if (d.kind == PassthroughTable::Kind::kRefused) {
    (void)file->Close();
    return d.why;
  }
  abi::OpenOut out{};
  out.fh = ctx.files.Add(std::shared_ptr<client::File>(std::move(file)));
  out.open_flags = kFileOpenFlags;
  if (d.kind == PassthroughTable::Kind::kPassthrough) {
    out.open_flags |= abi::kFopenPassthrough;
    out.backing_id = d.backing_id;
  }
  ctx.passthrough.Bind(out.fh, ino, d);
  return out;
}

}  // namespace t0fs::fuse
