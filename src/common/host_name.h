// This machine's host name (gethostname), for logs, node records and
// benchmark results.
#pragma once

#include <string>

namespace t0fs {

std::string HostName();

}  // namespace t0fs
