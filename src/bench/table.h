// The terminal form of a result set: a readable table per phase (first done
// and last done side by side, as elbencho prints them), and with --repeat
// one line per run plus the median and coefficient of variation.
#pragma once

#include <string>

#include "bench/result.h"

namespace t0fs::bench {

std::string FormatHeader(const ResultSet& set);
std::string FormatPhase(const PhaseResult& phase);
// The whole set: header, each run (compact when several), the summary.
std::string FormatResultSet(const ResultSet& set);

}  // namespace t0fs::bench
