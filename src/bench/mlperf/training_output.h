// What a training run prints and writes: DLIO-style per-epoch lines and the
// [METRIC] block, the DLIO `summary.json` (reference field names) and
// per-epoch stats of a run leaf, and the PhaseResult that makes the run a
// `t0fs bench` result (so `t0fs bench report` reads it like any other).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "bench/mlperf/training_run.h"
#include "bench/result.h"

namespace t0fs::bench::mlperf {

std::string EpochLine(const EpochInfo& e, const TrainingSpec& spec);
std::string MetricBlock(const TrainingResult& r, const TrainingSpec& spec);
// DLIO summary.json (rank 0's) with an extra "t0fs" object.
nlohmann::json SummaryJson(const TrainingResult& r, const TrainingSpec& spec);
nlohmann::json PerEpochStatsJson(const TrainingResult& r);
// One phase "train": bytes and samples read, per-file latency, CPU, and the
// MLPerf figures as x_ figures (AU %, samples/s, I/O B/s, pass, CPU per
// accelerator-second).
PhaseResult TrainingPhase(const TrainingResult& r, const TrainingSpec& spec);
nlohmann::json TrainingParams(const TrainingSpec& spec);

}  // namespace t0fs::bench::mlperf
