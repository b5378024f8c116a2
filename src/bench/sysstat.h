// CPU and memory accounting around a measured interval: CPU time of this
// process (all threads, getrusage), of the whole machine (/proc/stat), and
// the peak resident set size.
// Thread safety: values; Sample() may be called from any thread.
#pragma once

#include <cstdint>

namespace t0fs::bench {

struct CpuSample {
  uint64_t wall_ns = 0;
  double proc_user_s = 0;
  double proc_sys_s = 0;
  // Machine-wide jiffies from /proc/stat's "cpu" line.
  uint64_t m_user = 0, m_nice = 0, m_sys = 0, m_idle = 0, m_iowait = 0, m_irq = 0, m_softirq = 0,
           m_steal = 0;
};

CpuSample SampleCpu();

struct CpuUsage {
  double wall_s = 0;
  double user_s = 0;          // this process
  double sys_s = 0;           // this process
  double proc_util_pct = 0;   // (user+sys)/wall, 100 = one core busy
  double machine_user_pct = 0;   // of all cores (100 = every core busy)
  double machine_sys_pct = 0;    // incl. irq and softirq
  double machine_iowait_pct = 0;
  double machine_busy_pct = 0;   // everything but idle and iowait
  uint32_t cores = 0;
};

CpuUsage CpuBetween(const CpuSample& begin, const CpuSample& end);
// Combines the usage of several processes (ranks) measured over the same
// interval: process seconds add, machine percentages average.
CpuUsage CombineCpu(const CpuUsage& a, const CpuUsage& b, int b_weight_of);

// Peak resident set size of this process so far, bytes (VmHWM).
uint64_t PeakRssBytes();

}  // namespace t0fs::bench
