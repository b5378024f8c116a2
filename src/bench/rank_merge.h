// Merging one run measured on several MPI ranks into rank 0's result
// (used by the io, meta and sweep workloads).
#pragma once

#include <vector>

#include "bench/comm.h"
#include "bench/result.h"

namespace t0fs::bench {

// Merges the same phase measured on several ranks: counters add, latency
// histograms merge exactly, last done is the slowest rank, first done the
// fastest (other ranks' bytes at that moment estimated at their mean rate).
PhaseResult MergeRankPhases(const std::vector<PhaseResult>& per_rank);
// Gathers `local` from every rank to rank 0 and merges phase by phase.
Result<RunResult> GatherRun(const RunResult& local, Comm& comm);

}  // namespace t0fs::bench
