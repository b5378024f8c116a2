#include "bench/mlperf/step_barrier.h"

namespace t0fs::bench::mlperf {

void StepBarrier::Arrive() {
  std::unique_lock<std::mutex> lock(mu_);
  if (aborted_) return;
  uint64_t gen = generation_;
  if (++arrived_ == local_) {
    arrived_ = 0;
    if (comm_.size() == 1) {
      ++generation_;
      cv_.notify_all();
      return;
    }
    pending_ = true;
    cv_.notify_all();
  }
  cv_.wait(lock, [&] { return generation_ != gen || aborted_; });
}

void StepBarrier::Serve() {
  if (comm_.size() == 1) return;
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    cv_.wait(lock, [&] { return pending_ || left_ == local_ || aborted_; });
    if (!pending_) return;
    lock.unlock();
    comm_.Barrier();
    lock.lock();
    pending_ = false;
    ++generation_;
    cv_.notify_all();
  }
}

void StepBarrier::Leave() {
  std::lock_guard<std::mutex> lock(mu_);
  ++left_;
  cv_.notify_all();
}

void StepBarrier::Abort() {
  std::lock_guard<std::mutex> lock(mu_);
  aborted_ = true;
  cv_.notify_all();
}

}  // namespace t0fs::bench::mlperf
