#include "data/copier.h"

#include <algorithm>

#include <fmt/format.h>

#include "common/buffer.h"
#include "common/logging.h"
#include "rpc/proto/data.pb.h"

namespace t0fs::data {
namespace {
constexpr size_t kPiece = 4u << 20;
}  // namespace

Copier::Copier(ChunkStore& store, rpc::ClientOptions peer_options, uint32_t threads, uint64_t rate)
    : store_(store), peer_options_(std::move(peer_options)), rate_(rate) {
  for (uint32_t idx = 0; idx < std::max<uint32_t>(1, threads); ++idx) {
    workers_.emplace_back([this] { Worker(); });
  }
}

Copier::~Copier() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  for (auto& t : workers_) t.join();
}

void Copier::Enqueue(const pb::NodeCommand& cmd) {
  {
    std::lock_guard lock(mu_);
    bool known = std::find(running_.begin(), running_.end(), cmd.id()) != running_.end() ||
                 std::any_of(queue_.begin(), queue_.end(), [&](const pb::NodeCommand& q) { return q.id() == cmd.id(); });
    if (known) return;
    queue_.push_back(cmd);
  }
  cv_.notify_one();
}

std::vector<pb::CopyResult> Copier::TakeResults() {
  std::lock_guard lock(mu_);
  std::vector<pb::CopyResult> out;
  out.swap(results_);
  return out;
}

std::vector<uint64_t> Copier::Active() {
  std::lock_guard lock(mu_);
  std::vector<uint64_t> out = running_;
  for (const auto& q : queue_) out.push_back(q.id());
  return out;
}

void Copier::Worker() {
  for (;;) {
    pb::NodeCommand cmd;
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (stopping_) return;
      cmd = std::move(queue_.front());
      queue_.pop_front();
      running_.push_back(cmd.id());
    }
    pb::CopyResult result = Copy(cmd);
    std::lock_guard lock(mu_);
    running_.erase(std::remove(running_.begin(), running_.end(), cmd.id()), running_.end());
    results_.push_back(std::move(result));
  }
}

rpc::Channel& Copier::PeerChannel(const std::string& address) {
  std::lock_guard lock(mu_);
  auto& slot = peers_[address];
  if (!slot) {
    auto ep = rpc::Endpoint::Parse(address);
    slot = std::make_unique<rpc::Channel>(ep.ok() ? *ep : rpc::Endpoint{}, peer_options_);
  }
  return *slot;
}

std::chrono::steady_clock::time_point ReserveBandwidth(std::chrono::steady_clock::time_point& until,
                                                       std::chrono::steady_clock::time_point now,
                                                       size_t bytes, uint64_t rate) {
  const auto share = std::chrono::nanoseconds(bytes * 1000000000ull / rate);
  if (until < now - share) until = now - share;
  until += share;
  return until;
}

void Copier::Throttle(size_t bytes) {
  if (rate_ == 0) return;
  std::chrono::steady_clock::time_point wake;
  {
    // All workers together stay at `rate_` bytes/s.
    std::lock_guard lock(mu_);
    wake = ReserveBandwidth(throttle_until_, std::chrono::steady_clock::now(), bytes, rate_);
  }
  std::this_thread::sleep_until(wake);
}

pb::CopyResult Copier::Copy(const pb::NodeCommand& cmd) {
  pb::CopyResult result;
  result.set_id(cmd.id());
  result.set_chunk(cmd.chunk());
  result.set_version(cmd.version());
  VolumeId volume(cmd.volume());
  ChunkId chunk(cmd.chunk());
  auto fail = [&](const Status& st) {
    store_.DropTemp(volume, chunk);
    result.set_ok(false);
    result.set_error(st.ToString());
    LOG_WARN("copy of chunk {} from node {}: {}", chunk, cmd.source_node(), st.ToString());
    return result;
  };
  auto temp = store_.CreateTemp(volume, chunk);
  if (!temp.ok()) return fail(temp.status());
  rpc::Channel& peer = PeerChannel(cmd.source_address());
  AlignedBuffer buf(kPiece);
  uint64_t offset = 0;
  for (;;) {
    pb::ChunkReadReq req;
    req.set_chunk(cmd.chunk());
    req.set_volume(cmd.source_volume());
    req.set_offset(offset);
    req.set_length(static_cast<uint32_t>(kPiece));
    req.set_min_version(cmd.version());
    *req.mutable_cap() = cmd.cap();
    pb::ChunkReadRsp rsp;
    size_t got = 0;
    Status st = peer.Call<rpc::Method::kChunkRead>(req, &rsp, {.reply_payload = buf.span(), .reply_payload_len = &got});
    if (st.code() == StatusCode::kDataNoChunk && cmd.version() == 0 && offset == 0) {
      break;  // never written: an empty chunk
    }
    if (!st.ok()) return fail(st.WithContext(fmt::format("read from {}", cmd.source_address())));
    if (rsp.version() != cmd.version()) {
      // A client wrote meanwhile: this copy would be behind. Meta retries.
      return fail(Status(StatusCode::kStale, fmt::format("source moved to version {} (copying {})",
                                                         rsp.version(), cmd.version())));
    }
    if (got > 0) {
      Status w = (*temp)->Write(offset, std::span(buf.data(), got), cmd.version());
      if (!w.ok()) return fail(w);
      bytes_ += got;
      Throttle(got);
    }
    offset += got;
    if (got < kPiece) break;
  }
  Status st = (*temp)->Truncate(offset, cmd.version());
  if (st.ok()) st = (*temp)->Sync();
  if (!st.ok()) return fail(st);
  temp->reset();
  st = store_.CommitTemp(volume, chunk);
  if (!st.ok()) return fail(st);
  result.set_ok(true);
  result.set_bytes(offset);
  LOG_DEBUG("copied chunk {} ({} bytes, version {}) from node {}", chunk, offset, cmd.version(), cmd.source_node());
  return result;
}

}  // namespace t0fs::data
