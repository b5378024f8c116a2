// Validation of Prometheus metric and label names, and the one way the
// metrics library reports a programming error.
//
// Names are constants written by t0fs programmers, so a bad one is a bug:
// the registry checks them once at registration and stops the process with a
// message naming the metric (never at scrape time, never on user input).
// Label *values* are data (a volume path, an op name) and are never rejected;
// the text format escapes them.
#pragma once

#include <string_view>

#include "common/status.h"

namespace t0fs::metrics {

// [a-zA-Z_][a-zA-Z0-9_]*. Colons are legal in Prometheus but reserved for
// recording rules, so an exporter must not use them.
Status ValidateMetricName(std::string_view name);
// [a-zA-Z_][a-zA-Z0-9_]*, not starting with "__" (reserved for Prometheus).
Status ValidateLabelName(std::string_view name);

// Prints "t0fs metrics: <what>" to stderr and aborts. For programming errors only.
[[noreturn]] void Die(std::string_view what);

}  // namespace t0fs::metrics
