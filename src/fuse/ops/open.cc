#include <fcntl.h>
#include <sys/stat.h>

#include <cerrno>

#include "fuse/ops/attr_convert.h"
#include "fuse/ops/ops.h"

namespace t0fs::fuse {

// OPEN: flags are open(2)'s (O_TRUNC included, with ATOMIC_O_TRUNC; the
// kernel strips O_CREAT/O_EXCL/O_NOCTTY). O_APPEND and O_DIRECT are the
// Client's to honour.
//
// Close-to-open for the size: the kernel does not ask for attributes at
// open(2); it keeps those of its last LOOKUP, GETATTR or READDIRPLUS for
// their cache time, and reads through the page cache only up to the size
// they gave. A file another client grew and closed since (its change not
// yet heard, ChangeWatcher) would be read cut short at the old size. So
// before the answer the kernel is told that its attributes of the inode
// are out of date: its next stat or read (AUTO_INVAL_DATA) asks GETATTR
// (answered from the File just opened). A file served by passthrough too:
// its reads go to the chunk file, up to that file's size, but fstat(2),
// lseek(SEEK_END) and so the length of an mmap(2) come from the kernel's
// attributes (a mapping longer than the chunk file faults with SIGBUS).
// While open through the page cache, the change watcher leaves the inode
// alone (CachedOpens).
void OpOpen(OpContext& ctx, Request& req, Reply& reply) {
  abi::OpenIn in{};
  ArgReader args(req.args);
  if (!args.Read(&in)) return reply.Error(EINVAL);
  auto file = ctx.client.Open(InodeId(req.nodeid()), static_cast<int>(in.flags));
  if (!file.ok()) return FailInode(reply, file.status());
  if (in.open_flags & abi::kOpenKillSuidgid) {  // O_TRUNC by a caller without CAP_FSETID
    Status st = DropSetIdBits(ctx, (*file)->attr(), req.header.gid);
    if (!st.ok()) return reply.Fail(st);
  }
  const InodeId ino = (*file)->ino();
  if ((*file)->attr().nlink == 0 && !ctx.cached_opens.IsOpen(ino) &&
      !ctx.passthrough.ServesNow(ino)) {
    // Unlinked by another client, kept by someone's open handle, and opened
    // here through a name this kernel still caches (a reopen through
    // /proc/PID/fd needs a handle open here). Opening it would read a
    // removed file, or write into one no name reaches (open(O_CREAT) of the
    // name would not create it). ESTALE makes the kernel look the name up
    // again (LOOKUP_REVAL) and open what it names now, or fail ENOENT, or
    // create it.
    (void)(*file)->Close();
    return reply.Error(ESTALE);
  }
  auto out = AddOpenFile(ctx, reply, std::move(*file), static_cast<int>(in.flags), req.header.uid, req.header.gid);
  if (!out.ok()) return reply.Fail(out.status());
  ctx.ForgetAttrs(reply.device(), ino);
  reply.Send(*out);
}

Result<abi::OpenOut> AddOpenFile(OpContext& ctx, const Reply& reply, std::unique_ptr<client::File> file,
                                 int flags, uint32_t uid, uint32_t gid) {
  const InodeId ino = file->ino();
  // Writes served by the kernel never reach us, so we could not clear
  // setuid/setgid at a write by a user without CAP_FSETID (the kernel asks
  // for that on WRITE): a writer of such a file goes through the mount,
  // unless the inode is served by passthrough already; then a caller other
  // than root loses the bits at open, before any write can happen.
  const client::Attr attr = file->attr();
  const bool writer = (flags & O_ACCMODE) != O_RDONLY;
  const bool setid = (attr.mode & (S_ISUID | S_ISGID)) != 0;
  PassthroughTable::Decision d = ctx.passthrough.Open(reply.device(), ino, *file, flags, !(writer && setid));
  if (d.kind == PassthroughTable::Kind::kRefused) {
    (void)file->Close();
    return d.why;
  }
  if (d.kind == PassthroughTable::Kind::kPassthrough && writer && setid && uid != 0) {
    Status st = DropSetIdBits(ctx, attr, gid);
    if (!st.ok()) {
      ctx.passthrough.Bind(0, ino, d);
      ctx.passthrough.Release(reply.device(), 0);
      (void)file->Close();
      return st;
    }
  }
  abi::OpenOut out{};
  out.fh = ctx.files.Add(std::shared_ptr<client::File>(std::move(file)));
  out.open_flags = writer ? kFileOpenFlags : kReadOnlyOpenFlags;
  if (d.kind == PassthroughTable::Kind::kPassthrough) {
    out.open_flags |= abi::kFopenPassthrough;
    out.backing_id = d.backing_id;
  }
  ctx.passthrough.Bind(out.fh, ino, d);
  // Counted before the reply is built: no watcher notification lands after
  // this, and an entry carries the short attribute time of an open inode.
  if (d.kind != PassthroughTable::Kind::kPassthrough) ctx.cached_opens.Opened(out.fh, ino);
  return out;
}

}  // namespace t0fs::fuse
