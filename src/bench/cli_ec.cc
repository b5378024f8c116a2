// `t0fs bench ec`: encode and rebuild throughput of the erasure code.
#include <fmt/format.h>

#include <CLI/CLI.hpp>

#include "bench/cli_common.h"
#include "bench/ec_workload.h"
#include "bench/option_values.h"
#include "bench/progress.h"

namespace t0fs::bench {

void RegisterEc(CLI::App* bench, int* exit_code) {
  auto* cmd = AddBenchSubcommand(
      bench, "ec",
      "Erasure-coding CPU cost of protect=ec:K+M on this machine (no cluster): encode, and rebuild "
      "with one and with M data cells lost, in chunk bytes per second");
  struct Options {
    uint32_t k = 4, m = 2, threads = 1;
    std::string unit = "1M", size = "1G";
  };
  auto o = std::make_shared<Options>();
  auto common = std::make_shared<CommonOptions>();
  cmd->add_option("-k,--data-cells", o->k, "Data cells K of the code");
  cmd->add_option("-m,--parity-cells", o->m, "Parity cells M of the code");
  cmd->add_option("--unit", o->unit, "Bytes of a chunk per cell and row (the cluster uses 1M)");
  cmd->add_option("-s,--size", o->size, "Chunk bytes each phase processes");
  cmd->add_option("-t,--threads", o->threads, "Threads sharing the rows")
      ->check(CLI::Range(1, 256));
  AddCommonOptions(cmd, common.get());
  cmd->footer(
      "Every rebuilt row is compared with the row encoded.\n"
      "Example:\n  t0fs bench ec -k 4 -m 2 --size 4G --threads 2");
  SetCallback(cmd, exit_code, [o, common] {
    EcSpec spec;
    spec.k = o->k;
    spec.m = o->m;
    spec.threads = o->threads;
    spec.progress = ProgressWanted(common->quiet);
    auto unit = ParseSizeOption("--unit", o->unit);
    if (!unit.ok()) return ReportError(unit.status());
    auto size = ParseSizeOption("--size", o->size);
    if (!size.ok()) return ReportError(size.status());
    spec.unit = *unit;
    spec.size = *size;
    if (Status st = ValidateEcSpec(spec); !st.ok()) return ReportError(st);
    ResultSet set =
        NewResultSet("ec",
                     fmt::format("ec:{}+{}, unit {} B, {} B per phase, {} thread{}", spec.k, spec.m,
                                 spec.unit, spec.size, spec.threads, spec.threads == 1 ? "" : "s"),
                     common->label);
    set.params = {{"k", spec.k},
                  {"m", spec.m},
                  {"unit", spec.unit},
                  {"size", spec.size},
                  {"threads", spec.threads}};
    return Execute(std::move(set), *common, [&] { return RunEc(spec); });
  });
}

}  // namespace t0fs::bench
