#include "fuse/ops/attr_convert.h"

#include <cerrno>

namespace t0fs::fuse {

abi::Attr ToWireAttr(const client::Attr& a) {
  abi::Attr out{};
  out.ino = a.ino.value();
  out.size = a.size;
  out.blocks = (a.size + 511) / 512;
  out.atime = static_cast<uint64_t>(a.atime.sec);
  out.mtime = static_cast<uint64_t>(a.mtime.sec);
  out.ctime = static_cast<uint64_t>(a.ctime.sec);
  out.atimensec = a.atime.nsec;
  out.mtimensec = a.mtime.nsec;
  out.ctimensec = a.ctime.nsec;
  out.mode = a.mode;
  out.nlink = a.nlink;
  out.uid = a.uid;
  out.gid = a.gid;
  out.rdev = a.rdev;
  out.blksize = kBlockSize;
  return out;
}

abi::EntryOut MakeEntry(const OpContext& ctx, const client::Attr& attr) {
  abi::EntryOut e{};
  e.nodeid = attr.ino.value();
  e.generation = attr.generation;
  auto [entry, attr_time] = ctx.timeouts.entry_and_attr();
  if (ctx.cached_opens.IsOpen(attr.ino)) attr_time = ctx.timeouts.short_attr();
  e.entry_valid = entry.sec;
  e.entry_valid_nsec = entry.nsec;
  e.attr_valid = attr_time.sec;
  e.attr_valid_nsec = attr_time.nsec;
  e.attr = ToWireAttr(attr);
  return e;
}

void ReplyEntry(const OpContext& ctx, Reply& reply, const Result<client::Attr>& attr) {
  if (!attr.ok()) return reply.Fail(attr.status());
  if (!attr->ino.valid()) return reply.Error(EIO);
  reply.Send(MakeEntry(ctx, *attr));
}

void ReplyNewEntry(OpContext& ctx, Reply& reply, const Result<client::Attr>& attr) {
  if (!attr.ok()) return FailName(ctx, reply, attr.status());
  ReplyEntry(ctx, reply, attr);
}

void FailName(OpContext& ctx, Reply& reply, const Status& status) {
  if (ToErrno(status.code()) == EEXIST) ctx.ForgetCachedNames(reply.device());
  reply.Fail(status);
}

void FailInode(Reply& reply, const Status& status) {
  if (status.code() == StatusCode::kNotFound) return reply.Error(ESTALE);
  reply.Fail(status);
}

void ReplyAttr(const OpContext& ctx, Reply& reply, const client::Attr& attr) {
  abi::AttrOut out{};
  // An inode open here through the page cache: the watcher does not tell the
  // kernel of its changes (CachedOpens), so its attributes stay short-lived.
  const WireTimeout valid =
      ctx.cached_opens.IsOpen(attr.ino) ? ctx.timeouts.short_attr() : ctx.timeouts.attr();
  out.attr_valid = valid.sec;
  out.attr_valid_nsec = valid.nsec;
  out.attr = ToWireAttr(attr);
  reply.Send(out);
}

}  // namespace t0fs::fuse
