#include "fuse/protocol/processor.h"

#include <cerrno>
#include <exception>

#include "common/cancel.h"
#include "common/logging.h"
#include "fuse/fuse_metrics.h"

namespace t0fs::fuse {

RequestProcessor::RequestProcessor(RequestHandler& handler, size_t slots, uint32_t proto_minor,
                                   bool trace, FuseMetrics* metrics)
    : handler_(handler), inflight_(slots), proto_minor_(proto_minor), trace_(trace), metrics_(metrics) {}

void RequestProcessor::Process(std::span<const std::byte> bytes, int reply_fd,
                               WorkerContext& worker, ReplySink* sink) {
  Request req;
  Status parsed = ParseRequest(bytes, &req);
  if (!parsed.ok()) {
    LOG_WARN("fuse: malformed request dropped: {}", parsed.ToString());
    if (bytes.size() >= sizeof(abi::InHeader) && !abi::IsNoReply(req.opcode())) {
      Reply(reply_fd, req.unique(), sink).Error(EIO);
    }
    return;
  }
  const uint32_t opcode = req.opcode();
  if (trace_) {
    LOG_TRACE("fuse: <- {} unique={} nodeid={} uid={} gid={} pid={} len={}",
              abi::OpcodeName(opcode), req.unique(), req.nodeid(), req.header.uid,
              req.header.gid, req.header.pid, req.header.len);
  }

  if (opcode == uint32_t(abi::Opcode::kInterrupt)) {
    // No reply: the interrupted request answers for both.
    abi::InterruptIn in{};
    ArgReader args(req.args);
    if (args.Read(&in)) {
      inflight_.Interrupt(in.unique);
    } else {
      LOG_WARN("fuse: INTERRUPT {} without a target", req.unique());
    }
    return;
  }

  const auto start = metrics_ != nullptr ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
  Reply reply(reply_fd, req.unique(), sink);
  if (opcode == uint32_t(abi::Opcode::kInit)) {
    reply.Error(EIO);  // INIT is answered once, before the workers start
    return;
  }
  req.scratch = worker.reply.span();
  req.proto_minor = proto_minor_;
  req.interrupted_flag = inflight_.flag(worker.slot);
  const bool tracked = !abi::IsNoReply(opcode);
  if (tracked) inflight_.Begin(worker.slot, req.unique());

  // An interrupted request is served all the same: the kernel also
  // interrupts for io_uring task work and other non-signals, and stat(2),
  // close(2) or a regular file's read(2) must never fail with EINTR. Only
  // handlers with a meaningful partial result (COPY_FILE_RANGE) look at the
  // flag (docs/fuse.md, INTERRUPT).
  // (Calls that retry an unreachable node stop at an interrupt, and the
  // request gets the error the retry timeout would have brought: common/cancel.h.)
  // A read no one waits for any more (its caller gone: e.g. readahead of a
  // killed process) is cancelled too; a write never (it is the data).
  CancelScope cancel(tracked ? req.interrupted_flag : nullptr, req.header.pid,
                     /*when_gone=*/opcode == uint32_t(abi::Opcode::kRead));
  try {
    handler_.Handle(req, reply);
  } catch (const std::exception& e) {
    LOG_ERROR("fuse: {} unique={} threw: {}", abi::OpcodeName(opcode), req.unique(), e.what());
    if (!reply.done() && tracked) reply.Error(EIO);
  } catch (...) {
    LOG_ERROR("fuse: {} unique={} threw", abi::OpcodeName(opcode), req.unique());
    if (!reply.done() && tracked) reply.Error(EIO);
  }
  if (!reply.done() && tracked) {
    LOG_ERROR("fuse: {} unique={} finished without a reply", abi::OpcodeName(opcode),
              req.unique());
    reply.Error(EIO);
  }
  if (tracked) inflight_.End(worker.slot);
  if (metrics_ != nullptr) metrics_->Record(opcode, reply.error(), std::chrono::steady_clock::now() - start);
  if (trace_ && tracked) {
    LOG_TRACE("fuse: -> {} unique={} error={}", abi::OpcodeName(opcode), req.unique(),
              reply.error());
  }
}

}  // namespace t0fs::fuse
