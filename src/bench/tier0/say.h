// Progress lines of the experiment on stdout: "[tier0 +12.3s] text", flushed
// at once so a caller that tails the output (a test, a CI log) sees them.
#pragma once

#include <string>

namespace t0fs::bench::tier0 {

void Say(const std::string& text);

}  // namespace t0fs::bench::tier0
