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
  e.entry_valid = ctx.entry_timeout.sec;
  e.entry_valid_nsec = ctx.entry_timeout.nsec;
  e.attr_valid = ctx.attr_timeout.sec;
  e.attr_valid_nsec = ctx.attr_timeout.nsec;
  e.attr = ToWireAttr(attr);
  return e;
}

void ReplyEntry(const OpContext& ctx, Reply& reply, const Result<client::Attr>& attr) {
  if (!attr.ok()) return reply.Fail(attr.status());
  if (!attr->ino.valid()) return reply.Error(EIO);
  reply.Send(MakeEntry(ctx, *attr));
}

void ReplyAttr(const OpContext& ctx, Reply& reply, const client::Attr& attr) {
  abi::AttrOut out{};
  out.attr_valid = ctx.attr_timeout.sec;
  out.attr_valid_nsec = ctx.attr_timeout.nsec;
  out.attr = ToWireAttr(attr);
  reply.Send(out);
}

}  // namespace t0fs::fuse
