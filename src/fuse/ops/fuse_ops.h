// FuseOps: the RequestHandler that routes each opcode to its op handler
// (ops.h) and owns the state the handlers share (OpContext: the Client, the
// config, the open-file and open-directory tables).
//
// Thread safety: Handle() is called from all workers at once.
#pragma once

#include <array>

#include "fuse/mount_config.h"
#include "fuse/ops/op_context.h"
#include "fuse/ops/ops.h"
#include "fuse/protocol/processor.h"

namespace t0fs::fuse {

class FuseOps : public RequestHandler {
 public:
  // `client` must outlive this object.
  FuseOps(client::Client& client, const MountConfig& config);
  // Closes Files the kernel never released (connection aborted).
  ~FuseOps() override;

  void Handle(Request& req, Reply& reply) override;

  size_t open_files() const { return ctx_.files.size(); }
  size_t open_dirs() const { return ctx_.dirs.size(); }
  PassthroughTable& passthrough() { return ctx_.passthrough; }
  void SetIoUring(bool on) { ctx_.io_uring.store(on); }
  client::Client& client() { return ctx_.client; }
  CacheTimeouts& timeouts() { return ctx_.timeouts; }
  CachedOpens& cached_opens() { return ctx_.cached_opens; }
  uint64_t names_forgotten() const { return ctx_.names_forgotten(); }
  uint64_t attrs_forgotten() const { return ctx_.attrs_forgotten(); }
  // Closes (commits) every File the kernel did not release; after the
  // connection ended. Also done by the destructor.
  void CloseAll();

 private:
  OpContext ctx_;
};

}  // namespace t0fs::fuse
