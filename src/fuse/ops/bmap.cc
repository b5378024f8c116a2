#include <cerrno>

#include "fuse/ops/ops.h"

namespace t0fs::fuse {

// BMAP: block mapping exists only for fuseblk mounts (there is no device).
void OpBmap(OpContext&, Request&, Reply& reply) { reply.Error(ENOSYS); }

}  // namespace t0fs::fuse
