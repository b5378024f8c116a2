#include <cerrno>

#include "fuse/ops/attr_convert.h"
#include "fuse/ops/ops.h"

namespace t0fs::fuse {

// LOOKUP: name -> entry. The kernel counts the lookup (FORGET undoes it);
// we keep no count, since nodeids are t0fs inode numbers.
void OpLookup(OpContext& ctx, Request& req, Reply& reply) {
  ArgReader args(req.args);
  std::string_view name;
  if (!args.ReadName(&name)) return reply.Error(EINVAL);
  auto attr = ctx.client.Lookup(InodeId(req.nodeid()), name);
  if (!attr.ok() && attr.status().code() == StatusCode::kNotFound) {
    const WireTimeout valid = ctx.timeouts.negative();
    if (!valid.zero()) {
      // nodeid 0: the kernel caches the absence for entry_valid.
      abi::EntryOut negative{};
      negative.entry_valid = valid.sec;
      negative.entry_valid_nsec = valid.nsec;
      return reply.Send(negative);
    }
  }
  ReplyEntry(ctx, reply, attr);
}

}  // namespace t0fs::fuse
