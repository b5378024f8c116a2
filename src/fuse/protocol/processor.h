// RequestProcessor: turns the bytes of one read() of /dev/fuse into exactly
// one handled request: framing checks, INTERRUPT bookkeeping, tracing, the
// exception boundary, and a guaranteed answer (EIO if a handler forgot).
//
// It is the seam between the protocol layer and the op handlers: the ops
// implement RequestHandler and never see raw bytes or INTERRUPT/INIT.
//
// Thread safety: Process() may run on many workers at once, each with its own
// WorkerContext (slot index and buffers).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "common/buffer.h"
#include "fuse/protocol/inflight.h"
#include "fuse/protocol/reply.h"
#include "fuse/protocol/request.h"

namespace t0fs::fuse {

class FuseMetrics;

// Implemented by the op layer (ops/fuse_ops.h).
class RequestHandler {
 public:
  virtual ~RequestHandler() = default;
  // Handles a framed request (never INIT or INTERRUPT). Must answer through
  // `reply`, except for abi::IsNoReply() opcodes. Must not throw (a throw is
  // caught and answered EIO, but is a bug).
  virtual void Handle(Request& req, Reply& reply) = 0;
};

// Per-worker state: which in-flight slot it owns, and its buffers. Each worker
// allocates these once; nothing is allocated per request.
struct WorkerContext {
  // Request buffer layout: read() lands at kRequestOffset so that a WRITE's
  // data (after InHeader + WriteIn = 80 bytes) starts on a page boundary, which
  // O_DIRECT writes of chunk files need.
  static constexpr size_t kRequestOffset =
      kPageSize - sizeof(abi::InHeader) - sizeof(abi::WriteIn);

  WorkerContext(size_t slot_index, size_t max_request, size_t reply_size)
      : slot(slot_index),
        request(kRequestOffset + max_request),
        reply(AlignedBuffer::HugePages(reply_size)) {}

  std::span<std::byte> request_area() {
    return request.span().subspan(kRequestOffset);
  }

  size_t slot;
  AlignedBuffer request;  // what the kernel sent
  // READ data, directory listings, xattr values. In huge pages: the kernel
  // pins it page by page for every reply it copies out of it (writev to
  // /dev/fuse), and a remote read receives into it (docs/performance.md).
  AlignedBuffer reply;
};

class RequestProcessor {
 public:
  // `slots`: number of workers (WorkerContext::slot < slots). `metrics`
  // (optional) records every request's opcode, result and latency.
  RequestProcessor(RequestHandler& handler, size_t slots, uint32_t proto_minor, bool trace,
                   FuseMetrics* metrics = nullptr);

  // Handles one request; answers on `reply_fd` (the fd it was read from), or
  // into `sink` (a FUSE-over-io_uring entry) when given.
  void Process(std::span<const std::byte> bytes, int reply_fd, WorkerContext& worker,
               ReplySink* sink = nullptr);

  InflightTable& inflight() { return inflight_; }

 private:
  RequestHandler& handler_;
  InflightTable inflight_;
  uint32_t proto_minor_;
  bool trace_;
  FuseMetrics* metrics_;
};

}  // namespace t0fs::fuse
