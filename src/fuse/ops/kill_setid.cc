#include <sys/stat.h>

#include "common/logging.h"
#include "fuse/ops/ops.h"

namespace t0fs::fuse {

// With FUSE_HANDLE_KILLPRIV_V2 the kernel leaves clearing setuid/setgid to
// us (and in exchange marks the superblock SB_NOSEC, so it stops asking for
// security.capability before every write(2): one GETXATTR, i.e. one meta
// round trip, per write). The rule is the VFS's: setuid always goes; setgid
// only with group execute (otherwise it marks mandatory locking). The kernel
// flags only callers without CAP_FSETID.
Status DropSetIdBits(OpContext& ctx, InodeId ino, uint32_t mode) {
  uint32_t kept = mode & 07777 & ~uint32_t(S_ISUID);
  if (mode & S_IXGRP) kept &= ~uint32_t(S_ISGID);
  if (kept == (mode & 07777)) return Status::Ok();  // the common case: nothing to do
  client::SetAttrArgs args;
  args.mask = client::kSetMode;
  args.mode = kept;
  auto attr = ctx.client.SetAttr(ino, args);
  if (!attr.ok()) LOG_WARN("fuse: clearing setuid/setgid of {}: {}", ino.value(), attr.status().ToString());
  return attr.status();
}

}  // namespace t0fs::fuse
