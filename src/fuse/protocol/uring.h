// FUSE over io_uring: requests fetched and answered through io_uring
// commands on /dev/fuse instead of read()/writev() (Linux 6.14+, with the
// fuse module's enable_uring parameter on, and FUSE_OVER_IO_URING agreed at
// INIT).
//
// The kernel keeps one queue per CPU and hands a request to an entry of the
// queue of the CPU the caller runs on. Each queue gets `threads_per_queue`
// threads; each thread owns an io_uring ring (128-byte SQEs, 32-byte CQEs)
// and one entry: a header buffer (InHeader, the op's fixed arguments, the
// entry's commit id and payload size) and a payload buffer (the remaining
// arguments, e.g. WRITE data; and the answer). A thread registers its entry,
// waits for its completion (= a request), rebuilds the request as read()
// would have returned it — InHeader, fixed arguments, payload contiguous,
// without copying the payload: it is received right behind the space for the
// headers — hands it to the RequestProcessor, and answers with
// COMMIT_AND_FETCH, which also waits for the next request. One system call
// per request instead of two, and no wake-up of an idle reader.
//
// The /dev/fuse readers (Session) keep running beside: INTERRUPT, FORGET and
// requests sent before every queue is registered come that way.
//
// Ending: an unmount or abort completes every entry with ENOTCONN/ENODEV
// (ended() turns true); Stop() wakes every thread through an eventfd polled
// in its ring, and each exits after the request it is serving; closing a
// ring cancels its entry in the kernel. Never a request to its own mount.
//
// Thread safety: all methods may be called from any thread.
#pragma once

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "common/fd.h"
#include "common/status.h"
#include "fuse/protocol/processor.h"

namespace t0fs::fuse {

struct UringOptions {
  size_t threads_per_queue = 2;
  size_t payload_size = 1u << 20;  // >= the kernel's max(max_write, max_pages pages)
  size_t first_slot = 0;           // in-flight slots [first_slot, first_slot + threads())
  size_t reply_buffer = 1u << 20;
};

// Queues the kernel uses: one per possible CPU.
size_t UringQueueCount();

// Slots of the RequestProcessor's in-flight table the queues need.
size_t UringThreads(const UringOptions& options);

class UringQueues {
 public:
  // Registers every thread's entry on `device` (INIT must already have agreed
  // FUSE_OVER_IO_URING). Fails (and starts nothing) if a ring cannot be set up
  // or the kernel refuses the first registration; the caller then serves by
  // /dev/fuse alone. `processor` and `device` must outlive the queues.
  static Result<std::unique_ptr<UringQueues>> Start(int device, RequestProcessor& processor,
                                                    const UringOptions& options);
  ~UringQueues();  // Stop() and Join()

  void Stop();
  void Join();
  bool ended() const { return ended_.load(); }
  size_t queues() const { return queues_; }
  size_t threads() const { return threads_.size(); }
  uint64_t requests() const { return requests_.load(std::memory_order_relaxed); }
  Status status() const;

 private:
  struct Worker;
  UringQueues(RequestProcessor& processor, int device);  // in uring.cc, where Worker is complete
  void Run(Worker& w);
  void Fail(const Status& st);

  RequestProcessor& processor_;
  int device_;
  size_t queues_ = 0;
  UniqueFd stop_event_;
  std::vector<std::unique_ptr<Worker>> workers_;
  std::vector<std::thread> threads_;
  std::atomic<bool> ended_{false};
  std::atomic<uint64_t> requests_{0};
  std::mutex start_mu_;  // with start_cv_: Start waits for every registration
  std::condition_variable start_cv_;
  std::mutex join_mu_;
  mutable std::mutex mu_;  // guards error_
  Status error_;
};

}  // namespace t0fs::fuse
