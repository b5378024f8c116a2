#include "client/data_client.h"

#include <fmt/format.h>
#include <poll.h>

#include <algorithm>
#include <deque>
#include <thread>

#include "common/cancel.h"
#include "common/logging.h"
#include "rpc/convert.h"
#include "rpc/proto/data.pb.h"
#include "rpc/server.h"

namespace t0fs::client {
namespace {

// Largest piece per chunk RPC (the frame limit is 17 MiB).
constexpr size_t kMaxPiece = 8u << 20;

// Counts a request towards a node while it is in flight.
class InFlightGuard {
 public:
  explicit InFlightGuard(std::atomic<uint64_t>& counter) : counter_(counter) { ++counter_; }
  ~InFlightGuard() { --counter_; }

 private:
  std::atomic<uint64_t>& counter_;
};

// Whether the bytes of a read reply may be used: the node checked them,
// or they match the checksums it sent along (ChunkReadRsp.unverified).
bool Verified(std::span<const std::byte> bytes, const pb::ChunkReadRsp& rsp, const ReplicaInfo& r) {
  if (!rsp.unverified()) return true;
  const int64_t bad = VerifyBlocks(bytes, rsp.crcs());
  if (bad < 0) return true;
  LOG_DEBUG(
      "chunk {} on node {}: block {} of a read does not match its checksum; asking the node to "
      "check it",
      r.chunk, r.node, bad);
  return false;
}

// A chunk request's address: `r`'s chunk on its volume, with the right `cap`.
template <class Req>
Req ChunkRequest(const ReplicaInfo& r, const Capability& cap) {
  Req req;
  req.set_chunk(r.chunk.value());
  req.set_volume(r.volume.value());
  rpc::ToWire(cap, req.mutable_cap());
  return req;
}

}  // namespace

DataClient::DataClient(const ClientOptions& options, std::string secret, MetaClient& meta)
    : options_(options), secret_(std::move(secret)), meta_(meta) {
  channel_options_.secret = secret_;
  channel_options_.role = "client";
  channel_options_.io_timeout = options.rpc_timeout;
}

DataClient::~DataClient() {
  {
    std::lock_guard lock(suspect_mu_);
    probe_stop_ = true;
  }
  suspect_cv_.notify_all();
  if (prober_.joinable()) prober_.join();
}

std::atomic<uint64_t>& DataClient::InFlight(NodeId node) {
  std::lock_guard lock(mu_);
  auto& slot = in_flight_[node];
  if (!slot) slot = std::make_unique<std::atomic<uint64_t>>(0);
  return *slot;
}

uint64_t DataClient::Load(NodeId node) { return InFlight(node).load(); }

Result<rpc::Channel*> DataClient::ChannelFor(NodeId node) {
  {
    std::lock_guard lock(mu_);
    auto it = channels_.find(node);
    if (it != channels_.end()) return it->second.get();
  }
  ASSIGN_OR_RETURN(auto nodes, meta_.NodeAddresses());
  std::lock_guard lock(mu_);
  for (const auto& [node_id, address] : nodes) {
    auto ep = rpc::Endpoint::Parse(address);
    if (!ep.ok()) continue;
    auto& slot = channels_[node_id];
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
    if (local_) Answered(local_.get());  // (its address may come again)
    rpc::ClientOptions local_options = channel_options_;
    local_options.io_timeout.value =
        std::min<std::chrono::milliseconds>(local_options.io_timeout.value, kLocalCallTimeout);
    local_ = std::make_unique<rpc::Channel>(ep, local_options);
    local_path_ = path;
  }
  return local_.get();
}

Status DataClient::Attempt(rpc::Channel* ch, const std::function<std::string()>& describe,
                           bool retry, const std::function<Status()>& attempt) {
  const auto start = std::chrono::steady_clock::now();
  auto backoff = std::chrono::milliseconds(20);
  bool warned = false;
  for (int tries = 1;; ++tries) {
    Status st = attempt();
    if (st.ok() && !warned && failing_.load() == 0)
      return st;  // the common case: no lock, no description
    if (!rpc::IsTransportError(st.code())) {
      Answered(ch);
      if (warned && st.ok()) LOG_INFO("{}: reachable again", describe());
      return st.ok() ? st : st.WithContext(describe());
    }
    // Pooled connections to a peer that restarted are all stale at once.
    ch->Reset();
    const auto now = std::chrono::steady_clock::now();
    const auto since = FailingSince(ch, start);
    // Without `retry`, a second try on a fresh connection (the pooled ones
    // may be stale after a restart), unless it has failed that long or did
    // not answer in time (a hung service: the connection was not the fault).
    const bool again = now < meta_.RetryDeadline(since) &&
                       (retry || (tries < 2 && st.code() != StatusCode::kRpcTimeout));
    if (!again) return st.WithContext(describe());
    if (CancelRequested()) {
      LOG_INFO("{}: {} (not retried: the caller was interrupted)", describe(), st.ToString());
      return st.WithContext(describe());
    }
    if (retry && !warned) {
      LOG_WARN("{}: {} (retrying for up to {}{})", describe(), st.ToString(),
               FormatDuration(options_.retry_timeout),
               since < start ? " since it began to fail" : "");
      warned = true;
    }
    if (tries > 1) {
      std::this_thread::sleep_for(backoff);
      backoff = std::min(backoff * 2, std::chrono::milliseconds(1000));
    }
  }
}

Result<size_t> DataClient::Read(const ReplicaInfo& r, const Capability& cap, uint64_t offset,
                                std::span<std::byte> buf, bool retry, bool direct,
                                uint64_t* version) {
  if (!retry) RETURN_IF_ERROR(NotSuspect(r.node));
  ASSIGN_OR_RETURN(rpc::Channel * ch, ChannelFor(r.node));
  InFlightGuard busy(InFlight(r.node));
  size_t done = 0;
  while (done < buf.size()) {
    size_t piece = std::min(kMaxPiece, buf.size() - done);
    pb::ChunkReadReq req;
    req.set_chunk(r.chunk.value());
    req.set_volume(r.volume.value());
    req.set_offset(offset + done);
    req.set_length(static_cast<uint32_t>(piece));
    req.set_min_version(r.version);
    req.set_direct(direct);
    rpc::ToWire(cap, req.mutable_cap());
    pb::ChunkReadRsp rsp;
    size_t got = 0;
    auto call = [&](bool client_verifies) {
      req.set_client_verifies(client_verifies);
      return Attempt(
          ch, [&] { return fmt::format("read chunk {} on node {}", r.chunk, r.node); }, retry,
          [&] {
            return ch->Call<rpc::Method::kChunkRead>(
                req, &rsp, {.reply_payload = buf.subspan(done, piece), .reply_payload_len = &got});
          });
    };
    // The node sends from its page cache and we check the checksums; on a
    // mismatch (damage, or a writer between data and checksums) the node
    // reads it again and checks it itself: it waits for the writer, or
    // reports the damage (kDataChecksum) as before.
    Status st = call(!direct);
    if (st.ok() && !Verified(buf.subspan(done, got), rsp, r)) st = call(false);
    // A replica never written (version 0) may have no file: a hole.
    if (st.code() == StatusCode::kDataNoChunk && r.version == 0) return done;
    RETURN_IF_ERROR(st);
    if (version != nullptr) {
      if (done > 0 && *version != rsp.version()) {
        return Status(StatusCode::kStale,
                      fmt::format("chunk {} on node {} moved from version {} to {} during a read",
                                  r.chunk, r.node, *version, rsp.version()));
      }
      *version = rsp.version();
    }
    done += got;
    if (got < piece) break;  // end of the chunk file
  }
  return done;
}

Status DataClient::Write(const ReplicaInfo& r, const Capability& cap, uint64_t offset,
                         std::span<const std::byte> data, uint64_t version, bool retry) {
  ASSIGN_OR_RETURN(rpc::Channel * ch, ChannelFor(r.node));
  InFlightGuard busy(InFlight(r.node));
  for (size_t done = 0; done < data.size();) {
    size_t piece = std::min(kMaxPiece, data.size() - done);
    pb::ChunkWriteReq req;
    req.set_chunk(r.chunk.value());
    req.set_volume(r.volume.value());
    req.set_offset(offset + done);
    req.set_version(version);
    req.set_base_version(r.version);
    rpc::ToWire(cap, req.mutable_cap());
    RETURN_IF_ERROR(Attempt(
        ch, [&] { return fmt::format("write chunk {} on node {}", r.chunk, r.node); }, retry,
        [&] { return ch->Call<rpc::Method::kChunkWrite>(req, nullptr, {.payload = data.subspan(done, piece)}); }));
    done += piece;
  }
  return Status::Ok();
}

std::vector<Status> DataClient::WriteMany(const std::vector<ReplicaInfo>& replicas,
                                          const Capability& cap, uint64_t offset,
                                          std::span<const std::byte> data, uint64_t version,
                                          const std::function<bool()>& local_write) {
  if (data.size() > kMaxPiece) {  // callers split at chunk and piece size; be safe
    std::vector<Status> out(replicas.size());
    for (size_t idx = 0; idx < replicas.size(); ++idx)
      out[idx] = Write(replicas[idx], cap, offset, data, version, false);
    if (local_write) (void)local_write();
    return out;
  }
  return Fanout(
      replicas,
      [&](const ReplicaInfo& r, std::string* header, std::string* reply) {
        auto req = ChunkRequest<pb::ChunkWriteReq>(r, cap);
        req.set_offset(offset);
        req.set_version(version);
        req.set_base_version(r.version);
        return rpc::MakeCallArgs<rpc::Method::kChunkWrite>(req, header, reply, {.payload = data});
      },
      local_write,
      [&](const ReplicaInfo& r) { return Write(r, cap, offset, data, version, /*retry=*/false); });
}

std::vector<Status> DataClient::SyncMany(const std::vector<ReplicaInfo>& replicas,
                                         const Capability& cap,
                                         const std::function<bool()>& local_sync) {
  return Fanout(
      replicas,
      [&](const ReplicaInfo& r, std::string* header, std::string* reply) {
        return rpc::MakeCallArgs<rpc::Method::kChunkSync>(ChunkRequest<pb::ChunkSyncReq>(r, cap),
                                                          header, reply);
      },
      local_sync, [&](const ReplicaInfo& r) { return Sync(r, cap, /*retry=*/false); });
}

std::vector<Status> DataClient::Fanout(
    const std::vector<ReplicaInfo>& replicas,
    const std::function<rpc::CallArgs(const ReplicaInfo&, std::string*, std::string*)>& request,
    const std::function<bool()>& meanwhile,
    const std::function<Status(const ReplicaInfo&)>& again) {
  struct InFlightCall {
    rpc::Channel* channel = nullptr;
    std::unique_ptr<rpc::Connection> conn;
    std::string header, reply;
    rpc::CallArgs args;  // refers to header and reply
    Status status;
  };
  std::vector<InFlightCall> calls(replicas.size());
  // Send every request first...
  // A node that does not answer is not waited for again while another
  // replica may take it (each new connection would wait for its handshake):
  // its replica misses this one.
  const bool others =
      meanwhile || std::any_of(replicas.begin(), replicas.end(),
                               [&](const ReplicaInfo& r) { return !Suspect(r.node); });
  for (size_t idx = 0; idx < replicas.size(); ++idx) {
    InFlightCall& c = calls[idx];
    if (others) c.status = NotSuspect(replicas[idx].node);
    if (!c.status.ok()) continue;
    auto ch = ChannelFor(replicas[idx].node);
    if (!ch.ok()) {
      c.status = ch.status();
      continue;
    }
    c.channel = *ch;
    auto conn = c.channel->Acquire();
    if (!conn.ok()) {
      c.status = conn.status();
      continue;
    }
    c.conn = std::move(conn).value();
    c.args = request(replicas[idx], &c.header, &c.reply);
    c.status = c.conn->Send(c.args);
    ++InFlight(replicas[idx].node);
  }
  // ...the local replica meanwhile...
  bool took = meanwhile && meanwhile();
  // ...then collect the replies as they come. Once one replica took the
  // request, the others get kStragglerWait more: a hung node is left behind
  // (its replica misses the write and is repaired) instead of holding the
  // caller for the whole reply timeout.
  using Clock = std::chrono::steady_clock;
  auto straggler_deadline = took ? Clock::now() + kStragglerWait : Clock::time_point::max();
  const auto io_deadline = Clock::now() + channel_options_.io_timeout.value;
  std::vector<size_t> pending;
  for (size_t idx = 0; idx < replicas.size(); ++idx) {
    if (calls[idx].conn && calls[idx].status.ok()) pending.push_back(idx);
  }
  std::vector<pollfd> polled;
  while (!pending.empty()) {
    polled.clear();
    for (size_t idx : pending) polled.push_back(pollfd{calls[idx].conn->fd(), POLLIN, 0});
    // A caller being killed (common/cancel.h) is not held for the rest of
    // the reply timeout.
    bool cancelled = false;
    const int n = PollCancellable(polled, std::min(straggler_deadline, io_deadline), &cancelled);
    if (n <= 0) {
      const Status late =
          n < 0       ? Status::FromErrno(errno, "wait for replies")
          : cancelled ? CancelledWait("replies")
          : took      ? Status(StatusCode::kRpcTimeout,
                               fmt::format("no reply within {} after another replica took it",
                                           FormatDuration(Duration{kStragglerWait})))
                      : Status(StatusCode::kRpcTimeout, "no reply within the i/o timeout");
      for (size_t idx : pending) {
        calls[idx].conn->Abandon();
        calls[idx].status = late.WithContext(fmt::format("{} chunk {} on node {}",
                                                         rpc::MethodName(calls[idx].args.method),
                                                         replicas[idx].chunk, replicas[idx].node));
      }
      break;
    }
    std::vector<size_t> still;
    for (size_t p = 0; p < pending.size(); ++p) {
      InFlightCall& c = calls[pending[p]];
      if (polled[p].revents == 0) {
        still.push_back(pending[p]);
        continue;
      }
      c.status = c.conn->Receive(c.args);
      if (c.status.ok() && !took) {
        took = true;
        straggler_deadline = Clock::now() + kStragglerWait;
      }
    }
    pending = std::move(still);
  }
  std::vector<Status> out(replicas.size());
  for (size_t idx = 0; idx < replicas.size(); ++idx) {
    InFlightCall& c = calls[idx];
    if (c.conn) {
      --InFlight(replicas[idx].node);
      c.channel->Release(std::move(c.conn));
    }
    // A stale pooled connection gets one more chance on a fresh one; a
    // node that did not answer in time is not asked again (it hangs).
    if (rpc::IsTransportError(c.status.code()) && c.status.code() != StatusCode::kRpcTimeout &&
        c.channel != nullptr) {
      c.channel->Reset();
      c.status = again(replicas[idx]);
    }
    out[idx] = c.status;
  }
  return out;
}

void DataClient::ReadStream(NodeId node, size_t depth, const std::function<StreamRead*()>& next,
                            const std::function<void(StreamRead*, Result<size_t>)>& done) {
  struct Sent {
    StreamRead* read = nullptr;
    std::unique_ptr<rpc::Connection> conn;
    std::string header, reply;
    size_t got = 0;
    rpc::CallArgs args;  // refers to header, reply and got: a Sent never moves
  };
  auto describe = [&](const StreamRead& read) {
    return fmt::format("read chunk {} on node {}", read.replica.chunk, node);
  };
  Result<rpc::Channel*> channel = ChannelFor(node);
  std::atomic<uint64_t>& load = InFlight(node);
  std::deque<std::unique_ptr<Sent>> window;
  for (;;) {
    while (window.size() < std::max<size_t>(depth, 1)) {
      StreamRead* read = next();
      if (read == nullptr) break;
      if (!channel.ok()) {
        done(read, channel.status());
        continue;
      }
      if (read->buf.size() > kMaxPiece) {  // more than one frame: the plain path splits it
        done(read, Read(read->replica, read->cap, read->offset, read->buf, /*retry=*/false,
                        read->direct));
        continue;
      }
      auto sent = std::make_unique<Sent>();
      sent->read = read;
      pb::ChunkReadReq req;
      req.set_chunk(read->replica.chunk.value());
      req.set_volume(read->replica.volume.value());
      req.set_offset(read->offset);
      req.set_length(static_cast<uint32_t>(read->buf.size()));
      req.set_min_version(read->replica.version);
      req.set_direct(read->direct);
      req.set_client_verifies(!read->direct);
      rpc::ToWire(read->cap, req.mutable_cap());
      auto conn = (*channel)->Acquire();
      if (!conn.ok()) {
        done(read, conn.status().WithContext(describe(*read)));
        continue;
      }
      sent->conn = std::move(conn).value();
      sent->args = rpc::MakeCallArgs<rpc::Method::kChunkRead>(
          req, &sent->header, &sent->reply,
          {.reply_payload = read->buf, .reply_payload_len = &sent->got});
      Status st = sent->conn->Send(sent->args);
      if (!st.ok()) {
        // Pooled connections to a peer that restarted are all stale at once.
        (*channel)->Reset();
        done(read, st.WithContext(describe(*read)));
        continue;
      }
      ++load;
      window.push_back(std::move(sent));
    }
    if (window.empty()) return;
    std::unique_ptr<Sent> sent = std::move(window.front());
    window.pop_front();
    Status st = sent->conn->Receive(sent->args);
    --load;
    (*channel)->Release(std::move(sent->conn));
    if (rpc::IsTransportError(st.code())) (*channel)->Reset();
    if (st.ok()) {
      pb::ChunkReadRsp rsp;
      if (!rsp.ParseFromString(sent->reply)) {
        st = rpc::MalformedReply(rpc::Method::kChunkRead, (*channel)->endpoint());
      } else if (!Verified(sent->read->buf.first(sent->got), rsp, sent->read->replica)) {
        // Read asks again; the node then checks the bytes itself.
        StreamRead* read = sent->read;
        done(read, Read(read->replica, read->cap, read->offset, read->buf, /*retry=*/false,
                        read->direct));
        continue;
      }
    }
    // A replica never written (version 0) may have no file: a hole.
    if (st.code() == StatusCode::kDataNoChunk && sent->read->replica.version == 0) {
      done(sent->read, size_t{0});
    } else if (!st.ok()) {
      done(sent->read, st.WithContext(describe(*sent->read)));
    } else {
      done(sent->read, sent->got);
    }
  }
}

Status DataClient::Truncate(const ReplicaInfo& r, const Capability& cap, uint64_t length, uint64_t version,
                            bool retry) {
  ASSIGN_OR_RETURN(rpc::Channel * ch, ChannelFor(r.node));
  pb::ChunkTruncateReq req;
  req.set_chunk(r.chunk.value());
  req.set_volume(r.volume.value());
  req.set_length(length);
  req.set_version(version);
  req.set_base_version(r.version);
  rpc::ToWire(cap, req.mutable_cap());
  pb::ChunkEmptyRsp rsp;
  return Attempt(
      ch, [&] { return fmt::format("truncate chunk {} on node {}", r.chunk, r.node); }, retry,
      [&] { return ch->Call<rpc::Method::kChunkTruncate>(req, &rsp); });
}

Status DataClient::Sync(const ReplicaInfo& r, const Capability& cap, bool retry) {
  ASSIGN_OR_RETURN(rpc::Channel * ch, ChannelFor(r.node));
  const auto req = ChunkRequest<pb::ChunkSyncReq>(r, cap);
  pb::ChunkEmptyRsp rsp;
  return Attempt(
      ch, [&] { return fmt::format("sync chunk {} on node {}", r.chunk, r.node); }, retry,
      [&] { return ch->Call<rpc::Method::kChunkSync>(req, &rsp); });
}

Result<size_t> DataClient::ReadObject(NodeId via, ChunkId chunk, uint64_t version,
                                      const Capability& cap, uint64_t offset,
                                      std::span<std::byte> buf) {
  ASSIGN_OR_RETURN(rpc::Channel * ch, ChannelFor(via));
  InFlightGuard busy(InFlight(via));
  size_t done = 0;
  while (done < buf.size()) {
    size_t piece = std::min(kMaxPiece, buf.size() - done);
    pb::ObjectReadReq req;
    req.set_chunk(chunk.value());
    req.set_version(version);
    req.set_offset(offset + done);
    req.set_length(static_cast<uint32_t>(piece));
    rpc::ToWire(cap, req.mutable_cap());
    pb::ChunkReadRsp rsp;
    size_t got = 0;
    RETURN_IF_ERROR(Attempt(
        ch,
        [&] {
          return fmt::format("read chunk {} from the object tier through node {}", chunk, via);
        },
        /*retry=*/false,
        [&] {
          return ch->Call<rpc::Method::kObjectRead>(
              req, &rsp, {.reply_payload = buf.subspan(done, piece), .reply_payload_len = &got});
        }));
    done += got;
    if (got < piece) break;  // the object's end
  }
  return done;
}

}  // namespace t0fs::client
