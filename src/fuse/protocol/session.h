// Session: the worker threads that serve one FUSE connection.
//
// Each worker owns a /dev/fuse fd (worker 0 the mount's fd, the others clones
// made with FUSE_DEV_IOC_CLONE, so each has its own processing queue and the
// kernel's exclusive wake-up hands each request to exactly one idle worker),
// a page-aligned request buffer big enough for a 1 MiB WRITE, and a reply
// buffer; it loops: blocking read() -> RequestProcessor -> writev(). Nothing
// is allocated per request.
//
// Ending: when the mount goes away (umount, fusermount3 -u) every read()
// fails with ENODEV and the workers exit (ended() turns true). To stop a live
// session, the owner calls Stop(): it cancels every worker (pthread_cancel),
// which a worker takes only inside its read of /dev/fuse (its cancel state is
// disabled everywhere else), so one asleep there leaves at once and one
// serving a request leaves after it. The session never sends a request to
// its own mount to wake itself: a server waiting on itself cannot be killed.
//
// Thread safety: all methods may be called from any thread; Join() may be
// called concurrently (one joins, the others wait).
#pragma once

#include <sys/types.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "common/fd.h"
#include "common/status.h"
#include "fuse/protocol/processor.h"

namespace t0fs::fuse {

struct SessionOptions {
  size_t threads = 4;
  size_t max_write = 1u << 20;     // negotiated; sizes the request buffer
  size_t reply_buffer = 1u << 20;  // largest READ/READDIR answer (max_read, max_pages)
  uint32_t proto_minor = abi::kMaxMinor;
  bool trace = false;
  FuseMetrics* metrics = nullptr;  // optional; must outlive the session
  // In-flight slots beyond the workers' (for the FUSE-over-io_uring threads,
  // which share this session's processor: slots [threads, threads + extra)).
  size_t extra_slots = 0;
};

class Session {
 public:
  // Starts the workers on `device` (the fd INIT was answered on). `handler`
  // must outlive the session.
  static Result<std::unique_ptr<Session>> Start(UniqueFd device, RequestHandler& handler,
                                                const SessionOptions& options);
  // Joins the workers (the owner must have ended or stopped the session).
  ~Session();

  // Makes every worker exit after the request it is serving (workers idle
  // in read leave at once). Does not wait: Join() does.
  void Stop();
  // Workers still serving.
  size_t alive() const { return alive_.load(); }
  // The kernel closed the connection (unmounted or aborted).
  bool ended() const { return ended_.load(); }
  // Waits until every worker has exited.
  void Join();
  // After Join: closes the device fds. With the last one closed the kernel
  // aborts the connection, so requests still coming (open files of a lazily
  // unmounted mount) fail with ENOTCONN instead of waiting for a worker.
  void CloseDevices();
  // OK, or the first unexpected error a worker died of.
  Status status() const;

  RequestProcessor& processor() { return processor_; }
  // The connection's /dev/fuse fd (the one INIT was answered on).
  int device() const { return fds_.empty() ? -1 : fds_[0].get(); }

 private:
  Session(RequestHandler& handler, const SessionOptions& options);
  void WorkerLoop(size_t index);
  void WorkerMain(size_t index);

  SessionOptions options_;
  RequestProcessor processor_;
  std::vector<UniqueFd> fds_;  // fds_[i] belongs to worker i
  std::vector<std::unique_ptr<WorkerContext>> contexts_;
  std::vector<std::thread> threads_;
  std::atomic<size_t> alive_{0};
  std::atomic<bool> ended_{false};
  std::atomic<bool> stopping_{false};
  std::mutex exit_mu_;        // guards exited_; Stop cancels under it
  std::vector<bool> exited_;  // exited_[i]: worker i has left (or is leaving) WorkerMain
  std::mutex join_mu_;     // serializes Join and CloseDevices; taken before mu_
  mutable std::mutex mu_;  // guards error_
  Status error_;
};

}  // namespace t0fs::fuse
