// `t0fs bench ai PATH --pattern …`: the AI storage patterns of seed 001.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "bench/cli_common.h"
#include "bench/cli_options.h"
#include "bench/comm.h"
#include "bench/progress.h"
#include "bench/stop_signal.h"
#include "common/config.h"

namespace t0fs::bench {

void AddAiOptions(CLI::App* cmd, AiCliOptions* o) {
  cmd->add_option("PATH", o->path, "Directory for the dataset (or the file, for model-load and "
                                   "checkpoint-save)")
      ->required();
  cmd->add_option("-p,--pattern", o->pattern,
                  "random-sampling, sharded-training, model-load, checkpoint-save, or all")
      ->required()
      ->check(CLI::IsMember({"random-sampling", "sharded-training", "model-load",
                             "checkpoint-save", "all"}));
  cmd->add_option("-s,--size", o->size,
                  "Total dataset size; the pattern scales with it (40 GB matches published runs)");
  cmd->add_option("-t,--threads", o->threads, "Override the pattern's threads (0 = pattern's)");
  cmd->add_option("--iodepth", o->iodepth, "Override the pattern's queue depth (0 = pattern's)");
  cmd->add_option("--bs", o->bs, "Override the pattern's block size");
  cmd->add_option("--files", o->files, "Override the pattern's file count (0 = pattern's)");
  cmd->add_option("--runtime", o->runtime, "Override the run time (random-sampling: 60s)");
  cmd->add_option("--ramp", o->ramp, "Ramp before measuring (time-based patterns)");
  cmd->add_flag("--buffered", o->buffered, "Use the page cache (the patterns use O_DIRECT)");
  cmd->add_option("--engine", o->engine, "Override the pattern's engine (psync, io_uring, native)")
      ->check(CLI::IsMember({"", "psync", "io_uring", "native"}));
  AddEngineOptions(cmd, &o->common, false);
}

Result<std::vector<IoSpec>> ToAiSpecs(const AiCliOptions& o, bool keep, bool progress,
                                      uint32_t ranks) {
  std::vector<AiPattern> patterns;
  if (o.pattern == "all") {
    patterns = AllAiPatterns();
  } else {
    ASSIGN_OR_RETURN(AiPattern p, ParseAiPattern(o.pattern));
    patterns.push_back(p);
  }
  ASSIGN_OR_RETURN(uint64_t size, ParseSizeOption("--size", o.size));
  std::vector<IoSpec> specs;
  for (AiPattern pattern : patterns) {
    IoSpec spec = AiPreset(pattern, o.path, size);
    if (o.threads > 0) spec.threads = o.threads;
    if (o.iodepth > 0) spec.iodepth = o.iodepth;
    if (!o.bs.empty()) {
      ASSIGN_OR_RETURN(spec.block, ParseSizeOption("--bs", o.bs));
    }
    if (o.files > 0) spec.nrfiles = o.files;
    if (!o.runtime.empty()) {
      ASSIGN_OR_RETURN(spec.runtime_s, ParseSecondsOption("--runtime", o.runtime));
    }
    ASSIGN_OR_RETURN(spec.ramp_s, ParseSecondsOption("--ramp", o.ramp));
    if (o.buffered) spec.direct = false;
    if (!o.engine.empty()) {
      ASSIGN_OR_RETURN(spec.engine, ToEngineOptions(o.common, o.engine));
    } else {
      spec.engine.meta = o.common.meta;
      spec.engine.secret_file = o.common.secret_file;
      spec.engine.node_id = o.common.node_id;
    }
    spec.verify = o.common.verify;
    spec.seed = o.common.seed;
    ASSIGN_OR_RETURN(spec.drop, ParseCacheDropMode(o.common.drop_caches));
    spec.keep = keep;
    spec.progress = progress;
    if (patterns.size() > 1) spec.phase_prefix = std::string(AiPatternName(pattern)) + " ";
    specs.push_back(std::move(spec));
  }
  // Every pattern's dataset before the first one runs: a size too small for
  // any of them names the size that fits them all.
  uint64_t fits_all = 0;
  std::string short_of;
  for (size_t idx = 0; idx < specs.size(); ++idx) {
    const IoSpec& spec = specs[idx];
    uint64_t minimum = MinimumIoSize(spec, ranks);
    fits_all = std::max(fits_all, minimum);
    if (spec.size < minimum) {
      short_of += fmt::format("{}{} needs {}", short_of.empty() ? "" : ", ",
                              AiPatternName(patterns[idx]), FormatByteSize(minimum));
    }
  }
  if (patterns.size() > 1 && !short_of.empty()) {
    return Status(StatusCode::kInvalidArgument,
                  fmt::format("--size {} is too small for --pattern all ({}): the smallest valid "
                              "size is --size {}",
                              FormatByteSize(size), short_of, SizeArgument(fits_all)));
  }
  for (size_t idx = 0; idx < specs.size(); ++idx) {
    const std::string name(AiPatternName(patterns[idx]));
    if (specs[idx].block > 0 && specs[idx].size >= specs[idx].block) {
      // A size under one block is the dataset's check below, with the size that fits.
      RETURN_IF_ERROR(ValidateIoSpec(specs[idx]).WithContext(name));
    }
    RETURN_IF_ERROR(PlanIoDataset(specs[idx], ranks).status().WithContext(name));
    RETURN_IF_ERROR(ValidateIoSpec(specs[idx]).WithContext(name));
  }
  return specs;
}

void RegisterAi(CLI::App* bench, int* exit_code) {
  auto* cmd = AddBenchSubcommand(bench, "ai",
                                 "AI storage patterns (elbencho-style): "
                                 "random-sampling, sharded-training, model-load, checkpoint-save");
  auto ai = std::make_shared<AiCliOptions>();
  auto common = std::make_shared<CommonOptions>();
  AddAiOptions(cmd, ai.get());
  AddCommonOptions(cmd, common.get());
  std::string footer = "Patterns:\n";
  for (AiPattern p : AllAiPatterns()) {
    footer += fmt::format("  {:<17} {}\n", AiPatternName(p), AiPatternDescription(p));
  }
  footer += "Example:\n  t0fs bench ai /mnt/t0 --pattern model-load --size 8G --json ml.json";
  cmd->footer(footer);
  SetCallback(cmd, exit_code, [ai, common] {
    auto specs = ToAiSpecs(*ai, common->keep, ProgressWanted(common->quiet),
                           static_cast<uint32_t>(WorldComm().size()));
    if (!specs.ok()) return ReportError(specs.status());
    std::string workload = ai->pattern == "all" ? "all AI patterns" : ai->pattern;
    if (specs->size() == 1) workload += ": " + DescribeIo(specs->front());
    ResultSet set = NewResultSet("ai", workload, common->label);
    set.params = specs->size() == 1 ? IoParams(specs->front()) : nlohmann::json::object();
    set.params["pattern"] = ai->pattern;
    set.params["path"] = ai->path;
    return Execute(std::move(set), *common, [&]() -> Result<RunResult> {
      RunResult all;
      for (const IoSpec& spec : *specs) {
        ASSIGN_OR_RETURN(RunResult one, RunIo(spec, WorldComm()));
        for (auto& p : one.phases) all.phases.push_back(std::move(p));
        all.cache.Merge(one.cache);
        // A stop ends this pattern; the others do not start.
        if (one.stopped_early || StopRequested()) {
          all.stopped_early = true;
          break;
        }
      }
      return all;
    });
  });
}

}  // namespace t0fs::bench
