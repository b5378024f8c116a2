#include <sys/stat.h>

#include "common/logging.h"
#include "fuse/ops/ops.h"

namespace t0fs::fuse {

// With FUSE_HANDLE_KILLPRIV_V2 the kernel leaves clearing setuid/setgid to
// us (and in exchange marks the superblock SB_NOSEC, so it stops asking for
// security.capability before every write(2): one GETXATTR, i.e. one meta
// round trip, per write). The rule is the VFS's (should_remove_suid,
// setattr_should_drop_sgid): setuid always goes; setgid goes with group
// execute, or when the caller is not in the file's group (we know the
// caller's primary group only: one in a supplementary group loses the bit
// too, the safe side). The kernel flags only callers without CAP_FSETID.
Status DropSetIdBits(OpContext& ctx, const client::Attr& attr, uint32_t caller_gid) {
  const uint32_t mode = attr.mode;
  uint32_t kept = mode & 07777 & ~uint32_t(S_ISUID);
  if ((mode & S_IXGRP) || caller_gid != attr.gid) kept &= ~uint32_t(S_ISGID);
  if (kept == (mode & 07777)) return Status::Ok();  // the common case: nothing to do
  client::SetAttrArgs args;
  args.mask = client::kSetMode;
  args.mode = kept;
  auto set = ctx.client.SetAttr(attr.ino, args);
  if (!set.ok()) LOG_WARN("fuse: clearing setuid/setgid of {}: {}", attr.ino.value(), set.status().ToString());
  return set.status();
}

}  // namespace t0fs::fuse
