// Option values of the bench commands as text ("64M", "30s"), parsed with
// the option's name in the error. Shared by the bench CLI and the
// experiments built on the bench core (tier0).
#pragma once

#include <cstdint>
#include <string>

#include "common/status.h"

namespace t0fs::bench {

// "64M" -> bytes, with the option name in the error.
Result<uint64_t> ParseSizeOption(const std::string& name, const std::string& text);
// "30s", "500ms", "0" -> seconds.
Result<double> ParseSecondsOption(const std::string& name, const std::string& text);

}  // namespace t0fs::bench
