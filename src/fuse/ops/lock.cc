#include <cerrno>

#include "fuse/ops/ops.h"

namespace t0fs::fuse {

// GETLK / SETLK / SETLKW. We negotiate neither FUSE_POSIX_LOCKS nor
// FUSE_FLOCK_LOCKS, so the kernel keeps fcntl and flock locks itself (they
// hold between processes of this host, not across hosts) and never sends
// these. Should one arrive, ENOSYS.
void OpLock(OpContext&, Request&, Reply& reply) { reply.Error(ENOSYS); }

}  // namespace t0fs::fuse
