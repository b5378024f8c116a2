#include <sys/stat.h>

#include <cerrno>

#include "fuse/ops/attr_convert.h"
#include "fuse/ops/ops.h"

namespace t0fs::fuse {

// SETATTR (chmod, chown, truncate, utimens). A size change goes through
// Client::SetAttr, which truncates the data and keeps open Files coherent;
// FATTR_FH (ftruncate) needs nothing more.
void OpSetattr(OpContext& ctx, Request& req, Reply& reply) {
  abi::SetattrIn in{};
  ArgReader args(req.args);
  if (!args.Read(&in)) return reply.Error(EINVAL);
  client::SetAttrArgs set;
  if (in.valid & abi::kFattrMode) {
    set.mask |= client::kSetMode;
    set.mode = in.mode & 07777;
  }
  if (in.valid & abi::kFattrUid) {
    set.mask |= client::kSetUid;
    set.uid = in.uid;
  }
  if (in.valid & abi::kFattrGid) {
    set.mask |= client::kSetGid;
    set.gid = in.gid;
  }
  if (in.valid & abi::kFattrSize) {
    set.mask |= client::kSetSize;
    set.size = in.size;
  }
  // The kernel sends ATIME and ATIME_NOW together for "now".
  if (in.valid & abi::kFattrAtimeNow) {
    set.mask |= client::kSetAtimeNow;
  } else if (in.valid & abi::kFattrAtime) {
    set.mask |= client::kSetAtime;
    set.atime = {static_cast<int64_t>(in.atime), in.atimensec};
  }
  if (in.valid & abi::kFattrMtimeNow) {
    set.mask |= client::kSetMtimeNow;
  } else if (in.valid & abi::kFattrMtime) {
    set.mask |= client::kSetMtime;
    set.mtime = {static_cast<int64_t>(in.mtime), in.mtimensec};
  }
  if (in.valid & abi::kFattrCtime) {
    set.mask |= client::kSetCtime;
    set.ctime = {static_cast<int64_t>(in.ctime), in.ctimensec};
  }
  const InodeId ino(req.nodeid());
  auto attr = ctx.client.SetAttr(ino, set);
  if (!attr.ok()) return FailInode(reply, attr.status());
  // KILL_SUIDGID (truncate or chown by a caller without CAP_FSETID), unless
  // the request sets the mode itself.
  if ((in.valid & abi::kFattrKillSuidgid) && !(in.valid & abi::kFattrMode) &&
      !S_ISDIR(attr->mode)) {
    Status st = DropSetIdBits(ctx, *attr, req.header.gid);
    if (!st.ok()) return reply.Fail(st);
    attr = ctx.client.GetAttr(ino);
    if (!attr.ok()) return reply.Fail(attr.status());
  }
  ReplyAttr(ctx, reply, *attr);
}

}  // namespace t0fs::fuse
