#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include "common/logging.h"
#include "fuse/ops/attr_convert.h"
#include "fuse/ops/ops.h"

namespace t0fs::fuse {
namespace {

// Entries asked of the Client per ReadDir; the remainder waits in the
// DirHandle for the next READDIR (a kernel buffer holds ~100-800 entries).
constexpr uint32_t kDirBatch = 1024;

// The kernel fails the whole listing (EIO) on an empty name, one with '/',
// or one longer than its limit; such an entry is skipped instead.
bool ValidDirentName(std::string_view name) {
  return !name.empty() && name.size() <= abi::kNameMax &&
         name.find('/') == std::string_view::npos && name.find('\0') == std::string_view::npos;
}

bool IsDotOrDotDot(std::string_view name) { return name == "." || name == ".."; }

// Appends `entry` at `out` if it fits in `room`; returns the bytes used (0 = no room).
size_t PackEntry(const OpContext& ctx, const client::DirEntry& entry, bool plus, std::byte* out,
                 size_t room) {
  const size_t len = entry.name.size();
  const size_t need = plus ? abi::DirentPlusSize(len) : abi::DirentSize(len);
  if (need > room) return 0;
  uint32_t mode = entry.mode;
  if ((mode & S_IFMT) == 0 && entry.attr) mode = entry.attr->mode;
  abi::Dirent dirent{};
  dirent.ino = entry.ino.value();
  dirent.off = entry.cookie;
  dirent.namelen = static_cast<uint32_t>(len);
  dirent.type = (mode & S_IFMT) >> 12;
  size_t pos = 0;
  if (plus) {
    // Attributes make the kernel instantiate the inode (and count a lookup);
    // without them (or for . and ..) nodeid 0 says "name only".
    abi::EntryOut entry_out{};
    if (entry.attr && entry.attr->ino.valid() && !IsDotOrDotDot(entry.name)) {
      entry_out = MakeEntry(ctx, *entry.attr);
    }
    std::memcpy(out, &entry_out, sizeof(entry_out));
    pos += sizeof(entry_out);
  }
  std::memcpy(out + pos, &dirent, sizeof(dirent));
  pos += sizeof(dirent);
  std::memcpy(out + pos, entry.name.data(), len);
  std::memset(out + pos + len, 0, need - pos - len);  // padding to 8 bytes
  return need;
}

}  // namespace

// READDIR and READDIRPLUS. The offset is the cookie of the last entry the
// kernel received (0 = from the start), so seekdir/telldir and a reopened
// listing resume exactly there. Entries are packed into the worker's reply
// buffer; the rest of a Client page stays in the DirHandle.
void ListDirectory(OpContext& ctx, Request& req, Reply& reply, bool plus) {
  abi::ReadIn in{};
  ArgReader args(req.args);
  if (!args.Read(&in)) return reply.Error(EINVAL);
  auto dir = ctx.dirs.Get(in.fh);
  if (!dir) return reply.Error(EBADF);
  const size_t room = std::min<size_t>(in.size, req.scratch.size());

  DirHandle::Buffer buf;
  {
    std::lock_guard lock(dir->mu);
    buf = std::move(dir->buffer);
    dir->buffer = {};
  }
  if (!buf.fetched || buf.position != in.offset) {
    buf = {};  // a seek, a rewind, or the first call
    buf.position = in.offset;
  }

  size_t used = 0;
  for (;;) {
    if (buf.next == buf.page.entries.size()) {
      if (buf.fetched && buf.page.eof) break;
      auto page = ctx.client.ReadDir(dir->ino, buf.position, kDirBatch, plus);
      if (!page.ok()) {
        if (used > 0) break;  // answer what we have; the next call reports it
        return reply.Fail(page.status());
      }
      buf.page = std::move(*page);
      buf.next = 0;
      buf.fetched = true;
      if (buf.page.entries.empty()) {
        buf.page.eof = true;  // no progress is the end, whatever the Client said
        break;
      }
    }
    const client::DirEntry& entry = buf.page.entries[buf.next];
    if (!ValidDirentName(entry.name)) {
      LOG_WARN("fuse: directory {} has an entry the kernel cannot list; skipped",
               dir->ino.value());
    } else {
      size_t n = PackEntry(ctx, entry, plus, req.scratch.data() + used, room - used);
      if (n == 0) break;  // full; this entry starts the next answer
      used += n;
    }
    buf.position = entry.cookie;
    ++buf.next;
  }

  {
    std::lock_guard lock(dir->mu);
    dir->buffer = std::move(buf);
  }
  reply.SendBytes(req.scratch.first(used));
}

void OpReaddir(OpContext& ctx, Request& req, Reply& reply) {
  ListDirectory(ctx, req, reply, /*plus=*/false);
}

}  // namespace t0fs::fuse
