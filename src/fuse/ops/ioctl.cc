#include <cerrno>

#include "fuse/ops/ops.h"

namespace t0fs::fuse {

// IOCTL: no file ioctls (FS_IOC_GETFLAGS etc.); ENOTTY is what the caller
// of an unsupported ioctl expects.
void OpIoctl(OpContext&, Request&, Reply& reply) { reply.Error(ENOTTY); }

}  // namespace t0fs::fuse
