// One fsx run: generates each op, applies it to the file and the model,
// checks, and on the first failure prints everything needed to replay it
// (seed, step, op, the 20 ops before, the differing bytes). Owns the model,
// the file's descriptors and the op history.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <vector>

#include "config.h"
#include "failure.h"
#include "model.h"
#include "op.h"

namespace t0fs::fsx {

class Runner {
 public:
  explicit Runner(Config config) : config_(std::move(config)) {}

  // 0 when every step matched the model (or --replay-to was reached), 1 on
  // a failure, 2 when the run could not start.
  int Run();

 private:
  void ReportFailure(uint64_t step, const Failure& failure, double seconds) const;
  // "the wrong bytes at 0x… are what step K wrote": the latest write of the
  // history whose pattern matches the wrong bytes found (up to 16), if any.
  std::string WhoWrote(const Failure& failure) const;
  // Every option that shapes the sequence and its checks, as on the command line.
  std::string Options() const;
  std::string ReplayCommand(uint64_t step) const;
  // One line: ops per kind with the seconds they took, skipped ops, the
  // seconds and bytes of the checks.
  void PrintSummary(bool passed, uint64_t steps, double seconds, uint64_t skipped,
                    uint64_t bytes_checked) const;

  double Seconds() const;

  const Config config_;
  std::chrono::steady_clock::time_point start_;
  std::vector<Op> history_;
  std::array<uint64_t, static_cast<size_t>(OpKind::kCount)> counts_{};
  std::array<double, static_cast<size_t>(OpKind::kCount)> seconds_{};  // the ops themselves
  double check_seconds_ = 0;                                           // the checks after them
};

}  // namespace t0fs::fsx
