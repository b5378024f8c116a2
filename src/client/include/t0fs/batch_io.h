// BatchIo: libt0fs's batched native I/O, in the manner of 3FS's USRBIO.
//
// An application registers its I/O memory once, then submits many reads
// and writes at a time and reaps their completions when it wants them, so
// that one thread keeps a whole node's worth of requests in flight without
// a thread per request:
//
//   - Buffers: RegisterBuffer takes page-aligned memory the caller owns (and
//     keeps alive, unmoved, until UnregisterBuffer or Close) and returns its
//     index. Requests name a buffer by index and a range inside it, so that
//     a request is plain data and a bad range is caught before any I/O.
//   - Submit: each BatchRequest names an open File of the same Client, a
//     direction, a file range and the buffer range; `user_data` comes back
//     in its completion. Requests complete in any order.
//   - Wait: copies completed requests out, waiting until `min` are there,
//     nothing more is in flight, or the timeout passes.
//
// Execution: a read is split at chunk boundaries like File::Read. A piece
// whose chunk has a replica on this node is read from the local chunk file
// (the local bypass; block checksums verified) by a pool of workers; the
// others go to the node of their first replica in read order
// (ReplicaIo's ReadOrder), several requests in flight per node on their own
// connections, the bytes received straight into the registered buffer. A
// piece that fails on its replica (node gone, checksum, expired capability)
// is read again through File::Read's path, which fails over to the other
// replicas and reports the bad one. Writes run concurrently through
// File::Write's path (every replica, the session's versions).
//
// Results follow pread/pwrite: bytes transferred, short at end of file, 0
// past it or for a length of 0; holes read as zeros. Errors are -errno, per
// request; the other requests of the batch are not affected:
//   -EINVAL  unregistered buffer index, or a range outside the buffer
//   -EBADF   no File, a File of another Client, a closed File, or a read of
//            a write-only File (a write of a read-only one)
//   -EIO ... whatever the I/O path returns (ToErrno of its Status)
// Requests of one batch that touch overlapping bytes with at least one
// write among them have no defined order (as with io_uring).
//
// Thread safety: every method may be called from several threads. A File
// named in a request must stay alive (not destroyed) until that request
// completes; closing it meanwhile fails the requests that have not started.
// Close (and the destructor) waits for every request in flight.
//
// Example (error handling trimmed):
//   auto batch = (*client)->OpenBatchIo({});
//   AlignedBuffer mem(64 << 20);                        // page-aligned, ours
//   uint32_t buf = *(*batch)->RegisterBuffer(mem.span());
//   std::vector<t0fs::client::BatchRequest> reqs;
//   for (uint64_t i = 0; i < 64; ++i) {
//     reqs.push_back({.file = file.get(), .op = t0fs::client::BatchOp::kRead,
//                     .offset = i << 20, .length = 1 << 20, .buffer = buf,
//                     .buffer_offset = i << 20, .user_data = i});
//   }
//   (*batch)->Submit(reqs);
//   std::vector<t0fs::client::BatchCompletion> done(64);
//   for (size_t got = 0; got < 64;) {
//     got += *(*batch)->Wait(std::span(done).subspan(got), 1, std::chrono::seconds(10));
//   }
//   // done[k].user_data names the request, done[k].result its bytes or -errno.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <span>

#include "common/status.h"
#include "t0fs/client.h"

namespace t0fs::client {

enum class BatchOp : uint8_t { kRead, kWrite };

struct BatchRequest {
  File* file = nullptr;
  BatchOp op = BatchOp::kRead;
  uint64_t offset = 0;  // in the file
  uint64_t length = 0;
  uint32_t buffer = 0;  // index from RegisterBuffer
  uint64_t buffer_offset = 0;
  uint64_t user_data = 0;  // returned in the completion
};

struct BatchCompletion {
  uint64_t user_data = 0;
  int64_t result = 0;  // bytes transferred, or -errno
};

struct BatchIoOptions {
  // Threads that read local chunk files, run writes and fail reads over.
  // More overlaps more local disk I/O and writes, at the cost of threads.
  uint32_t workers = 4;
  // Requests in flight per remote data node (one connection each). More
  // hides the network's round trip behind transfers, at the cost of
  // connections and server threads on that node.
  uint32_t node_depth = 8;
};

class BatchIo {
 public:
  virtual ~BatchIo() = default;

  // Registers `memory` (page-aligned start; owned by the caller, who keeps
  // it alive until it is unregistered) and returns its index.
  virtual Result<uint32_t> RegisterBuffer(std::span<std::byte> memory) = 0;
  // The index becomes free for reuse; kBusy while requests use the buffer.
  virtual Status UnregisterBuffer(uint32_t index) = 0;

  // Starts every request; a bad one completes with its error. Fails (and
  // starts nothing) only when this BatchIo is closed. Does no data I/O
  // itself, but may wait for meta when a read reaches chunks whose layout
  // is not cached yet (fetched in windows of many chunks).
  virtual Status Submit(std::span<const BatchRequest> requests) = 0;
  // Copies up to out.size() completions into `out`, waiting until at least
  // `min` are ready (min is capped at out.size()), no request is in flight
  // any more, or `timeout` passed. Returns how many were copied.
  virtual Result<size_t> Wait(std::span<BatchCompletion> out, size_t min,
                              std::chrono::milliseconds timeout) = 0;
  // Requests submitted and not yet returned by Wait.
  virtual size_t pending() const = 0;

  // Waits for the requests in flight, then stops the workers. Idempotent.
  virtual Status Close() = 0;
};

}  // namespace t0fs::client
