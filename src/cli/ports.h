// TCP ports for a cluster on this machine: is one free, and which free ones
// to take when the defaults are in use.
#pragma once

#include <cstdint>
#include <set>
#include <string>

#include "common/status.h"

namespace t0fs::cli {

// True when a listening socket could bind host:port now (SO_REUSEADDR, as the
// daemons bind, so a port in TIME_WAIT counts as free). A port may of course
// be taken between this check and the daemon's bind.
bool PortFree(const std::string& host, uint16_t port);

// The first port p >= `from` (and below 65535) such that p .. p+count-1 are
// all free and none is in `taken`.
Result<uint16_t> FindFreePorts(const std::string& host, uint16_t from, uint32_t count,
                               const std::set<uint16_t>& taken = {});

}  // namespace t0fs::cli
