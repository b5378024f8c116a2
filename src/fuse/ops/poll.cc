#include <cerrno>

#include "fuse/ops/ops.h"

namespace t0fs::fuse {

// POLL: ENOSYS makes the kernel remember and report regular files as always
// ready, which they are.
void OpPoll(OpContext&, Request&, Reply& reply) { reply.Error(ENOSYS); }

}  // namespace t0fs::fuse
