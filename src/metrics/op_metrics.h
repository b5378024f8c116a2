// OpMetrics: the count, result and latency of one kind of operation (a FUSE
// op, a meta op, an RPC method), recorded into two shared families:
//
//   <prefix>_ops_total{op, result}            counter; result "ok" or the status
//                                             code in snake_case ("not_found")
//   <prefix>_op_duration_seconds{op}          histogram
//
//   auto& ops = registry.AddCounter("t0fs_fuse_ops_total", "FUSE operations.", {"op", "result"});
//   auto& lat = registry.AddHistogram("t0fs_fuse_op_duration_seconds", "FUSE latency.", {"op"});
//   OpMetrics lookup(ops, lat, "lookup");        // once, at setup
//   lookup.Record(st.code(), elapsed);           // per operation
//
// Record() is lock-free: the ok child is resolved at construction, and the
// child of each error code is resolved on its first occurrence and then
// cached (negative lookups are frequent, so errors must be cheap too).
//
// Thread safety: Record() from any thread. Not copyable or movable (the
// cache holds pointers into the families, which must outlive it).
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <deque>
#include <mutex>
#include <string>
#include <string_view>

#include "common/status.h"
#include "metrics/family.h"

namespace t0fs::metrics {

// "ok" for kOk, else the code's name in snake_case without the k: kNotFound
// gives "not_found", kRpcTimeout "rpc_timeout". A bounded set, fit for a label.
std::string_view ResultLabel(StatusCode code);
// "ok" for 0, else the errno's symbolic name in lower case: ENOENT gives
// "enoent". Unknown numbers give "errno_<n>" (bounded: errno values are small).
std::string ErrnoLabel(int err);
// An identifier in PascalCase as a label value: "ChunkRead" gives
// "chunk_read", "GETATTR" gives "getattr" (all-caps words are lowered whole).
std::string SnakeCaseName(std::string_view name);

class OpMetrics {
 public:
  // `ops` must have labels {op, result}; `latency` {op}. Either may be null.
  // `label` renames the "op" label (the RPC server's families use "method").
  OpMetrics(Family<Counter>* ops, Family<Histogram>* latency, std::string_view op,
            std::string_view label = "op");
  OpMetrics(const OpMetrics&) = delete;
  OpMetrics& operator=(const OpMetrics&) = delete;

  void Record(StatusCode code, std::chrono::nanoseconds elapsed) {
    if (latency_ != nullptr) latency_->ObserveDuration(elapsed);
    Count(code);
  }
  void Count(StatusCode code) {
    if (ops_ == nullptr) return;
    if (code == StatusCode::kOk) {
      ok_->Inc();
      return;
    }
    const Entry* entry = slots_[Slot(code)].load(std::memory_order_acquire);
    if (entry != nullptr && entry->code == code) {
      entry->counter->Inc();
    } else {
      CountSlow(code);
    }
  }

 private:
  struct Entry {
    StatusCode code;
    Counter* counter;
  };
  static constexpr size_t kSlots = 16;
  static size_t Slot(StatusCode code) { return static_cast<size_t>(code) % kSlots; }
  void CountSlow(StatusCode code);

  Family<Counter>* ops_;
  const std::string label_;
  const std::string op_;
  Counter* ok_ = nullptr;
  Histogram* latency_ = nullptr;
  // Slot per code (by number modulo kSlots); a colliding code replaces the
  // entry, which stays alive in entries_, so a reader never sees it freed.
  std::array<std::atomic<const Entry*>, kSlots> slots_{};
  std::mutex mu_;              // guards entries_
  std::deque<Entry> entries_;  // stable addresses
};

}  // namespace t0fs::metrics
