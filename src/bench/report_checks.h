// What makes a comparison of result sets suspect, said in words for the
// reports (`t0fs bench report`, the tables, tier0-vs-networked): a set
// stopped early, reads after a cache drop that left more than
// kResidentLimit of the files in memory (or no drop at all), and sets whose
// cache handling differs (drop_caches against fadvise, O_DIRECT against
// buffered, a result that does not record it). Pure functions.
#pragma once

#include <string>
#include <vector>

#include "bench/result.h"

namespace t0fs::bench {

// Warnings about one set on its own (stopped early, its cache report).
std::vector<std::string> SetWarnings(const ResultSet& set);
// Every warning about reading `sets` side by side: each set's own, then
// the differences between them (only with two or more sets).
std::vector<std::string> ComparisonWarnings(const std::vector<ResultSet>& sets);

}  // namespace t0fs::bench
