#include "bench/progress.h"

#include <unistd.h>

#include <cstdio>

#include <fmt/format.h>

#include "bench/result.h"
#include "common/clock.h"

namespace t0fs::bench {

bool ProgressWanted(bool quiet) {
  return !quiet && ::isatty(STDOUT_FILENO) == 1 && ::isatty(STDERR_FILENO) == 1;
}

Progress::Progress(bool enabled, std::string phase, std::function<ProgressSnapshot()> probe)
    : phase_(std::move(phase)), probe_(std::move(probe)) {
  if (enabled) thread_ = std::thread([this] { Loop(); });
}

Progress::~Progress() { Stop(); }

void Progress::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void Progress::Loop() {
  const uint64_t start = MonoNanos();
  uint64_t last_ns = start;
  ProgressSnapshot last{};
  bool drawn = false;
  std::unique_lock<std::mutex> lock(mu_);
  while (!cv_.wait_for(lock, std::chrono::milliseconds(500), [this] { return stop_; })) {
    ProgressSnapshot now = probe_();
    uint64_t now_ns = MonoNanos();
    double dt = static_cast<double>(now_ns - last_ns) / 1e9;
    double elapsed = static_cast<double>(now_ns - start) / 1e9;
    std::string line = fmt::format("{:<12}", phase_);
    if (dt > 0) {
      if (now.bytes > 0) {
        line += fmt::format("  {:>11}", FormatBytesPerSec((now.bytes - last.bytes) / dt));
      }
      line += fmt::format("  {:>10}", FormatValue((now.ops - last.ops) / dt,
                                                  now.bytes > 0 ? "IOPS" : "ops/s"));
    }
    line += fmt::format("  elapsed {:.1f}s", elapsed);
    if (now.fraction > 0.001 && now.fraction < 1) {
      line += fmt::format("  ETA {:.0f}s", elapsed * (1 - now.fraction) / now.fraction);
    }
    std::fprintf(stderr, "\r\033[K%s", line.c_str());
    std::fflush(stderr);
    drawn = true;
    last = now;
    last_ns = now_ns;
  }
  if (drawn) {
    std::fprintf(stderr, "\r\033[K");
    std::fflush(stderr);
  }
}

}  // namespace t0fs::bench
