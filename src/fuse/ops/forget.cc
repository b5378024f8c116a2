#include "common/logging.h"
#include "fuse/ops/ops.h"

namespace t0fs::fuse {

// FORGET / BATCH_FORGET: the kernel dropped its references to inodes. There
// is no per-inode state in the adapter to release, and no reply is sent.
void OpForget(OpContext&, Request& req, Reply& reply) {
  abi::ForgetIn in{};
  ArgReader args(req.args);
  if (!args.Read(&in)) LOG_DEBUG("fuse: FORGET {} is truncated", req.unique());
  reply.NoReply();
}

void OpBatchForget(OpContext&, Request& req, Reply& reply) {
  abi::BatchForgetIn in{};
  ArgReader args(req.args);
  if (!args.Read(&in) || args.rest().size() / sizeof(abi::ForgetOne) < in.count) {
    LOG_DEBUG("fuse: BATCH_FORGET {} is truncated", req.unique());
  }
  reply.NoReply();
}

}  // namespace t0fs::fuse
