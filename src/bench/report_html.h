// The HTML report of `t0fs bench report`: one self-contained page (inline
// CSS and SVG, no script, no external reference) that any browser renders
// offline. Per result set: its parameters; per phase: one bar chart per
// figure (median over runs, min–max whisker, one bar per set) and a latency
// percentile chart; for sweeps, the throughput curves with peak and
// plateau. With two or more sets, a comparison table gives each figure of
// each set against the first set: the ratio and the change in %, coloured
// by whether the change is an improvement.
// The markup is well-formed XML (every element closed, text escaped).
#pragma once

#include <string>
#include <vector>

#include "bench/result.h"

namespace t0fs::bench {

std::string RenderHtmlReport(const std::vector<ResultSet>& sets, const std::string& title);

// Escapes &, <, >, " and ' for HTML/XML text and attributes.
std::string EscapeXml(const std::string& text);

}  // namespace t0fs::bench
