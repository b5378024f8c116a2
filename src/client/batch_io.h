// BatchIoImpl: the implementation of t0fs::client::BatchIo (t0fs/batch_io.h).
//
// A request is checked at Submit (buffer range, File) and becomes an Op;
// a read Op is split at chunk boundaries into pieces, each routed by
// ReplicaIo's ReadOrder:
// - first replica remote: to that node's lane, a thread that keeps up to
//   node_depth pieces in flight through DataClient::ReadStream;
// - first replica local, no healthy replica, passthrough-held inode, or a
//   piece that failed in its lane: to the workers, which read it through
//   ReplicaIo::Read (local bypass with checksums, failover, capability
//   renewal, degraded reads: exactly File::Read's path).
// Writes go whole to the workers (File::Write). An Op completes when its
// last piece does: its bytes, or the first piece's error.
//
// Locks (none held across I/O, none taken under another): buffers_mu_,
// done_mu_, work_mu_, lanes_mu_, and each lane's mu.
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "client/client_impl.h"
#include "client/data_client.h"
#include "client/file_impl.h"
#include "t0fs/batch_io.h"

namespace t0fs::client {

class BatchIoImpl final : public BatchIo {
 public:
  BatchIoImpl(ClientImpl& client, const BatchIoOptions& options);
  ~BatchIoImpl() override;

  Result<uint32_t> RegisterBuffer(std::span<std::byte> memory) override;
  Status UnregisterBuffer(uint32_t index) override;
  Status Submit(std::span<const BatchRequest> requests) override;
  Result<size_t> Wait(std::span<BatchCompletion> out, size_t min,
                      std::chrono::milliseconds timeout) override;
  size_t pending() const override;
  Status Close() override;

 private:
  // One submitted request.
  struct Op {
    BatchRequest req;
    FileImpl* file = nullptr;
    std::shared_ptr<InodeState> state;  // outlives a Close of the File meanwhile
    std::span<std::byte> mem;           // the request's range of its buffer
    uint64_t bytes = 0;                 // the result when every piece succeeds
    std::atomic<uint32_t> pieces_left{0};
    std::atomic<int> error{0};  // errno of the first piece that failed
  };
  // The part of a read within one chunk.
  struct Piece : DataClient::StreamRead {
    std::shared_ptr<Op> op;
    uint64_t index = 0;  // of the chunk
  };
  // The pieces bound for one remote node, and the thread that streams them.
  struct Lane {
    NodeId node;
    std::mutex mu;  // guards queue and stop
    std::condition_variable cv;
    std::deque<std::unique_ptr<Piece>> queue;
    // queue.size(), read without the lock: the replica choice counts queued
    // pieces as load, so that one batch spreads over every replica's node.
    std::atomic<uint64_t> queued{0};
    bool stop = false;
    std::thread thread;
  };

  // The request's error, or null when it can start (an Op for it).
  Result<std::shared_ptr<Op>> Check(const BatchRequest& req);
  void StartRead(const std::shared_ptr<Op>& op);
  void StartWrite(const std::shared_ptr<Op>& op);
  // A piece through File::Read's replica path, on a worker.
  void ReadOnWorker(std::unique_ptr<Piece> piece);
  void ToLane(NodeId node, std::unique_ptr<Piece> piece);
  // Pieces waiting in `node`'s lane (not yet sent).
  uint64_t Queued(NodeId node);
  void RunLane(Lane& lane);
  void LaneDone(DataClient::StreamRead* read, Result<size_t> got);
  // A piece of `op` ended (`got` bytes of `want`, or an error): the bytes
  // the replica does not hold within the file's size are a hole.
  void PieceDone(Piece& piece, const Result<size_t>& got);
  // One piece of `op` ended (err: its errno, or 0); the last completes it.
  void Finish(Op& op, int err);
  void Complete(uint64_t user_data, int64_t result);
  void Post(std::function<void()> task);
  void RunWorker();

  ClientImpl& client_;
  const BatchIoOptions options_;
  std::atomic<bool> closed_{false};

  struct Registered {
    std::span<std::byte> memory;  // empty: a free index
    uint64_t users = 0;           // requests in flight on it
  };
  mutable std::mutex buffers_mu_;  // guards buffers_
  std::vector<Registered> buffers_;

  mutable std::mutex done_mu_;  // guards done_ and in_flight_
  std::condition_variable done_cv_;
  std::deque<BatchCompletion> done_;
  size_t in_flight_ = 0;

  std::mutex work_mu_;  // guards work_ and stop_workers_
  std::condition_variable work_cv_;
  std::deque<std::function<void()>> work_;
  bool stop_workers_ = false;
  std::vector<std::thread> workers_;

  std::mutex lanes_mu_;  // guards lanes_
  std::map<NodeId, std::unique_ptr<Lane>> lanes_;
};

}  // namespace t0fs::client
