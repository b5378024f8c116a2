// Conversions from libt0fs types to the FUSE wire, and the replies built
// from them (entries, attributes).
#pragma once

#include "fuse/ops/op_context.h"
#include "fuse/protocol/abi.h"
#include "fuse/protocol/reply.h"
#include "fuse/protocol/request.h"

namespace t0fs::fuse {

inline constexpr uint32_t kBlockSize = 4096;  // st_blksize we report

// blocks = ceil(size / 512), blksize 4096.
abi::Attr ToWireAttr(const client::Attr& attr);
// An entry for `attr` with the mount's entry and attribute timeouts.
abi::EntryOut MakeEntry(const OpContext& ctx, const client::Attr& attr);
// Answers an entry (LOOKUP, MKDIR, ...) or the error. An attr without an
// inode number is EIO: nodeid 0 means "negative entry" on the wire.
void ReplyEntry(const OpContext& ctx, Reply& reply, const Result<client::Attr>& attr);
// Answers an entry for a request that makes a name (MKDIR, MKNOD, SYMLINK,
// LINK) or the error; a name taken already is handled as FailName does.
void ReplyNewEntry(OpContext& ctx, Reply& reply, const Result<client::Attr>& attr);
// Fails a request that makes or moves to a name (CREATE, MKDIR, MKNOD,
// SYMLINK, LINK, RENAME). Such a request reaches us only when the kernel
// believes the name missing (over a cached entry it answers EEXIST itself),
// so EEXIST here means the kernel's "missing" is stale: another client made
// the name, and this mount's lookup answered before it heard of it (or from
// a directory it thought it knew whole, client/known_dirs.h). The caller's
// next stat must find the name, so before the error goes out the kernel is
// told to look every cached name up again (FUSE_NOTIFY_INC_EPOCH, Linux
// 6.16+; no lock, unlike FUSE_NOTIFY_INVAL_ENTRY, which would wait for the
// directory's lock the caller holds). On an older kernel the stale entry
// lasts until the change watcher's invalidation (a poll interval).
void FailName(OpContext& ctx, Reply& reply, const Status& status);
// Answers GETATTR/SETATTR.
void ReplyAttr(const OpContext& ctx, Reply& reply, const client::Attr& attr);
// Fails a request on the inode the kernel named (GETATTR, SETATTR, OPEN,
// READLINK): "not found" means that inode is gone (removed or replaced by
// another client while the kernel still had the name cached), which is
// ESTALE, so that the kernel looks the path up again (the VFS retries stat,
// open, chmod, ... once with LOOKUP_REVAL) instead of failing with ENOENT.
void FailInode(Reply& reply, const Status& status);
// The caller of a request (owner of what it creates).
inline client::Caller CallerOf(const Request& req) {
  return client::Caller{req.header.uid, req.header.gid};
}

}  // namespace t0fs::fuse
