// Progress: the live status line on stderr during a phase
// ("write  812 MiB/s  812 IOPS  elapsed 4.0s  ETA 6s"), redrawn twice a
// second and erased when the phase ends. Shown only when stdout and stderr
// are terminals and --quiet is not given (ProgressWanted()).
//
// Thread safety: the probe is called from the progress thread; it must read
// only atomics.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace t0fs::bench {

struct ProgressSnapshot {
  uint64_t bytes = 0;
  uint64_t ops = 0;
  double fraction = -1;  // 0..1 done, or < 0 when unknown
};

bool ProgressWanted(bool quiet);

class Progress {
 public:
  Progress(bool enabled, std::string phase, std::function<ProgressSnapshot()> probe);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;
  void Stop();

 private:
  void Loop();

  std::string phase_;
  std::function<ProgressSnapshot()> probe_;
  std::mutex mu_;  // guards stop_
  std::condition_variable cv_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace t0fs::bench
