#include "client/data_client.h"

#include <thread>

#include <fmt/format.h>

#include "common/logging.h"
#include "rpc/proto/data.pb.h"
#include "rpc/server.h"

namespace t0fs::client {
namespace {

// Largest piece per chunk RPC (the frame limit is 17 MiB).
constexpr size_t kMaxPiece = 8u << 20;

}  // namespace

DataClient::DataClient(const ClientOptions& options, std::string secret, MetaClient& meta)
    : options_(options), secret_(std::move(secret)), meta_(meta) {
  channel_options_.secret = secret_;
  channel_options_.role = "client";
  channel_options_.io_timeout = options.rpc_timeout;
}

Result<rpc::Channel*> DataClient::ChannelFor(NodeId node) {
  {
    std::lock_guard lock(mu_);
    auto it = channels_.find(node);
    if (it != channels_.end()) return it->second.get();
  }
  pb::Empty req;
  pb::ClusterStatusRsp rsp;
  RETURN_IF_ERROR(meta_.Call(rpc::Method::kClusterStatus, req, &rsp));
  std::lock_guard lock(mu_);
  for (const pb::NodeStatus& n : rsp.nodes()) {
    auto ep = rpc::Endpoint::Parse(n.address());
    if (!ep.ok()) continue;
    auto& slot = channels_[NodeId(n.node())];
    if (!slot || slot->endpoint().ToString() != ep->ToString()) {
      slot = std::make_unique<rpc::Channel>(*ep, channel_options_);
    }
  }
  auto it = channels_.find(node);
  if (it == channels_.end()) return Status(StatusCode::kMetaNoNode, fmt::format("node {} is unknown to meta", node));
  return it->second.get();
}

Result<rpc::Channel*> DataClient::LocalChannel() {
  std::string path = meta_.local_socket();
  if (path.empty()) return Status(StatusCode::kClientNoLocalNode, "no data service on this host");
  std::lock_guard lock(mu_);
  if (!local_ || local_path_ != path) {
    ASSIGN_OR_RETURN(rpc::Endpoint ep, rpc::Endpoint::Parse("unix:" + path));
    local_ = std::make_unique<rpc::Channel>(ep, channel_options_);
    local_path_ = path;
  }
  return local_.get();
}

Status DataClient::Retry(const std::string& what, const std::function<Status()>& attempt) {
  auto deadline = std::chrono::steady_clock::now() + options_.retry_timeout.value;
  auto backoff = std::chrono::milliseconds(20);
  bool warned = false;
  for (;;) {
    Status st = attempt();
    if (!rpc::IsTransportError(st.code()) || std::chrono::steady_clock::now() >= deadline) {
      if (warned && st.ok()) LOG_INFO("{}: reachable again", what);
      return st.ok() ? st : st.WithContext(what);
    }
    if (!warned) {
      LOG_WARN("{}: {} (retrying for up to {})", what, st.ToString(), FormatDuration(options_.retry_timeout));
      warned = true;
    }
    std::this_thread::sleep_for(backoff);
    backoff = std::min(backoff * 2, std::chrono::milliseconds(1000));
  }
}

Result<size_t> DataClient::Read(const ReplicaInfo& r, uint64_t offset, std::span<std::byte> buf) {
  ASSIGN_OR_RETURN(rpc::Channel * ch, ChannelFor(r.node));
  size_t done = 0;
  while (done < buf.size()) {
    size_t piece = std::min(kMaxPiece, buf.size() - done);
    pb::ChunkReadReq req;
    req.set_chunk(r.chunk.value());
    req.set_volume(r.volume.value());
    req.set_offset(offset + done);
    req.set_length(static_cast<uint32_t>(piece));
    req.set_min_version(r.version);
    std::string header = req.SerializeAsString();
    std::string reply;
    size_t got = 0;
    rpc::CallArgs args;
    args.method = rpc::Method::kChunkRead;
    args.header = header;
    args.reply_header = &reply;
    args.reply_payload = buf.subspan(done, piece);
    args.reply_payload_len = &got;
    Status st = Retry(fmt::format("read chunk {} on node {}", r.chunk, r.node), [&] { return ch->Call(args); });
    if (st.code() == StatusCode::kDataNoChunk && r.version == 0) return done;  // never written: a hole
    RETURN_IF_ERROR(st);
    done += got;
    if (got < piece) break;  // end of the chunk file
  }
  return done;
}

Status DataClient::Write(const ReplicaInfo& r, uint64_t offset, std::span<const std::byte> data,
                         uint64_t version) {
  ASSIGN_OR_RETURN(rpc::Channel * ch, ChannelFor(r.node));
  for (size_t done = 0; done < data.size();) {
    size_t piece = std::min(kMaxPiece, data.size() - done);
    pb::ChunkWriteReq req;
    req.set_chunk(r.chunk.value());
    req.set_volume(r.volume.value());
    req.set_offset(offset + done);
    req.set_version(version);
    std::string header = req.SerializeAsString();
    std::string reply;
    rpc::CallArgs args;
    args.method = rpc::Method::kChunkWrite;
    args.header = header;
    args.payload = data.subspan(done, piece);
    args.reply_header = &reply;
    RETURN_IF_ERROR(Retry(fmt::format("write chunk {} on node {}", r.chunk, r.node), [&] { return ch->Call(args); }));
    done += piece;
  }
  return Status::Ok();
}

Status DataClient::Truncate(const ReplicaInfo& r, uint64_t length, uint64_t version) {
  ASSIGN_OR_RETURN(rpc::Channel * ch, ChannelFor(r.node));
  pb::ChunkTruncateReq req;
  req.set_chunk(r.chunk.value());
  req.set_volume(r.volume.value());
  req.set_length(length);
  req.set_version(version);
  pb::ChunkEmptyRsp rsp;
  return Retry(fmt::format("truncate chunk {} on node {}", r.chunk, r.node),
               [&] { return ch->Call(rpc::Method::kChunkTruncate, req, &rsp); });
}

Status DataClient::Sync(const ReplicaInfo& r) {
  ASSIGN_OR_RETURN(rpc::Channel * ch, ChannelFor(r.node));
  pb::ChunkSyncReq req;
  req.set_chunk(r.chunk.value());
  req.set_volume(r.volume.value());
  pb::ChunkEmptyRsp rsp;
  return Retry(fmt::format("sync chunk {} on node {}", r.chunk, r.node),
               [&] { return ch->Call(rpc::Method::kChunkSync, req, &rsp); });
}

Result<std::shared_ptr<ChunkFile>> DataClient::OpenLocal(const ReplicaInfo& r, bool create, bool writable,
                                                         bool direct) {
  ASSIGN_OR_RETURN(rpc::Channel * ch, LocalChannel());
  pb::OpenLocalReq req;
  req.set_chunk(r.chunk.value());
  req.set_volume(r.volume.value());
  req.set_create(create);
  req.set_writable(writable);
  req.set_direct(direct);
  std::string header = req.SerializeAsString();
  std::string reply;
  std::vector<UniqueFd> fds;
  rpc::CallArgs args;
  args.method = rpc::Method::kOpenLocal;
  args.header = header;
  args.reply_header = &reply;
  args.reply_fds = &fds;
  RETURN_IF_ERROR(Retry(fmt::format("open local chunk {}", r.chunk), [&] {
    fds.clear();
    return ch->Call(args);
  }));
  if (fds.size() != 2) {
    return Status(StatusCode::kRpcMalformed, fmt::format("open local chunk {}: expected 2 descriptors", r.chunk));
  }
  auto file = std::make_shared<ChunkFile>(r.chunk, std::move(fds[0]), std::move(fds[1]), direct);
  RETURN_IF_ERROR(file->ReadHeader());
  return file;
}

}  // namespace t0fs::client
