// Formatting of result values for tables and reports (result.h):
// "1.2 GiB/s", "123 us", "45.6k IOPS".
#include <string>

#include <fmt/format.h>

#include "bench/result.h"

namespace t0fs::bench {

std::string FormatBytesPerSec(double bps) {
  double mib = bps / (1024.0 * 1024.0);
  if (mib >= 10000) return fmt::format("{:.2f} GiB/s", mib / 1024);
  if (mib >= 100) return fmt::format("{:.0f} MiB/s", mib);
  if (mib >= 1) return fmt::format("{:.1f} MiB/s", mib);
  return fmt::format("{:.1f} KiB/s", bps / 1024);
}

std::string FormatNanos(double ns) {
  if (ns >= 10e9) return fmt::format("{:.1f} s", ns / 1e9);
  if (ns >= 10e6) return fmt::format("{:.1f} ms", ns / 1e6);
  if (ns >= 1e6) return fmt::format("{:.2f} ms", ns / 1e6);
  if (ns >= 10e3) return fmt::format("{:.1f} us", ns / 1e3);
  if (ns >= 1e3) return fmt::format("{:.2f} us", ns / 1e3);
  return fmt::format("{:.0f} ns", ns);
}

static std::string Grouped(double v) {
  if (v >= 1e6) return fmt::format("{:.2f}M", v / 1e6);
  if (v >= 1e4) return fmt::format("{:.1f}k", v / 1e3);
  if (v >= 100) return fmt::format("{:.0f}", v);
  return fmt::format("{:.3g}", v);
}

std::string FormatValue(double value, const std::string& unit) {
  if (unit == "B/s") return FormatBytesPerSec(value);
  if (unit == "ns") return FormatNanos(value);
  if (unit == "IOPS" || unit == "ops/s") return Grouped(value) + " " + unit;
  if (unit == "s") {
    if (value >= 100) return fmt::format("{:.0f} s", value);
    if (value >= 0.1 || value == 0) return fmt::format("{:.2f} s", value);
    return fmt::format("{:.2f} ms", value * 1e3);
  }
  if (unit == "%") return fmt::format("{:.1f} %", value);
  if (unit == "B") {
    if (value >= 1 << 30) return fmt::format("{:.2f} GiB", value / (1 << 30));
    if (value >= 1 << 20) return fmt::format("{:.1f} MiB", value / (1 << 20));
    return fmt::format("{:.0f} KiB", value / 1024);
  }
  if (unit == "s/GB") return fmt::format("{:.3f} s/GB", value);
  return fmt::format("{:.4g} {}", value, unit);
}

}  // namespace t0fs::bench
