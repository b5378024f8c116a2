#include "rpc/server_metrics.h"

namespace t0fs::rpc {

ServerMetrics::ServerMetrics(metrics::Registry& registry, const std::vector<Method>& methods) {
  auto& requests = registry.AddCounter("t0fs_rpc_server_requests_total",
                                       "RPC requests handled, by method and result.", {"method", "result"});
  auto& latency = registry.AddHistogram("t0fs_rpc_server_request_duration_seconds",
                                        "RPC handler time, from the request read to the reply ready.",
                                        {"method"});
  for (Method method : methods) {
    methods_.emplace(static_cast<uint16_t>(method),
                     std::make_unique<metrics::OpMetrics>(&requests, &latency,
                                                          metrics::SnakeCaseName(MethodName(method)), "method"));
  }
  in_flight_ = &registry
                    .AddGauge("t0fs_rpc_server_requests_in_flight",
                              "RPC requests being handled (handlers block a server thread each).")
                    .With({});
  connections_ = &registry.AddGauge("t0fs_rpc_server_connections", "Open RPC connections.").With({});
  auto& bytes = registry.AddCounter("t0fs_rpc_server_bytes_total",
                                    "RPC frame bytes received (in) and sent (out), chunk data included.",
                                    {"direction"});
  bytes_in_ = &bytes.With({{"direction", "in"}});
  bytes_out_ = &bytes.With({{"direction", "out"}});
}

}  // namespace t0fs::rpc
