#include <cerrno>
#include <cstring>

#include "fuse/ops/ops.h"

namespace t0fs::fuse {

// The kernel's limit on a listxattr(2) answer.
inline constexpr size_t kXattrListMax = 65536;

// LISTXATTR: names, each NUL-terminated, with the size-probe protocol of
// listxattr(2) (size 0 asks for the length; too small is ERANGE). The list
// is packed into the worker's reply buffer: no allocation.
void OpListxattr(OpContext& ctx, Request& req, Reply& reply) {
  abi::GetxattrIn in{};
  ArgReader args(req.args);
  if (!args.Read(&in)) return reply.Error(EINVAL);
  auto names = ctx.client.ListXattr(InodeId(req.nodeid()));
  if (!names.ok()) return reply.Fail(names.status());
  size_t total = 0;
  for (const auto& name : *names) total += name.size() + 1;
  if (total > kXattrListMax || total > req.scratch.size()) return reply.Error(E2BIG);
  if (in.size == 0) {
    abi::GetxattrOut out{};
    out.size = static_cast<uint32_t>(total);
    return reply.Send(out);
  }
  if (total > in.size) return reply.Error(ERANGE);
  std::byte* out = req.scratch.data();
  for (const auto& name : *names) {
    std::memcpy(out, name.data(), name.size());
    out[name.size()] = std::byte{0};
    out += name.size() + 1;
  }
  reply.SendBytes(req.scratch.first(total));
}

}  // namespace t0fs::fuse
