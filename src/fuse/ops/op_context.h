// OpContext: what every op handler works with: the Client, the mount's
// config, the handle tables, and the cache timeouts in wire form.
//
// Handlers (declared in ops.h, one file each) only decode arguments, call
// the Client or a File, map Status to errno and build the reply. They keep no
// per-inode state: the kernel's nodeid *is* the t0fs inode number (the root
// is 1 on both sides), so LOOKUP needs no table and FORGET no work.
//
// Thread safety: shared by all workers; the tables are thread-safe, the rest
// is read-only after construction.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>

#include "fuse/mount_config.h"
#include "fuse/ops/handle_table.h"
#include "fuse/ops/passthrough.h"
#include "t0fs/client.h"

namespace t0fs::fuse {

// A seconds + nanoseconds pair as the wire wants cache timeouts.
struct WireTimeout {
  uint64_t sec = 0;
  uint32_t nsec = 0;
  static WireTimeout From(Duration d) {
    auto ms = d.value.count();
    if (ms < 0) ms = 0;
    return {uint64_t(ms / 1000), uint32_t((ms % 1000) * 1000000)};
  }
  bool zero() const { return sec == 0 && nsec == 0; }
};

// An open directory: the part of a listing fetched from the Client but not
// yet returned to the kernel, so one Client::ReadDir feeds many READDIRs.
struct DirHandle {
  explicit DirHandle(InodeId dir) : ino(dir) {}
  struct Buffer {
    client::DirPage page;
    size_t next = 0;        // first entry of page.entries not yet returned
    uint64_t position = 0;  // readdir offset at which page.entries[next] starts
    bool fetched = false;   // page holds a Client answer for `position`
  };
  const InodeId ino;
  std::mutex mu;  // guards buffer; held only to swap it in or out, never across a Client call
  Buffer buffer;
};

struct OpContext {
  OpContext(client::Client& c, const MountConfig& cfg)
      : client(c),
        config(cfg),
        attr_timeout(WireTimeout::From(cfg.attr_timeout)),
        entry_timeout(WireTimeout::From(cfg.entry_timeout)),
        negative_timeout(WireTimeout::From(cfg.negative_timeout)) {}

  client::Client& client;
  const MountConfig config;
  const WireTimeout attr_timeout;
  const WireTimeout entry_timeout;
  const WireTimeout negative_timeout;
  HandleTable<client::File> files;
  HandleTable<DirHandle> dirs;
  PassthroughTable passthrough;
};

}  // namespace t0fs::fuse
