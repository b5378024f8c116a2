// StartGate: lines worker threads up so the measured interval starts for all
// of them at once (after every thread has opened its files and built its
// engine). Thread safety: all methods are thread-safe.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <mutex>

namespace t0fs::bench {

class StartGate {
 public:
  // Worker: "my setup is done".
  void Ready() {
    std::lock_guard<std::mutex> lock(mu_);
    ++ready_;
    cv_.notify_all();
  }
  // Worker: blocks until Go().
  void WaitGo() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [this] { return go_; });
  }
  // Coordinator: blocks until `count` workers are ready.
  void WaitReady(uint32_t count) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [this, count] { return ready_ >= count; });
  }
  void Go() {
    std::lock_guard<std::mutex> lock(mu_);
    go_ = true;
    cv_.notify_all();
  }

 private:
  std::mutex mu_;  // guards ready_ and go_
  std::condition_variable cv_;
  uint32_t ready_ = 0;
  bool go_ = false;
};

}  // namespace t0fs::bench
