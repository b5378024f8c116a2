// metrics_demo: serves a small registry on /metrics for the Prometheus
// integration test (prometheus_scrape.sh). Prints its URL on stdout, then
// runs until SIGINT or SIGTERM.
//   metrics_demo [listen]      (default 127.0.0.1:0)
#include <signal.h>

#include <cstdio>
#include <ctime>

#include "metrics/metrics_server.h"
#include "metrics/process_metrics.h"
#include "metrics/registry.h"

int main(int argc, char** argv) {
  using namespace t0fs::metrics;
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);  // before the server thread exists

  Registry registry;
  AddProcessMetrics(registry);
  AddBuildInfo(registry, "metrics_demo");
  registry.AddCounter("t0fs_demo_events_total", "Events by kind.", {"kind"})
      .With({{"kind", "fixed"}})
      .Inc(42);
  Counter& ticks = registry.AddCounter("t0fs_demo_ticks_total", "Ticks, one per 100 ms.").With({});
  registry.AddGauge("t0fs_demo_path_info", "A label value that needs escaping.", {"path"})
      .With({{"path", "a \"quoted\" \\ back\nslash"}})
      .Set(1);
  Histogram& latency =
      registry.AddHistogram("t0fs_demo_latency_seconds", "Latency of demo operations.", {"op"})
          .With({{"op", "read"}});
  for (double seconds : {0.001, 0.01, 0.1}) latency.Observe(seconds);
  registry.AddCallback(MetricType::kGauge, "t0fs_demo_volume_chunks", "Chunks per volume.",
                       {"volume"}, [](SampleSink& sink) {
                         sink.Add({"/v1"}, 3);
                         sink.Add({"/v2"}, 5);
                       });

  MetricsServer server(registry, {.name = "t0fs metrics_demo"});
  t0fs::Status st = server.Start(argc > 1 ? argv[1] : "127.0.0.1:0");
  if (!st.ok()) {
    std::fprintf(stderr, "metrics_demo: %s\n", st.ToString().c_str());
    return 1;
  }
  std::printf("metrics: %s\n", server.url().c_str());
  std::fflush(stdout);
  timespec tick{0, 100'000'000};
  for (;;) {
    int sig = sigtimedwait(&stop_signals, nullptr, &tick);
    if (sig == SIGINT || sig == SIGTERM) break;
    ticks.Inc();
  }
  server.Stop();
  return 0;
}
