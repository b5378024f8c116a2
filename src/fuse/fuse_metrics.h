// FuseMetrics: what a mount records per kernel request, and the client
// (libt0fs) counters it exposes (docs/operations.md has the table).
//
//   t0fs_fuse_ops_total{op, result}        counter; result "ok" or the errno
//                                          answered, lower case ("enoent")
//   t0fs_fuse_op_duration_seconds{op}      histogram, from the request read
//                                          to the reply written
//
// Record() is on every request's path: the per-opcode children are resolved
// on first use and then cached in atomic slots (per opcode, per errno), so
// after warm-up it costs three relaxed adds and a binary search over the
// buckets: no lock, no allocation.
//
// Thread safety: Record() from any thread. The registry must outlive it.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <tuple>
#include <utility>

#include "fuse/protocol/abi.h"
#include "metrics/registry.h"
#include "t0fs/client.h"

namespace t0fs::fuse {

class FuseMetrics {
 public:
  explicit FuseMetrics(metrics::Registry& registry);
  FuseMetrics(const FuseMetrics&) = delete;
  FuseMetrics& operator=(const FuseMetrics&) = delete;

  // `error`: the errno answered (0: success or no reply).
  void Record(uint32_t opcode, int error, std::chrono::nanoseconds elapsed) {
    if (opcode >= abi::kMaxOpcode) return;  // CUSE and unknown opcodes
    Op& op = ops_[opcode];
    metrics::Histogram* latency = op.latency.load(std::memory_order_acquire);
    size_t slot = error >= 0 && static_cast<size_t>(error) < kErrnoSlots ? static_cast<size_t>(error) : kOtherSlot;
    metrics::Counter* counter = op.results[slot].load(std::memory_order_acquire);
    if (latency == nullptr || counter == nullptr) {
      std::tie(latency, counter) = Resolve(opcode, error, slot);
    }
    latency->ObserveDuration(elapsed);
    counter->Inc();
  }

 private:
  // Slots 0 (ok) .. 133 (EHWPOISON, the largest errno Linux defines), and
  // one for anything else (such a child is looked up under the lock).
  static constexpr size_t kErrnoSlots = 134;
  static constexpr size_t kOtherSlot = kErrnoSlots;
  // Children are created on an op's first use, so a scrape shows only the
  // ops and results that happened (not 64 opcodes' empty histograms).
  struct Op {
    std::atomic<metrics::Histogram*> latency{nullptr};
    std::array<std::atomic<metrics::Counter*>, kErrnoSlots + 1> results{};  // by errno
  };
  std::pair<metrics::Histogram*, metrics::Counter*> Resolve(uint32_t opcode, int error, size_t slot);

  metrics::Family<metrics::Counter>* ops_family_;
  metrics::Family<metrics::Histogram>* latency_family_;
  std::mutex mu_;  // serialises Resolve (the families lock themselves; this only avoids duplicate work)
  std::unique_ptr<Op[]> ops_;  // indexed by opcode, abi::kMaxOpcode entries
};

// Registers the client's counters (bytes and reads by path local/remote,
// checksum errors, failovers), read from client.counters() at scrape time:
// libt0fs counts them anyway, so nothing is counted twice. `client` must
// outlive the registry's server.
void AddClientMetrics(metrics::Registry& registry, const client::Client& client);

}  // namespace t0fs::fuse
