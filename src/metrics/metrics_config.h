// Configuration of a daemon's /metrics endpoint. A daemon config embeds it
// and forwards Visit(), which gives the flag --metrics-listen and the key
// metrics-listen in the daemon's TOML section:
//
//   struct DataConfig {
//     metrics::MetricsConfig metrics;
//     template <class V> void Visit(V& v) { ...; metrics.Visit(v); }
//   };
#pragma once

#include <string>

namespace t0fs::metrics {

struct MetricsConfig {
  // host:port of the HTTP endpoint serving /metrics; empty disables it.
  // Port 0 (the default) takes a free port, printed at start: several daemons
  // on one host never clash, but Prometheus needs a fixed port, so a
  // deployment sets one per daemon (docs/metrics.md suggests 9700-9702).
  // The default binds loopback only: metrics reveal paths and node names,
  // so exposing them on a network is a deliberate choice.
  std::string listen = "127.0.0.1:0";

  template <class V>
  void Visit(V& v) {
    v("metrics-listen", listen,
      "host:port serving Prometheus /metrics (port 0: any free port; empty: disabled)");
  }
};

}  // namespace t0fs::metrics
