#include <limits>

#include "fuse/ops/ops.h"

namespace t0fs::fuse {

// STATFS (df). The Client has no free-inode count: inodes are rows in the
// meta store, so "free files" is reported as plenty.
void OpStatfs(OpContext& ctx, Request&, Reply& reply) {
  auto fs = ctx.client.GetStatFs();
  if (!fs.ok()) return reply.Fail(fs.status());
  const uint32_t bsize = fs->block_size != 0 ? fs->block_size : 4096;
  abi::StatfsOut out{};
  out.st.bsize = bsize;
  out.st.frsize = bsize;
  out.st.blocks = fs->total_bytes / bsize;
  out.st.bfree = fs->free_bytes / bsize;
  out.st.bavail = fs->free_bytes / bsize;
  out.st.files = fs->files;
  out.st.ffree = std::numeric_limits<uint32_t>::max();
  out.st.namelen = fs->max_name;
  reply.Send(out);
}

}  // namespace t0fs::fuse
