// ServerMetrics: what rpc::Server records about the requests it dispatches,
// when its options carry a metrics registry (docs/operations.md lists them):
//
//   t0fs_rpc_server_requests_total{method, result}      counter
//   t0fs_rpc_server_request_duration_seconds{method}    histogram (handler time)
//   t0fs_rpc_server_requests_in_flight                  gauge: being handled now
//   t0fs_rpc_server_connections                         gauge: open connections
//   t0fs_rpc_server_bytes_total{direction}              counter: frame bytes in/out
//
// Every method the server has a handler for is resolved at construction, so
// the per-request cost is a hash lookup the dispatcher does anyway, two clock
// reads and a few relaxed atomics: no lock, no allocation.
//
// Thread safety: every method from any thread. The registry must outlive it.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

#include "metrics/op_metrics.h"
#include "metrics/registry.h"
#include "rpc/methods.h"

namespace t0fs::rpc {

class ServerMetrics {
 public:
  ServerMetrics(metrics::Registry& registry, const std::vector<Method>& methods);

  void Record(Method method, StatusCode code, std::chrono::nanoseconds elapsed) {
    auto it = methods_.find(static_cast<uint16_t>(method));
    if (it != methods_.end()) it->second->Record(code, elapsed);
  }

  metrics::Gauge& in_flight() { return *in_flight_; }
  metrics::Gauge& connections() { return *connections_; }
  metrics::Counter& bytes_in() { return *bytes_in_; }
  metrics::Counter& bytes_out() { return *bytes_out_; }

 private:
  // Built once in the constructor, read-only afterwards.
  std::unordered_map<uint16_t, std::unique_ptr<metrics::OpMetrics>> methods_;
  metrics::Gauge* in_flight_;
  metrics::Gauge* connections_;
  metrics::Counter* bytes_in_;
  metrics::Counter* bytes_out_;
};

}  // namespace t0fs::rpc
