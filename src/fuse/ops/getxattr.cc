#include <cerrno>

#include <fmt/format.h>

#include "fuse/ops/ops.h"

namespace t0fs::fuse {

// GETXATTR with the size-probe protocol of getxattr(2): size 0 asks for the
// length (GetxattrOut); a value longer than `size` is ERANGE.
//
// security.capability is answered here, without a Client call: the kernel
// asks for it before writes (once per inode with HANDLE_KILLPRIV_V2, before
// every write(2) without), t0fs mounts are nosuid (file capabilities never
// apply) and SETXATTR refuses to store it.
void OpGetxattr(OpContext& ctx, Request& req, Reply& reply) {
  abi::GetxattrIn in{};
  ArgReader args(req.args);
  std::string_view name;
  if (!args.Read(&in) || !args.ReadString(&name)) return reply.Error(EINVAL);
  if (name == kCapabilityXattr) return reply.Error(ENODATA);
  Result<std::string> value = std::string();
  if (name == kMountStateXattr && InodeId(req.nodeid()) == kRootInode) {
    PassthroughTable::Stats s = ctx.passthrough.stats();
    value = fmt::format(
        "passthrough={} backing_files={} opens_passthrough={} opens_cached={} opens_refused={} "
        "refused={} local_node={} io_uring={}",
        ctx.passthrough.enabled() ? "on" : "off", s.backing_files, s.passthrough, s.cached,
        s.refused, s.failures, ctx.client.local_node().value(), ctx.io_uring.load() ? "on" : "off");
    if (!ctx.config.metrics_address.empty()) *value += " metrics=" + ctx.config.metrics_address;
  } else {
    value = ctx.client.GetXattr(InodeId(req.nodeid()), name);
  }
  if (!value.ok()) return reply.Fail(value.status());
  if (in.size == 0) {
    abi::GetxattrOut out{};
    out.size = static_cast<uint32_t>(value->size());
    return reply.Send(out);
  }
  if (value->size() > in.size) return reply.Error(ERANGE);
  reply.SendBytes(std::as_bytes(std::span(value->data(), value->size())));
}

}  // namespace t0fs::fuse
