#include <cerrno>

#include "fuse/ops/ops.h"

namespace t0fs::fuse {

// Opcodes without a handler (STATX, TMPFILE, SYNCFS, SETUPMAPPING, CUSE, and
// any future ones): ENOSYS, after which the kernel falls back (STATX ->
// GETATTR) or fails the call with EOPNOTSUPP (O_TMPFILE).
void OpUnsupported(OpContext&, Request& req, Reply& reply) {
  if (abi::IsNoReply(req.opcode())) return reply.NoReply();
  reply.Error(ENOSYS);
}

}  // namespace t0fs::fuse
