#include "bench/presets.h"

#include <fmt/format.h>

namespace t0fs::bench {

Result<AiPattern> ParseAiPattern(std::string_view text) {
  for (AiPattern p : AllAiPatterns()) {
    if (text == AiPatternName(p)) return p;
  }
  return Status(StatusCode::kInvalidArgument,
                fmt::format("unknown --pattern '{}' (random-sampling, sharded-training, "
                            "model-load, checkpoint-save)",
                            text));
}

std::vector<AiPattern> AllAiPatterns() {
  return {AiPattern::kRandomSampling, AiPattern::kShardedTraining, AiPattern::kModelLoad,
          AiPattern::kCheckpointSave};
}

std::string_view AiPatternName(AiPattern pattern) {
  switch (pattern) {
    case AiPattern::kRandomSampling: return "random-sampling";
    case AiPattern::kShardedTraining: return "sharded-training";
    case AiPattern::kModelLoad: return "model-load";
    case AiPattern::kCheckpointSave: return "checkpoint-save";
  }
  return "?";
}

std::string_view AiPatternDescription(AiPattern pattern) {
  switch (pattern) {
    case AiPattern::kRandomSampling:
      return "data loader: random 128 KiB reads over 256 shard files, 64 threads x iodepth 4, "
             "direct, 60 s (elbencho -r --rand -b 128K -t 64 --iodepth 4 --infloop --timelimit 60)";
    case AiPattern::kShardedTraining:
      return "each thread streams its own 64 shard files sequentially, 1 MiB, 32 threads, direct "
             "(elbencho -r -t 32 -n 1 -N 64 -b 1M --direct)";
    case AiPattern::kModelLoad:
      return "32 threads read one weights file in fair-share ranges, 16 MiB, direct; the "
             "last-done elapsed time is the load time (elbencho -r -b 16M -t 32 --direct FILE)";
    case AiPattern::kCheckpointSave:
      return "32 threads write one checkpoint file in fair-share ranges, 16 MiB, direct, fsync "
             "inside the timing (elbencho -w -b 16M -t 32 --direct --sync FILE)";
  }
  return "";
}

IoSpec AiPreset(AiPattern pattern, const std::string& path, uint64_t size) {
  IoSpec spec;
  spec.path = path;
  spec.size = size;
  spec.direct = true;
  spec.layout_given = true;
  switch (pattern) {
    case AiPattern::kRandomSampling:
      spec.rw = RwMode::kRandRead;
      spec.block = 128 << 10;
      spec.threads = 64;
      spec.iodepth = 4;
      spec.engine.kind = EngineKind::kUring;
      spec.layout = FileLayout::kSharedFiles;
      spec.nrfiles = 256;
      spec.split = Split::kPerThread;  // every thread samples the whole shard set
      spec.runtime_s = 60;
      break;
    case AiPattern::kShardedTraining:
      spec.rw = RwMode::kRead;
      spec.block = 1 << 20;
      spec.threads = 32;
      spec.layout = FileLayout::kPerThreadFiles;
      spec.nrfiles = 64;
      spec.split = Split::kShared;  // --size is the whole dataset
      break;
    case AiPattern::kModelLoad:
      spec.rw = RwMode::kRead;
      spec.block = 16 << 20;
      spec.threads = 32;
      spec.layout = FileLayout::kSharedFiles;
      spec.nrfiles = 1;
      spec.split = Split::kShared;
      break;
    case AiPattern::kCheckpointSave:
      spec.rw = RwMode::kWrite;
      spec.block = 16 << 20;
      spec.threads = 32;
      spec.layout = FileLayout::kSharedFiles;
      spec.nrfiles = 1;
      spec.split = Split::kShared;
      spec.end_fsync = true;
      break;
  }
  return spec;
}

}  // namespace t0fs::bench
