#include "fuse/ops/ops.h"

namespace t0fs::fuse {

// READDIRPLUS: READDIR with each entry's attributes, which saves a LOOKUP
// per name for `ls -l`. The kernel chooses plus or plain per call
// (FUSE_READDIRPLUS_AUTO).
void OpReaddirplus(OpContext& ctx, Request& req, Reply& reply) {
  ListDirectory(ctx, req, reply, /*plus=*/true);
}

}  // namespace t0fs::fuse
