// The AI workload patterns of seed 001 (`t0fs bench ai --pattern …`), as
// io workloads with the parameters of bench-tools.md §1.6. Only the dataset
// size scales (--size); threads, block size, queue depth, direct I/O and the
// file layout are the pattern's, unless overridden.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "bench/io_workload.h"

namespace t0fs::bench {

enum class AiPattern { kRandomSampling, kShardedTraining, kModelLoad, kCheckpointSave };

Result<AiPattern> ParseAiPattern(std::string_view text);
std::string_view AiPatternName(AiPattern pattern);
// One line: what the pattern models and its elbencho/fio equivalent.
std::string_view AiPatternDescription(AiPattern pattern);
std::vector<AiPattern> AllAiPatterns();

// The io spec of `pattern` on `path` with a dataset of `size` bytes in total.
IoSpec AiPreset(AiPattern pattern, const std::string& path, uint64_t size);

}  // namespace t0fs::bench
