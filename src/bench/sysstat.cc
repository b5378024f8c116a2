#include "bench/sysstat.h"

#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>

#include "common/clock.h"

namespace t0fs::bench {

CpuSample SampleCpu() {
  CpuSample s;
  s.wall_ns = MonoNanos();
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  s.proc_user_s = static_cast<double>(ru.ru_utime.tv_sec) + ru.ru_utime.tv_usec / 1e6;
  s.proc_sys_s = static_cast<double>(ru.ru_stime.tv_sec) + ru.ru_stime.tv_usec / 1e6;
  if (FILE* f = std::fopen("/proc/stat", "r")) {
    unsigned long long v[8] = {};
    if (std::fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3],
                    &v[4], &v[5], &v[6], &v[7]) == 8) {
      s.m_user = v[0];
      s.m_nice = v[1];
      s.m_sys = v[2];
      s.m_idle = v[3];
      s.m_iowait = v[4];
      s.m_irq = v[5];
      s.m_softirq = v[6];
      s.m_steal = v[7];
    }
    std::fclose(f);
  }
  return s;
}

CpuUsage CpuBetween(const CpuSample& begin, const CpuSample& end) {
  CpuUsage u;
  u.wall_s = static_cast<double>(end.wall_ns - begin.wall_ns) / 1e9;
  u.user_s = end.proc_user_s - begin.proc_user_s;
  u.sys_s = end.proc_sys_s - begin.proc_sys_s;
  u.cores = std::thread::hardware_concurrency();
  if (u.wall_s > 0) u.proc_util_pct = 100.0 * (u.user_s + u.sys_s) / u.wall_s;
  auto d = [](uint64_t a, uint64_t b) { return static_cast<double>(b >= a ? b - a : 0); };
  double user = d(begin.m_user, end.m_user) + d(begin.m_nice, end.m_nice);
  double sys = d(begin.m_sys, end.m_sys) + d(begin.m_irq, end.m_irq) +
               d(begin.m_softirq, end.m_softirq);
  double idle = d(begin.m_idle, end.m_idle);
  double iowait = d(begin.m_iowait, end.m_iowait);
  double steal = d(begin.m_steal, end.m_steal);
  double total = user + sys + idle + iowait + steal;
  if (total > 0) {
    u.machine_user_pct = 100.0 * user / total;
    u.machine_sys_pct = 100.0 * sys / total;
    u.machine_iowait_pct = 100.0 * iowait / total;
    u.machine_busy_pct = 100.0 * (user + sys + steal) / total;
  }
  return u;
}

CpuUsage CombineCpu(const CpuUsage& a, const CpuUsage& b, int b_weight_of) {
  // `a` already stands for b_weight_of - 1 processes; `b` is one more.
  CpuUsage c = a;
  double n = b_weight_of;
  c.wall_s = std::max(a.wall_s, b.wall_s);
  c.user_s = a.user_s + b.user_s;
  c.sys_s = a.sys_s + b.sys_s;
  c.proc_util_pct = a.proc_util_pct + b.proc_util_pct;
  auto avg = [n](double x, double y) { return (x * (n - 1) + y) / n; };
  c.machine_user_pct = avg(a.machine_user_pct, b.machine_user_pct);
  c.machine_sys_pct = avg(a.machine_sys_pct, b.machine_sys_pct);
  c.machine_iowait_pct = avg(a.machine_iowait_pct, b.machine_iowait_pct);
  c.machine_busy_pct = avg(a.machine_busy_pct, b.machine_busy_pct);
  c.cores = a.cores + b.cores;
  return c;
}

uint64_t PeakRssBytes() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::stoull(line.substr(6)) * 1024;
  }
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<uint64_t>(ru.ru_maxrss) * 1024;
}

}  // namespace t0fs::bench
