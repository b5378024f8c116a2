#include "data/copier.h"

#include <fmt/format.h>

#include <algorithm>
#include <deque>
#include <future>

#include "common/buffer.h"
#include "common/logging.h"
#include "common/object_key.h"
#include "data/object_sums.h"
#include "ec/cells.h"
#include "ec/rows.h"
#include "ec/stripe_layout.h"
#include "rpc/proto/data.pb.h"

namespace t0fs::data {
pb::CopyResult Copier::ResultOf(const pb::NodeCommand& cmd) {
  pb::CopyResult result;
  result.set_id(cmd.id());
  result.set_chunk(cmd.chunk());
  result.set_version(cmd.version());
  return result;
}

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

void Copier::SetObjectTier(const pb::ObjectTier& tier) {
  const std::string serialized = tier.SerializeAsString();
  {
    std::lock_guard lock(mu_);
    if (serialized == object_config_ && object_) return;
  }
  s3::Config config;
  config.endpoint = tier.endpoint();
  config.bucket = tier.bucket();
  config.region = tier.region();
  config.credentials_file = tier.credentials_file();
  auto client = s3::Client::Open(std::move(config));
  std::lock_guard lock(mu_);
  object_config_ = serialized;
  object_prefix_ = tier.prefix();
  if (client.ok()) {
    object_ = std::move(client).value();
    object_status_ = Status::Ok();
    LOG_INFO("object tier: {} bucket {}", tier.endpoint(), tier.bucket());
  } else {
    object_.reset();
    object_status_ = client.status().WithContext("object tier");
    LOG_ERROR("{}: uploads and recalls fail until it is fixed", object_status_.ToString());
  }
}

Result<std::shared_ptr<s3::Client>> Copier::ObjectClient() {
  std::lock_guard lock(mu_);
  if (!object_) return object_status_;
  return object_;
}

Result<size_t> Copier::ReadObject(ChunkId chunk, uint64_t version, uint64_t offset,
                                  std::span<std::byte> out) {
  std::shared_ptr<s3::Client> client;
  std::string key;
  {
    std::lock_guard lock(mu_);
    if (!object_) return object_status_;
    client = object_;
    key = ObjectKey(object_prefix_, chunk, version);
  }
  auto n =
      read_ahead_.Read(chunk, version, offset, out,
                       // (By value: a window fetched ahead runs after this call.)
                       [client, key, chunk, version](uint64_t at, std::span<std::byte> buf) {
                         return ReadObjectVerified(*client, key, chunk, version, at, buf);
                       });
  if (n.status().code() == StatusCode::kDataChecksum)
    LOG_ERROR("read through the object tier: {}", n.status().ToString());
  return n;
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
    pb::CopyResult result = cmd.kind() == pb::COMMAND_UPLOAD      ? Upload(cmd)
                            : cmd.kind() == pb::COMMAND_EC_ENCODE ? Encode(cmd)
                            : cmd.kind() == pb::COMMAND_EC_VERIFY ? Verify(cmd)
                                                                  : Copy(cmd);
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
  pb::CopyResult result = ResultOf(cmd);
  VolumeId volume(cmd.volume());
  ChunkId chunk(cmd.chunk());
  const bool recall = !cmd.object_key().empty();
  const bool rebuild = cmd.ec_cells_size() > 0;
  auto fail = [&](const Status& st) {
    store_.DropTemp(volume, chunk);
    result.set_ok(false);
    result.set_error(st.ToString());
    if (recall) {
      LOG_WARN("recall of chunk {} from the object tier: {}", chunk, st.ToString());
    } else if (rebuild) {
      LOG_WARN("rebuild of chunk {} from its erasure-coded cells: {}", chunk, st.ToString());
    } else {
      LOG_WARN("copy of chunk {} from node {}: {}", chunk, cmd.source_node(), st.ToString());
    }
    return result;
  };
  std::shared_ptr<s3::Client> object;
  if (recall) {
    auto client = ObjectClient();
    if (!client.ok()) return fail(client.status());
    object = std::move(client).value();
  }
  // The object's checksums, checked before a byte of it is kept.
  std::string sums;
  bool verified = false;
  if (recall) {
    auto got = FetchObjectSums(*object, cmd.object_key(), chunk, cmd.version());
    if (!got.ok()) return fail(got.status());
    verified = got->has_value();
    if (verified) sums = std::move(**got);
  }
  auto temp = store_.CreateTemp(volume, chunk);
  if (!temp.ok()) return fail(temp.status());
  uint64_t offset = 0;
  // A recall: ranged GETs, kRecallInFlight at a time (each costs a round
  // trip and the server's latency; several in flight keep the link busy),
  // taken in order: checked, then written. The object holds exactly the
  // commanded version (keys name versions).
  struct Get {
    uint64_t offset = 0;
    AlignedBuffer buf;
    std::future<Result<size_t>> got;  // after `buf`: waited for before it goes
  };
  const std::string key = cmd.object_key();
  std::deque<Get> gets;
  uint64_t next = 0;
  auto launch = [&] {
    Get& g = gets.emplace_back();
    g.offset = next;
    g.buf = AlignedBuffer(kPiece);
    g.got = std::async(std::launch::async, [object, &key, at = next, out = g.buf.span()] {
      return object->GetObject(key, at, out);
    });
    next += kPiece;
  };
  if (recall) {
    while (gets.size() < kRecallInFlight) launch();
  }
  while (!gets.empty()) {
    Get& g = gets.front();
    Result<size_t> got = g.got.get();
    if (!got.ok()) return fail(got.status());
    if (verified) {
      const uint64_t first = g.offset / kChunkBlockSize;
      const std::string_view range = SumsFrom(sums, first);
      Status ok = VerifyObjectBlocks(
          first, std::span<const std::byte>(g.buf.data(), *got), range,
          fmt::format("the object tier's copy of chunk {} version {}", chunk, cmd.version()));
      if (!ok.ok()) {
        LOG_ERROR("recall: {}", ok.ToString());
        return fail(ok);
      }
    }
    if (*got > 0) {
      Status w = (*temp)->Write(g.offset, std::span(g.buf.data(), *got), cmd.version());
      if (!w.ok()) return fail(w);
      bytes_ += *got;
      Throttle(*got);
    }
    offset = g.offset + *got;
    const bool end = *got < kPiece;  // the pieces after it read nothing
    gets.pop_front();
    if (end) break;
    launch();
  }
  AlignedBuffer buf;  // a copy from a peer's pieces
  if (!recall && !rebuild) buf = AlignedBuffer(kPiece);
  if (rebuild) {
    Status st = RebuildFromCells(cmd, **temp);
    if (!st.ok()) return fail(st);
    offset = cmd.ec().length();
  }
  rpc::Channel* peer = recall || rebuild ? nullptr : &PeerChannel(cmd.source_address());
  while (!recall && !rebuild) {
    pb::ChunkReadReq req;
    req.set_chunk(cmd.chunk());
    req.set_volume(cmd.source_volume());
    req.set_offset(offset);
    req.set_length(static_cast<uint32_t>(kPiece));
    req.set_min_version(cmd.version());
    *req.mutable_cap() = cmd.cap();
    pb::ChunkReadRsp rsp;
    size_t got = 0;
    Status st = peer->Call<rpc::Method::kChunkRead>(
        req, &rsp, {.reply_payload = buf.span(), .reply_payload_len = &got});
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
  if (recall) {
    LOG_INFO("recalled chunk {} ({} bytes, version {}) from the object tier", chunk, offset,
             cmd.version());
  } else if (rebuild) {
    LOG_INFO("rebuilt chunk {} ({} bytes, version {}) from its erasure-coded cells", chunk, offset,
             cmd.version());
  } else {
    LOG_DEBUG("copied chunk {} ({} bytes, version {}) from node {}", chunk, offset, cmd.version(),
              cmd.source_node());
  }
  return result;
}

pb::CopyResult Copier::Upload(const pb::NodeCommand& cmd) {
  pb::CopyResult result = ResultOf(cmd);
  const VolumeId volume(cmd.volume());
  const ChunkId chunk(cmd.chunk());
  const std::string& key = cmd.object_key();
  auto fail = [&](const Status& st) {
    result.set_ok(false);
    result.set_error(st.ToString());
    LOG_DEBUG("upload of chunk {} to the object tier: {}", chunk, st.ToString());
    return result;
  };
  auto client = ObjectClient();
  if (!client.ok()) return fail(client.status());
  s3::Client& s3 = **client;
  auto stat = store_.Stat(volume, chunk);
  if (!stat.ok()) return fail(stat.status());
  if (stat->version != cmd.version()) {
    return fail(Status(StatusCode::kStale, fmt::format("the replica is at version {}, not {}",
                                                       stat->version, cmd.version())));
  }
  const uint64_t length = stat->length;
  // S3 allows 10,000 parts: a 64 GiB chunk goes in parts of 8 MiB, a larger
  // one in larger parts (whole MiB).
  constexpr uint64_t kMiB = 1u << 20;
  const uint64_t part =
      std::max<uint64_t>(s3.config().part_size, (length / 9000 + kMiB) / kMiB * kMiB);
  AlignedBuffer buf(std::max<uint64_t>(4096, std::min(part, length)));
  ObjectSums sums;  // of the bytes sent, in order
  auto read = [&](uint64_t offset, size_t want) {
    Status st = ReadLocal(cmd, offset, std::span(buf.data(), want));
    if (st.ok()) sums.Add(std::span<const std::byte>(buf.data(), want));
    return st;
  };
  if (length <= part) {
    Status st = read(0, length);
    if (st.ok()) st = s3.PutObject(key, std::span<const std::byte>(buf.data(), length));
    if (!st.ok()) return fail(st);
  } else {
    auto upload = s3.CreateMultipartUpload(key);
    if (!upload.ok()) return fail(upload.status());
    std::vector<s3::CompletedPart> parts;
    Status st;
    for (uint64_t offset = 0; st.ok() && offset < length; offset += part) {
      const size_t size = std::min(part, length - offset);
      st = read(offset, size);
      if (!st.ok()) break;
      auto etag = s3.UploadPart(key, *upload, static_cast<int>(parts.size() + 1),
                                std::span<const std::byte>(buf.data(), size));
      if (!etag.ok()) st = etag.status();
      if (st.ok()) parts.push_back(s3::CompletedPart{static_cast<int>(parts.size() + 1), *etag});
    }
    if (st.ok()) st = s3.CompleteMultipartUpload(key, *upload, parts);
    if (!st.ok()) {
      (void)s3.AbortMultipartUpload(key, *upload);
      return fail(st);
    }
  }
  // The checksums go after the object: an object is never read against
  // checksums of other bytes (a failed upload is made again whole).
  Status put = s3.PutObject(ObjectSumsKey(key), sums.Encode(chunk, cmd.version()));
  if (!put.ok()) return fail(put.WithContext("its checksums"));
  result.set_ok(true);
  result.set_bytes(length);
  LOG_DEBUG("uploaded chunk {} ({} bytes, version {}) to {}", chunk, length, cmd.version(), key);
  return result;
}

Status Copier::ReadLocal(const pb::NodeCommand& cmd, uint64_t offset, std::span<std::byte> buf) {
  const VolumeId volume(cmd.volume());
  const ChunkId chunk(cmd.chunk());
  size_t got = 0;
  while (got < buf.size()) {
    uint64_t version = 0;
    ASSIGN_OR_RETURN(size_t n, store_.Read(volume, chunk, offset + got, buf.subspan(got),
                                           cmd.version(), &version));
    if (version != cmd.version()) {
      return Status(StatusCode::kStale,
                    fmt::format("the replica moved to version {} meanwhile", version));
    }
    if (n == 0) return Status(StatusCode::kIoError, "the replica is shorter than its length");
    got += n;
  }
  bytes_ += buf.size();
  Throttle(buf.size());
  return Status::Ok();
}

}  // namespace t0fs::data
