#include "client/batch_io.h"

#include <fcntl.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "client/replica_io.h"
#include "common/buffer.h"
#include "common/logging.h"
#include "rpc/channel.h"

namespace t0fs::client {

Result<std::unique_ptr<BatchIo>> Client::OpenBatchIo(const BatchIoOptions&) {
  return Status(StatusCode::kNotSupported, "this client offers no batched i/o");
}

Result<std::unique_ptr<BatchIo>> ClientImpl::OpenBatchIo(const BatchIoOptions& options) {
  return std::unique_ptr<BatchIo>(new BatchIoImpl(*this, options));
}

BatchIoImpl::BatchIoImpl(ClientImpl& client, const BatchIoOptions& options)
    : client_(client), options_(options) {
  for (uint32_t idx = 0; idx < std::max<uint32_t>(options_.workers, 1); ++idx) {
    workers_.emplace_back([this] { RunWorker(); });
  }
}

BatchIoImpl::~BatchIoImpl() {
  Status st = Close();
  if (!st.ok()) LOG_WARN("closing batch i/o on destruction: {}", st.ToString());
}

Result<uint32_t> BatchIoImpl::RegisterBuffer(std::span<std::byte> memory) {
  if (memory.empty()) return Status(StatusCode::kInvalidArgument, "register an empty buffer");
  if (reinterpret_cast<uintptr_t>(memory.data()) % kPageSize != 0) {
    return Status(StatusCode::kInvalidArgument, "a registered buffer starts on a page boundary");
  }
  std::lock_guard lock(buffers_mu_);
  for (uint32_t idx = 0; idx < buffers_.size(); ++idx) {
    if (buffers_[idx].memory.empty()) {
      buffers_[idx] = Registered{memory, 0};
      return idx;
    }
  }
  buffers_.push_back(Registered{memory, 0});
  return static_cast<uint32_t>(buffers_.size() - 1);
}

Status BatchIoImpl::UnregisterBuffer(uint32_t index) {
  std::lock_guard lock(buffers_mu_);
  if (index >= buffers_.size() || buffers_[index].memory.empty()) {
    return Status(StatusCode::kInvalidArgument, fmt::format("buffer {} is not registered", index));
  }
  if (buffers_[index].users > 0) {
    return Status(StatusCode::kBusy, fmt::format("buffer {}: {} requests in flight use it", index,
                                                 buffers_[index].users));
  }
  buffers_[index] = Registered{};
  return Status::Ok();
}

Result<std::shared_ptr<BatchIoImpl::Op>> BatchIoImpl::Check(const BatchRequest& req) {
  auto* file = dynamic_cast<FileImpl*>(req.file);
  if (file == nullptr || &file->client() != &client_) {
    return Status(StatusCode::kBadHandle, "not a File of this client");
  }
  if (file->closed()) return Status(StatusCode::kBadHandle, "file is closed");
  if (req.op != BatchOp::kRead && req.op != BatchOp::kWrite) {
    return Status(StatusCode::kInvalidArgument, "neither a read nor a write");
  }
  const int mode = file->flags() & O_ACCMODE;
  if (req.op == BatchOp::kRead ? mode == O_WRONLY : mode == O_RDONLY) {
    return Status(StatusCode::kBadHandle,
                  req.op == BatchOp::kRead ? "file is open write-only" : "file is open read-only");
  }
  auto op = std::make_shared<Op>();
  op->req = req;
  op->file = file;
  op->state = file->state();
  std::lock_guard lock(buffers_mu_);
  if (req.buffer >= buffers_.size() || buffers_[req.buffer].memory.empty()) {
    return Status(StatusCode::kInvalidArgument,
                  fmt::format("buffer {} is not registered", req.buffer));
  }
  Registered& buf = buffers_[req.buffer];
  if (req.buffer_offset > buf.memory.size() || req.length > buf.memory.size() - req.buffer_offset) {
    return Status(StatusCode::kInvalidArgument,
                  fmt::format("{} bytes at {} are outside buffer {} ({} bytes)", req.length,
                              req.buffer_offset, req.buffer, buf.memory.size()));
  }
  op->mem = buf.memory.subspan(req.buffer_offset, req.length);
  buf.users++;
  return op;
}

Status BatchIoImpl::Submit(std::span<const BatchRequest> requests) {
  {
    std::lock_guard lock(done_mu_);
    if (closed_) return Status(StatusCode::kBadHandle, "batch i/o is closed");
    // Counted before any can complete, so that Wait never sees the batch
    // half submitted as "nothing in flight".
    in_flight_ += requests.size();
  }
  for (const BatchRequest& req : requests) {
    Result<std::shared_ptr<Op>> op = Check(req);
    if (!op.ok()) {
      Complete(req.user_data, -int64_t{ToErrno(op.status().code())});
    } else if (req.op == BatchOp::kWrite) {
      StartWrite(*op);
    } else {
      StartRead(*op);
    }
  }
  return Status::Ok();
}

void BatchIoImpl::StartWrite(const std::shared_ptr<Op>& op) {
  op->pieces_left = 1;
  if (op->mem.empty()) return Finish(*op, 0);
  Post([this, op] {
    Result<size_t> n = op->file->Write(op->req.offset, op->mem);
    if (n.ok()) op->bytes = *n;
    Finish(*op, n.ok() ? 0 : ToErrno(n.status().code()));
  });
}

void BatchIoImpl::StartRead(const std::shared_ptr<Op>& op) {
  InodeState& st = *op->state;
  op->pieces_left = 1;  // held while the pieces go out, released at the end
  if (op->file->held_for_passthrough()) {
    // The held chunk file is the whole file (File::Read's ReadHeld).
    Post([this, op] {
      Result<size_t> n = op->file->Read(op->req.offset, op->mem);
      if (n.ok()) op->bytes = *n;
      Finish(*op, n.ok() ? 0 : ToErrno(n.status().code()));
    });
    return;
  }
  const uint64_t offset = op->req.offset;
  uint64_t end;
  {
    std::lock_guard lock(st.mu);
    end = offset >= st.size ? offset : std::min<uint64_t>(st.size, offset + op->mem.size());
  }
  op->bytes = end - offset;
  const bool direct = (op->file->flags() & O_DIRECT) != 0;
  const uint64_t cs = st.chunk_size;
  DataClient& data = client_.data();
  ReplicaIo& replicas = client_.replicas();
  for (uint64_t pos = offset; pos < end;) {
    auto piece = std::make_unique<Piece>();
    piece->op = op;
    piece->index = pos / cs;
    piece->offset = pos % cs;
    piece->buf = op->mem.subspan(pos - offset, std::min<uint64_t>(cs - piece->offset, end - pos));
    piece->direct = direct;
    pos += piece->buf.size();
    op->pieces_left++;
    // Usually answered from the layout cache (fetched at open, in windows).
    Result<std::optional<CachedChunk>> chunk = client_.layouts().ChunkFor(st, piece->index);
    if (!chunk.ok() || !*chunk) {
      PieceDone(*piece, chunk.ok() ? Result<size_t>(size_t{0}) : Result<size_t>(chunk.status()));
      continue;
    }
    std::vector<ReplicaInfo> order = ReadOrder((*chunk)->info.replicas, [&](const ReplicaInfo& r) {
      return ReplicaRank{data.Suspect(r.node), replicas.IsLocal(r),
                         data.Load(r.node) + Queued(r.node)};
    });
    // Local replicas, and chunks whose every replica's node just failed
    // (the cells may answer), take File::Read's path whole.
    if (order.empty() || replicas.IsLocal(order.front()) || data.Suspect(order.front().node)) {
      ReadOnWorker(std::move(piece));
      continue;
    }
    const NodeId node = order.front().node;
    piece->replica = order.front();
    piece->cap = (*chunk)->cap;
    ToLane(node, std::move(piece));
  }
  Finish(*op, 0);
}

void BatchIoImpl::ReadOnWorker(std::unique_ptr<Piece> piece) {
  std::shared_ptr<Piece> shared(std::move(piece));
  Post([this, shared] {
    Piece& p = *shared;
    Result<size_t> got = client_.replicas().Read(*p.op->state, p.index, p.offset, p.buf, p.direct);
    // A piece its lane's replica failed and another served.
    if (got.ok() && p.replica.node.valid()) client_.stats().replica_failovers++;
    PieceDone(p, got);
  });
}

void BatchIoImpl::ToLane(NodeId node, std::unique_ptr<Piece> piece) {
  Lane* lane;
  {
    std::lock_guard lock(lanes_mu_);
    std::unique_ptr<Lane>& slot = lanes_[node];
    if (!slot) {
      slot = std::make_unique<Lane>();
      slot->node = node;
      slot->thread = std::thread([this, raw = slot.get()] { RunLane(*raw); });
    }
    lane = slot.get();
  }
  std::lock_guard lock(lane->mu);
  lane->queue.push_back(std::move(piece));
  lane->queued++;
  lane->cv.notify_one();
}

uint64_t BatchIoImpl::Queued(NodeId node) {
  std::lock_guard lock(lanes_mu_);
  auto it = lanes_.find(node);
  return it == lanes_.end() ? 0 : it->second->queued.load();
}

void BatchIoImpl::RunLane(Lane& lane) {
  auto next = [&]() -> DataClient::StreamRead* {
    std::lock_guard lock(lane.mu);
    if (lane.queue.empty()) return nullptr;
    Piece* piece = lane.queue.front().release();
    lane.queue.pop_front();
    lane.queued--;
    return piece;
  };
  auto done = [this](DataClient::StreamRead* read, Result<size_t> got) {
    LaneDone(read, std::move(got));
  };
  std::unique_lock lock(lane.mu);
  for (;;) {
    lane.cv.wait(lock, [&] { return lane.stop || !lane.queue.empty(); });
    if (lane.queue.empty()) return;
    lock.unlock();
    client_.data().ReadStream(lane.node, options_.node_depth, next, done);
    lock.lock();
  }
}

void BatchIoImpl::LaneDone(DataClient::StreamRead* read, Result<size_t> got) {
  std::unique_ptr<Piece> piece(static_cast<Piece*>(read));
  if (!got.ok()) {
    // As ReplicaIo::Read does: the next reads try this node last for a while.
    if (rpc::IsTransportError(got.status().code())) client_.data().Unreachable(piece->replica.node);
    // Whatever went wrong (node gone, damaged replica, expired capability),
    // File::Read's path knows what to do with it: another replica, a report
    // to meta, a renewed capability.
    LOG_DEBUG("chunk {} on node {}: {}; reading it through the replica path", piece->replica.chunk,
              piece->replica.node, got.status().ToString());
    return ReadOnWorker(std::move(piece));
  }
  IoStats& stats = client_.stats();
  stats.remote_reads++;
  stats.remote_read_bytes += *got;
  client_.data().Reachable(piece->replica.node);
  PieceDone(*piece, got);
}

void BatchIoImpl::PieceDone(Piece& piece, const Result<size_t>& got) {
  if (!got.ok()) return Finish(*piece.op, ToErrno(got.status().code()));
  // Within the file size, bytes the chunk file does not hold are a hole.
  if (*got < piece.buf.size()) std::memset(piece.buf.data() + *got, 0, piece.buf.size() - *got);
  Finish(*piece.op, 0);
}

void BatchIoImpl::Finish(Op& op, int err) {
  if (err != 0) {
    int none = 0;
    op.error.compare_exchange_strong(none, err);
  }
  if (op.pieces_left.fetch_sub(1) != 1) return;
  {
    std::lock_guard lock(buffers_mu_);
    buffers_[op.req.buffer].users--;
  }
  const int error = op.error.load();
  Complete(op.req.user_data, error != 0 ? -int64_t{error} : static_cast<int64_t>(op.bytes));
}

void BatchIoImpl::Complete(uint64_t user_data, int64_t result) {
  std::lock_guard lock(done_mu_);
  done_.push_back({user_data, result});
  in_flight_--;
  done_cv_.notify_all();
}

Result<size_t> BatchIoImpl::Wait(std::span<BatchCompletion> out, size_t min,
                                 std::chrono::milliseconds timeout) {
  if (out.empty()) return size_t{0};
  min = std::min(min, out.size());
  std::unique_lock lock(done_mu_);
  done_cv_.wait_for(lock, timeout, [&] { return done_.size() >= min || in_flight_ == 0; });
  const size_t n = std::min(out.size(), done_.size());
  std::copy_n(done_.begin(), n, out.begin());
  done_.erase(done_.begin(), done_.begin() + static_cast<ptrdiff_t>(n));
  return n;
}

size_t BatchIoImpl::pending() const {
  std::lock_guard lock(done_mu_);
  return in_flight_ + done_.size();
}

void BatchIoImpl::Post(std::function<void()> task) {
  std::lock_guard lock(work_mu_);
  work_.push_back(std::move(task));
  work_cv_.notify_one();
}

void BatchIoImpl::RunWorker() {
  std::unique_lock lock(work_mu_);
  for (;;) {
    work_cv_.wait(lock, [&] { return stop_workers_ || !work_.empty(); });
    if (work_.empty()) return;
    std::function<void()> task = std::move(work_.front());
    work_.pop_front();
    lock.unlock();
    task();
    lock.lock();
  }
}

Status BatchIoImpl::Close() {
  {
    std::unique_lock lock(done_mu_);
    if (closed_.exchange(true)) return Status::Ok();
    done_cv_.wait(lock, [&] { return in_flight_ == 0; });
  }
  std::map<NodeId, std::unique_ptr<Lane>> lanes;
  {
    std::lock_guard lock(lanes_mu_);
    lanes.swap(lanes_);
  }
  for (auto& [node, lane] : lanes) {
    {
      std::lock_guard lock(lane->mu);
      lane->stop = true;
      lane->cv.notify_one();
    }
    lane->thread.join();
  }
  {
    std::lock_guard lock(work_mu_);
    stop_workers_ = true;
    work_cv_.notify_all();
  }
  for (std::thread& worker : workers_) worker.join();
  return Status::Ok();
}

}  // namespace t0fs::client
