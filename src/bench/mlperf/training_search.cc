#include "bench/mlperf/training_search.h"

namespace t0fs::bench::mlperf {

Result<SearchOutcome> SearchMaxAccelerators(
    uint32_t min, uint32_t max, const std::function<Result<SearchProbe>(uint32_t)>& probe) {
  SearchOutcome out;
  if (min == 0 || max < min) {
    return Status(StatusCode::kInvalidArgument, "search needs 1 <= --min <= --max");
  }
  auto run = [&](uint32_t n) -> Result<SearchProbe> {
    ASSIGN_OR_RETURN(SearchProbe p, probe(n));
    p.accelerators = n;
    out.probes.push_back(p);
    return p;
  };
  ASSIGN_OR_RETURN(SearchProbe first, run(min));
  if (!first.pass) return out;
  out.best = first;
  uint32_t pass = min;
  uint32_t fail = 0;  // 0: none seen
  while (pass < max) {
    uint32_t next = pass > max / 2 ? max : pass * 2;
    ASSIGN_OR_RETURN(SearchProbe p, run(next));
    if (!p.pass) {
      fail = next;
      break;
    }
    pass = next;
    out.best = p;
  }
  while (fail != 0 && fail - pass > 1) {
    uint32_t mid = pass + (fail - pass) / 2;
    ASSIGN_OR_RETURN(SearchProbe p, run(mid));
    if (p.pass) {
      pass = mid;
      out.best = p;
    } else {
      fail = mid;
    }
  }
  return out;
}

}  // namespace t0fs::bench::mlperf
