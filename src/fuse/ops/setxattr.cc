#include <cerrno>

#include "fuse/ops/ops.h"

namespace t0fs::fuse {

// SETXATTR: SetxattrIn (8 bytes: we do not negotiate FUSE_SETXATTR_EXT), the
// name, then `size` bytes of value. flags: XATTR_CREATE / XATTR_REPLACE.
void OpSetxattr(OpContext& ctx, Request& req, Reply& reply) {
  abi::SetxattrIn in{};
  ArgReader args(req.args);
  std::string_view name;
  std::span<const std::byte> value;
  if (!args.Read(&in) || !args.ReadString(&name) || !args.ReadBytes(in.size, &value)) {
    return reply.Error(EINVAL);
  }
  if (name == kCapabilityXattr) return reply.Error(EOPNOTSUPP);  // see getxattr.cc
  Status st = ctx.client.SetXattr(
      InodeId(req.nodeid()), name,
      std::string_view(reinterpret_cast<const char*>(value.data()), value.size()), in.flags);
  if (!st.ok()) return reply.Fail(st);
  reply.SendEmpty();
}

}  // namespace t0fs::fuse
