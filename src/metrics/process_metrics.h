// Metrics every t0fs daemon exports about itself, read from /proc at scrape
// time, under the names Prometheus client libraries use so that standard
// dashboards work:
//   process_cpu_seconds_total       user + system CPU time
//   process_resident_memory_bytes   resident set size
//   process_virtual_memory_bytes    virtual memory size
//   process_open_fds                open file descriptors
//   process_max_fds                 the RLIMIT_NOFILE soft limit
//   process_start_time_seconds      start time, seconds since the Unix epoch
// and t0fs_build_info{component, version} 1, to tell versions apart.
#pragma once

#include <string_view>

#include "metrics/registry.h"

namespace t0fs::metrics {

// Registers the process_* families (callbacks; no background work).
void AddProcessMetrics(Registry& registry);
// Registers t0fs_build_info{component="<component>",version="<t0fs version>"} 1.
void AddBuildInfo(Registry& registry, std::string_view component);
// The t0fs version compiled in ("0.1.0").
std::string_view Version();

}  // namespace t0fs::metrics
