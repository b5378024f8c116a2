#include "bench/tier0/say.h"

#include <chrono>
#include <cstdio>

#include <fmt/format.h>

namespace t0fs::bench::tier0 {

void Say(const std::string& text) {
  static const auto start = std::chrono::steady_clock::now();
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  fmt::print(stdout, "[tier0 +{:.1f}s] {}\n", secs, text);
  std::fflush(stdout);
}

}  // namespace t0fs::bench::tier0
