// `training search`: the largest number of accelerators that still passes,
// by runs: doubling from --min until a run fails (or --max), then bisection
// between the last pass and the first fail. Assumes AU falls as
// accelerators rise (more ranks share the same storage).
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "common/status.h"

namespace t0fs::bench::mlperf {

struct SearchProbe {
  uint32_t accelerators = 0;
  bool pass = false;
  double au_pct = 0;
  double throughput = 0;  // samples/s
  double io_mib = 0;
};

struct SearchOutcome {
  std::vector<SearchProbe> probes;  // in the order run
  SearchProbe best;                 // accelerators 0 when even --min fails
};

Result<SearchOutcome> SearchMaxAccelerators(
    uint32_t min, uint32_t max, const std::function<Result<SearchProbe>(uint32_t)>& probe);

}  // namespace t0fs::bench::mlperf
