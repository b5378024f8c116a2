// `t0fs bench sweep PATH`: the iozone thread sweep of seed 004.
#include <thread>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "bench/cli_common.h"
#include "bench/cli_options.h"
#include "bench/comm.h"
#include "bench/progress.h"
#include "common/config.h"

namespace t0fs::bench {

void AddSweepOptions(CLI::App* cmd, SweepCliOptions* o) {
  cmd->add_option("PATH", o->path, "Directory for the per-thread files")->required();
  cmd->add_option("-s,--size", o->size,
                  "Total data per thread count; each of N threads writes and reads size/N");
  cmd->add_option("-r,--record", o->record, "Record (I/O) size (iozone -r)");
  cmd->add_option("--max-threads", o->max_threads, "Sweep 1, 2, 4 ... up to this many threads")
      ->check(CLI::Range(1, 4096));
  cmd->add_option("-t,--threads", o->threads, "Explicit thread counts, e.g. 1,2,4,8,16");
  cmd->add_flag("--direct", o->direct, "O_DIRECT (iozone -I)");
  cmd->add_flag("--no-stonewall", o->no_stonewall,
                "Let every thread finish its file (iozone -x); default: stop all at the first "
                "finisher");
  cmd->add_flag("--no-invalidate", o->no_invalidate,
                "Same as --drop-caches none: read back from the page cache (iozone's behaviour)");
  cmd->add_option("--iodepth", o->iodepth, "Requests in flight per thread (io_uring)")
      ->check(CLI::Range(1, 4096));
  AddEngineOptions(cmd, &o->engine, true);
}

Result<SweepSpec> ToSweepSpec(const SweepCliOptions& o, bool keep, bool progress) {
  SweepSpec spec;
  spec.path = o.path;
  ASSIGN_OR_RETURN(spec.total, ParseSizeOption("--size", o.size));
  ASSIGN_OR_RETURN(spec.record, ParseSizeOption("--record", o.record));
  ASSIGN_OR_RETURN(spec.threads, SweepThreadList(o.threads, o.max_threads));
  spec.direct = o.direct;
  spec.stonewall = !o.no_stonewall;
  if (o.no_invalidate) {
    spec.drop = CacheDropMode::kNone;
  } else {
    ASSIGN_OR_RETURN(spec.drop, ParseCacheDropMode(o.engine.drop_caches));
  }
  spec.iodepth = o.iodepth;
  ASSIGN_OR_RETURN(spec.engine, ToEngineOptions(o.engine, o.engine.engine));
  spec.verify = o.engine.verify;
  spec.seed = o.engine.seed;
  spec.keep = keep;
  spec.progress = progress;
  RETURN_IF_ERROR(ValidateSweepSpec(spec));
  return spec;
}

void RegisterSweep(CLI::App* bench, int* exit_code) {
  auto* cmd = AddBenchSubcommand(
      bench, "sweep",
      "iozone-style thread sweep: write then read one file per thread, 16 MiB records, close and "
      "fsync timed; children see / parent sees, peak and plateau");
  auto sweep = std::make_shared<SweepCliOptions>();
  auto common = std::make_shared<CommonOptions>();
  AddSweepOptions(cmd, sweep.get());
  AddCommonOptions(cmd, common.get());
  cmd->footer(
      "Same test as: iozone -i0 -i1 -c -e -w -r 16M -s SIZE/N -t N -+n, for N = 1, 2, 4 ...\n"
      "Example:\n  t0fs bench sweep /mnt/t0 --size 8G --max-threads 16 --direct --json sweep.json");
  SetCallback(cmd, exit_code, [sweep, common] {
    auto spec = ToSweepSpec(*sweep, common->keep, ProgressWanted(common->quiet));
    if (!spec.ok()) return ReportError(spec.status());
    std::string counts;
    for (uint32_t t : spec->threads) counts += (counts.empty() ? "" : ",") + std::to_string(t);
    ResultSet set = NewResultSet(
        "sweep", fmt::format("threads {}, {} in {} records", counts, FormatByteSize(spec->total),
                             FormatByteSize(spec->record)),
        common->label);
    set.params = {{"path", spec->path},         {"size", spec->total},
                  {"record", spec->record},     {"threads", spec->threads},
                  {"direct", spec->direct},     {"stonewall", spec->stonewall},
                  {"engine", EngineName(spec->engine.kind)},
                  {"drop_caches", CacheDropModeName(spec->drop)},
                  {"dataset", fmt::format("{} per thread count, one file per thread",
                                          FormatByteSize(spec->total))}};
    return Execute(std::move(set), *common, [&] { return RunSweep(*spec, WorldComm()); });
  });
}

}  // namespace t0fs::bench
