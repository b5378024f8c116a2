// The experiment's output: the comparison table in the seeds' layout
// (test | Tier 0 | networked | improvement | client CPU | likely limit),
// the scaling curves, the summary JSON (format "t0fs-tier0-vs-networked"),
// and the two result sets (Tier 0, networked) that `t0fs bench report`
// turns into the HTML page.
//
// Thread safety: pure functions.
#pragma once

#include <string>

#include "bench/result.h"
#include "bench/tier0/experiment.h"

namespace t0fs::bench::tier0 {

// "4.40x", or for lower-is-better rows "-56 % (2.27x)"; "n/a" without data.
std::string Improvement(const Row& row);
// The resource that most likely limits a measurement — an estimate from the
// facts measured at the start: the highest of disk, link (networked only)
// and machine CPU utilisation, e.g. "link 96 %".
std::string LikelyLimit(const Row& row, Placement p, const MachineFacts& facts);
// The table and curves as text.
std::string RenderTable(const Tier0Results& results, const Tier0Plan& plan);
nlohmann::json ToSummaryJson(const Tier0Results& results, const Tier0Plan& plan);
// One result set per placement (rows and curve points as phases), the
// input of `t0fs bench report`.
ResultSet ToResultSet(const Tier0Results& results, Placement p, const ResultSet& header);

}  // namespace t0fs::bench::tier0
