#include <cerrno>

#include "fuse/ops/attr_convert.h"
#include "fuse/ops/ops.h"

namespace t0fs::fuse {

// CREATE: open(O_CREAT) in one round trip; the answer is the new entry plus
// the open handle. O_EXCL is in `flags` for the Client to honour.
void OpCreate(OpContext& ctx, Request& req, Reply& reply) {
  abi::CreateIn in{};
  ArgReader args(req.args);
  std::string_view name;
  if (!args.Read(&in) || !args.ReadName(&name)) return reply.Error(EINVAL);
  auto file = ctx.client.Create(InodeId(req.nodeid()), name, in.mode,
                                static_cast<int>(in.flags), CallerOf(req));
  if (!file.ok()) return FailName(ctx, reply, file.status());
  if (in.open_flags & abi::kOpenKillSuidgid) {  // O_TRUNC of an existing file
    Status st = DropSetIdBits(ctx, (*file)->attr(), req.header.gid);
    if (!st.ok()) return reply.Fail(st);
  }
  const client::Attr attr = (*file)->attr();
  if (!attr.ino.valid()) return reply.Error(EIO);  // the File closes itself
  auto open = AddOpenFile(ctx, reply, std::move(*file), static_cast<int>(in.flags), req.header.uid, req.header.gid);
  if (!open.ok()) return reply.Fail(open.status());
  abi::EntryOut entry = MakeEntry(ctx, attr);
  reply.SendParts({std::as_bytes(std::span(&entry, 1)), std::as_bytes(std::span(&*open, 1))});
}

}  // namespace t0fs::fuse
