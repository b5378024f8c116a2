#include "fuse/ops/ops.h"

namespace t0fs::fuse {

// DESTROY: the kernel is tearing the connection down (sent for fuseblk and
// virtiofs mounts only). The session ends when the device reports ENODEV.
void OpDestroy(OpContext&, Request&, Reply& reply) { reply.SendEmpty(); }

}  // namespace t0fs::fuse
