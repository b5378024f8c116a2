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
