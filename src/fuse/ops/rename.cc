#include <cerrno>

#include "fuse/ops/attr_convert.h"
#include "fuse/ops/ops.h"

namespace t0fs::fuse {
namespace {

void DoRename(OpContext& ctx, Request& req, Reply& reply, uint64_t new_dir, uint32_t flags,
              ArgReader& args) {
  std::string_view old_name, new_name;
  if (!args.ReadName(&old_name) || !args.ReadName(&new_name)) return reply.Error(EINVAL);
  // RENAME_WHITEOUT (overlayfs) and unknown bits are not supported.
  if ((flags & ~(abi::kRenameNoreplace | abi::kRenameExchange)) != 0 ||
      flags == (abi::kRenameNoreplace | abi::kRenameExchange)) {
    return reply.Error(EINVAL);
  }
  Status st =
      ctx.client.Rename(InodeId(req.nodeid()), old_name, InodeId(new_dir), new_name, flags);
  if (!st.ok()) return FailName(ctx, reply, st);
  reply.SendEmpty();
}

}  // namespace

// RENAME: rename(2).
void OpRename(OpContext& ctx, Request& req, Reply& reply) {
  abi::RenameIn in{};
  ArgReader args(req.args);
  if (!args.Read(&in)) return reply.Error(EINVAL);
  DoRename(ctx, req, reply, in.newdir, 0, args);
}

// RENAME2: renameat2(2) with RENAME_NOREPLACE or RENAME_EXCHANGE.
void OpRename2(OpContext& ctx, Request& req, Reply& reply) {
  abi::Rename2In in{};
  ArgReader args(req.args);
  if (!args.Read(&in)) return reply.Error(EINVAL);
  DoRename(ctx, req, reply, in.newdir, in.flags, args);
}

}  // namespace t0fs::fuse
