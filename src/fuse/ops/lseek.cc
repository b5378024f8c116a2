#include <cerrno>

#include "fuse/ops/ops.h"

namespace t0fs::fuse {

// LSEEK carries only SEEK_DATA/SEEK_HOLE (the kernel does the others). The
// Client cannot see holes; ENOSYS makes the kernel remember and answer with
// its generic version (all data, one hole at EOF), which is correct.
void OpLseek(OpContext&, Request&, Reply& reply) { reply.Error(ENOSYS); }

}  // namespace t0fs::fuse
