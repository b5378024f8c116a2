#include "data/object_read.h"

#include <fmt/format.h>

#include "common/capability.h"
#include "common/logging.h"
#include "rpc/proto/data.pb.h"

namespace t0fs::data {

std::pair<rpc::Method, rpc::Handler> MakeObjectReadHandler(Copier& copier,
                                                           const CapabilityGate& gate,
                                                           uint64_t max_io, ChunkTraffic traffic) {
  return rpc::Handle<rpc::Method::kObjectRead>(
      [&copier, &gate, max_io, traffic](const pb::ObjectReadReq& req, pb::ChunkReadRsp& rsp,
                                        rpc::Call& call) -> Status {
        RETURN_IF_ERROR(gate.Check(req.chunk(), kCapRead, req.cap()));
        if (req.length() > max_io) {
          return Status(StatusCode::kInvalidArgument,
                        fmt::format("read of {} bytes exceeds max-io {}", req.length(), max_io));
        }
        if (req.version() == 0) {
          return Status(StatusCode::kInvalidArgument,
                        "an object read needs the version of the object");
        }
        call.reply_buffer->Reserve(req.length());
        auto n = copier.ReadObject(ChunkId(req.chunk()), req.version(), req.offset(),
                                   std::span(call.reply_buffer->data(), req.length()));
        if (!n.ok()) {
          LOG_WARN("read of chunk {} version {} from the object tier: {}", req.chunk(),
                   req.version(), n.status().ToString());
          return n.status();
        }
        rsp.set_length(static_cast<uint32_t>(*n));
        rsp.set_version(req.version());
        auto* counter = call.peer == "unix" ? traffic.unix_read_bytes : traffic.tcp_read_bytes;
        if (counter != nullptr) counter->Inc(*n);
        call.reply_payload = std::span(call.reply_buffer->data(), *n);
        return Status::Ok();
      });
}

}  // namespace t0fs::data
