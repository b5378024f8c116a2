#include "data/chunk_handlers.h"

#include <fmt/format.h>

#include "common/logging.h"
#include "rpc/proto/data.pb.h"

namespace t0fs::data {

using rpc::Call;
using rpc::Method;
using rpc::Handle;

namespace {

// Logs corruption where an operator will see it; the client gets EIO and
// tries another replica.
Status Logged(Status st, std::string_view what) {
  if (st.code() == StatusCode::kDataChecksum || st.code() == StatusCode::kCorruption) {
    LOG_ERROR("{}: {}", what, st.ToString());
  }
  return st;
}

void Count(metrics::Counter* counter, uint64_t n) {
  if (counter != nullptr) counter->Inc(n);
}

// Descriptors pass on the local unix socket only.
Status LocalOnly(const Call& call, std::string_view method) {
  if (call.peer == "unix") return Status::Ok();
  return Status(StatusCode::kNotSupported, fmt::format("{} is served on the local unix socket only", method));
}

}  // namespace

std::vector<std::pair<Method, rpc::Handler>> MakeChunkHandlers(ChunkStore& store,
                                                               const DataConfig& config,
                                                               const CapabilityGate& gate,
                                                               Scrubber& scrubber,
                                                               ChunkTraffic traffic) {
  const uint64_t max_io = config.max_io.bytes;
  std::vector<std::pair<Method, rpc::Handler>> h;

  h.push_back(Handle<Method::kChunkRead>(
      [&store, &gate, &scrubber, max_io, traffic](const pb::ChunkReadReq& req, pb::ChunkReadRsp& rsp, Call& call) -> Status {
        RETURN_IF_ERROR(gate.Check(req.chunk(), kCapRead, req.cap()));
        if (req.length() > max_io) {
          return Status(StatusCode::kInvalidArgument, fmt::format("read of {} bytes exceeds max-io {}", req.length(), max_io));
        }
        uint64_t version = 0;
        if (req.client_verifies() && !req.direct() && req.offset() % kChunkBlockSize == 0 &&
            req.length() % kChunkBlockSize == 0) {
          // Straight from the page cache (sendfile): the client checks the
          // bytes against the checksums sent along, and asks again without
          // client_verifies on a mismatch (then this node checks, waits for
          // a writer or reports the damage, as below).
          auto sendable =
              store.ReadForSend(VolumeId(req.volume()), ChunkId(req.chunk()), req.offset(),
                                req.length(), req.min_version(), &version, rsp.mutable_crcs());
          if (!sendable.ok()) {
            return Logged(sendable.status(),
                          fmt::format("read of chunk {} on volume {}", req.chunk(), req.volume()));
          }
          rsp.set_length(static_cast<uint32_t>(sendable->length));
          rsp.set_version(version);
          rsp.set_unverified(true);
          Count(call.peer == "unix" ? traffic.unix_read_bytes : traffic.tcp_read_bytes,
                sendable->length);
          call.reply_file = std::move(sendable->data);
          call.reply_file_offset = req.offset();
          call.reply_file_length = sendable->length;
          return Status::Ok();
        }
        call.reply_buffer->Reserve(req.length());
        auto n = store.Read(VolumeId(req.volume()), ChunkId(req.chunk()), req.offset(),
                            std::span(call.reply_buffer->data(), req.length()), req.min_version(), &version,
                            req.direct());
        if (!n.ok()) {
          if (n.status().code() == StatusCode::kDataChecksum) {
            scrubber.Report(VolumeId(req.volume()), ChunkId(req.chunk()), n.status().ToString());
          }
          return Logged(n.status(), fmt::format("read of chunk {} on volume {}", req.chunk(), req.volume()));
        }
        rsp.set_length(static_cast<uint32_t>(*n));
        rsp.set_version(version);
        Count(call.peer == "unix" ? traffic.unix_read_bytes : traffic.tcp_read_bytes, *n);
        call.reply_payload = std::span(call.reply_buffer->data(), *n);
        return Status::Ok();
      }));

  h.push_back(Handle<Method::kChunkWrite>(
      [&store, &gate, max_io, traffic](const pb::ChunkWriteReq& req, pb::ChunkEmptyRsp&, Call& call) -> Status {
        RETURN_IF_ERROR(gate.Check(req.chunk(), kCapWrite, req.cap()));
        if (call.payload.size() > max_io) {
          return Status(StatusCode::kInvalidArgument, "write exceeds max-io");
        }
        Status written = store.Write(VolumeId(req.volume()), ChunkId(req.chunk()), req.offset(),
                                     call.payload, req.version(), req.sync(), req.base_version());
        if (written.ok()) {
          Count(call.peer == "unix" ? traffic.unix_write_bytes : traffic.tcp_write_bytes, call.payload.size());
        }
        return written;
      }));

  h.push_back(Handle<Method::kChunkTruncate>(
      [&store, &gate](const pb::ChunkTruncateReq& req, pb::ChunkEmptyRsp&, Call&) {
        RETURN_IF_ERROR(gate.Check(req.chunk(), kCapWrite, req.cap()));
        return store.Truncate(VolumeId(req.volume()), ChunkId(req.chunk()), req.length(),
                              req.version(), req.base_version());
      }));

  h.push_back(Handle<Method::kChunkRemove>(
      [&store, &gate](const pb::ChunkRemoveReq& req, pb::ChunkEmptyRsp&, Call&) {
        RETURN_IF_ERROR(gate.Check(req.chunk(), kCapWrite, req.cap()));
        return store.Remove(VolumeId(req.volume()), ChunkId(req.chunk()));
      }));

  h.push_back(Handle<Method::kChunkSync>(
      [&store, &gate](const pb::ChunkSyncReq& req, pb::ChunkEmptyRsp&, Call&) {
        RETURN_IF_ERROR(gate.Check(req.chunk(), kCapWrite, req.cap()));
        return store.Sync(VolumeId(req.volume()), ChunkId(req.chunk()));
      }));

  h.push_back(Handle<Method::kChunkStat>(
      [&store, &gate](const pb::ChunkStatReq& req, pb::ChunkStatRsp& rsp, Call&) -> Status {
        RETURN_IF_ERROR(gate.Check(req.chunk(), kCapRead, req.cap()));
        ASSIGN_OR_RETURN(ChunkStat st, store.Stat(VolumeId(req.volume()), ChunkId(req.chunk())));
        rsp.set_length(st.length);
        rsp.set_version(st.version);
        return Status::Ok();
      }));

  h.push_back(Handle<Method::kOpenLocal>(
      [&store, &gate, traffic](const pb::OpenLocalReq& req, pb::OpenLocalRsp& rsp, Call& call) -> Status {
        RETURN_IF_ERROR(LocalOnly(call, "OpenLocal"));
        // Handing out a descriptor is the strongest access there is: the
        // same capability as the I/O it stands for.
        RETURN_IF_ERROR(gate.Check(req.chunk(), req.writable() || req.create() ? kCapRead | kCapWrite : kCapRead,
                                   req.cap()));
        ASSIGN_OR_RETURN(LocalFds fds, store.OpenLocal(VolumeId(req.volume()), ChunkId(req.chunk()),
                                                       req.create(), req.writable(), req.direct(),
                                                       req.lazy(), req.base_version()));
        rsp.set_unnamed(fds.unnamed);
        rsp.set_length(fds.stat.length);
        rsp.set_version(fds.stat.version);
        rsp.set_block_size(kChunkBlockSize);
        call.reply_fds.push_back(std::move(fds.data));
        call.reply_fds.push_back(std::move(fds.crc));
        Count(traffic.local_opens, 1);
        return Status::Ok();
      }));

  h.push_back(Handle<Method::kPrepareLocal>(
      [&store, &gate, traffic](const pb::PrepareLocalReq& req, pb::PrepareLocalRsp& rsp, Call& call) -> Status {
        RETURN_IF_ERROR(LocalOnly(call, "PrepareLocal"));
        constexpr int kMaxChunks = static_cast<int>(rpc::kMaxFrameFds / 2);
        if (req.chunks_size() == 0 || req.chunks_size() > kMaxChunks || req.caps_size() != req.chunks_size()) {
          return Status(StatusCode::kInvalidArgument,
                        fmt::format("PrepareLocal takes 1..{} chunks, each with its capability", kMaxChunks));
        }
        for (int i = 0; i < req.chunks_size(); ++i) {
          RETURN_IF_ERROR(gate.Check(req.chunks(i), kCapRead | kCapWrite, req.caps(i)));
        }
        if (req.reuse_size() > req.chunks_size() ||
            call.fds.size() != 2 * static_cast<size_t>(req.reuse_size())) {
          return Status(
              StatusCode::kInvalidArgument,
              "PrepareLocal reuses at most one chunk per chunk, each with its two descriptors");
        }
        uint64_t handed = 0;
        for (int i = 0; i < req.chunks_size(); ++i) {
          const ChunkId chunk(req.chunks(i));
          if (i < req.reuse_size()) {
            Status reused = store.Reuse(VolumeId(req.volume()), ChunkId(req.reuse(i)), chunk,
                                        call.fds[2 * i].get(), call.fds[2 * i + 1].get());
            if (reused.ok()) {
              rsp.add_unnamed(true);
              rsp.add_reused(true);
              continue;
            }
            LOG_DEBUG("chunk {} gets new files: {}", chunk, reused.ToString());
          }
          ASSIGN_OR_RETURN(LocalFds fds,
                           store.OpenLocal(VolumeId(req.volume()), chunk, /*create=*/true,
                                           /*writable=*/true, /*direct=*/false, /*lazy=*/true));
          rsp.add_unnamed(fds.unnamed);
          rsp.add_reused(false);
          call.reply_fds.push_back(std::move(fds.data));
          call.reply_fds.push_back(std::move(fds.crc));
          ++handed;
        }
        Count(traffic.local_opens, handed);
        return Status::Ok();
      }));

  h.push_back(Handle<Method::kAdoptLocal>(
      [&store, &gate](const pb::AdoptLocalReq& req, pb::ChunkEmptyRsp&, Call& call) -> Status {
        RETURN_IF_ERROR(LocalOnly(call, "AdoptLocal"));
        RETURN_IF_ERROR(gate.Check(req.chunk(), kCapRead | kCapWrite, req.cap()));
        if (call.fds.size() != 2) {
          return Status(StatusCode::kInvalidArgument, "AdoptLocal needs the data and checksum descriptors");
        }
        return store.Adopt(VolumeId(req.volume()), ChunkId(req.chunk()), call.fds[0].get(), call.fds[1].get());
      }));

  h.push_back(Handle<Method::kListChunks>(
      [&store](const pb::ListChunksReq& req, pb::ListChunksRsp& rsp, Call&) -> Status {
        bool eof = false;
        size_t max = req.max() == 0 || req.max() > 10000 ? 10000 : req.max();
        ASSIGN_OR_RETURN(auto chunks, store.List(VolumeId(req.volume()), ChunkId(req.after()), max, &eof));
        for (const ChunkListing& c : chunks) {
          auto* out = rsp.add_chunks();
          out->set_chunk(c.chunk.value());
          out->set_volume(c.volume.value());
          out->set_length(c.length);
          out->set_version(c.version);
        }
        rsp.set_eof(eof);
        return Status::Ok();
      }));
  return h;
}

}  // namespace t0fs::data
