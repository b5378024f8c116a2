#include "bench/mlperf/record_size.h"

#include <algorithm>
#include <cmath>

namespace t0fs::bench::mlperf {

double LegacyNormal::Uniform() {
  uint32_t a = static_cast<uint32_t>(mt_()) >> 5;
  uint32_t b = static_cast<uint32_t>(mt_()) >> 6;
  return (a * 67108864.0 + b) / 9007199254740992.0;
}

double LegacyNormal::Gauss() {
  if (has_gauss_) {
    has_gauss_ = false;
    return gauss_;
  }
  double x1, x2, r2;
  do {
    x1 = 2.0 * Uniform() - 1.0;
    x2 = 2.0 * Uniform() - 1.0;
    r2 = x1 * x1 + x2 * x2;
  } while (r2 >= 1.0 || r2 == 0.0);
  double f = std::sqrt(-2.0 * std::log(r2) / r2);
  gauss_ = f * x1;
  has_gauss_ = true;
  return f * x2;
}

RecordDims::RecordDims(double record_length, double record_length_stdev)
    : dim_(static_cast<uint64_t>(std::sqrt(record_length))),
      dim_stdev_(record_length > 0 ? record_length_stdev / 2.0 / std::sqrt(record_length) : 0),
      normal_(kSeed) {}

std::pair<uint64_t, uint64_t> RecordDims::Next() {
  if (dim_stdev_ <= 0) return {dim_, dim_};
  auto side = [this] {
    double d = normal_.Next(static_cast<double>(dim_), dim_stdev_);
    // Python int() truncates toward zero, then max(…, 1).
    double t = std::trunc(d);
    return t < 1 ? uint64_t{1} : static_cast<uint64_t>(t);
  };
  uint64_t d1 = side();
  uint64_t d2 = side();
  return {d1, d2};
}

void RecordDims::Skip(uint64_t files) {
  if (dim_stdev_ <= 0) return;
  for (uint64_t idx = 0; idx < 2 * files; ++idx) normal_.Next(0, 1);
}

}  // namespace t0fs::bench::mlperf
