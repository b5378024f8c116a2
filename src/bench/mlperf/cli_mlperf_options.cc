#include "bench/mlperf/cli_mlperf_options.h"

#include <sys/stat.h>

#include <cerrno>
#include <ctime>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "bench/cli_options.h"
#include "bench/mlperf/file_sink.h"
#include "bench/mlperf/sizing.h"

namespace t0fs::bench::mlperf {

void AddIoOptions(CLI::App* cmd, MlperfIoOptions* o, const std::string& transfer_default) {
  o->transfer = transfer_default;
  auto* g = "I/O";
  cmd->add_option("--engine", o->engine,
                  "I/O engine: psync (pread/pwrite), io_uring (--iodepth requests in flight per "
                  "file), native (libt0fs; the directory must be on a t0fs mount)")
      ->check(CLI::IsMember({"psync", "io_uring", "native"}))
      ->group(g);
  cmd->add_option(
         "--iodepth", o->iodepth,
         "Requests in flight per file (io_uring); native: per reader thread, across the files of "
         "a batch (Torch loader)")
      ->check(CLI::Range(1, 256))
      ->group(g);
  cmd->add_option("--transfer-size", o->transfer, "Bytes per read/write request")->group(g);
  cmd->add_flag("--odirect", o->odirect, "O_DIRECT (reader.odirect / direct_fs)")->group(g);
  cmd->add_option("--meta", o->meta, "native engine: the t0fs meta service")->group(g);
  cmd->add_option("--secret-file", o->secret_file, "native engine: the cluster secret")->group(g);
  cmd->add_option("--drop-caches", o->drop_caches, kDropCachesHelp)
      ->check(CLI::IsMember(CacheDropChoices()))
      ->group(g);
}

Result<IoChoice> ToIoChoice(const MlperfIoOptions& o, const std::string& path) {
  IoChoice c;
  ASSIGN_OR_RETURN(c.engine.kind, ParseEngineKind(o.engine));
  c.engine.depth = o.iodepth;
  c.engine.meta = o.meta;
  c.engine.secret_file = o.secret_file;
  ASSIGN_OR_RETURN(c.transfer, ParseSizeOption("--transfer-size", o.transfer));
  if (c.transfer < 4096) {
    return Status(StatusCode::kInvalidArgument, "--transfer-size must be at least 4K");
  }
  c.transfer = (c.transfer + 4095) / 4096 * 4096;
  ASSIGN_OR_RETURN(c.drop, ParseCacheDropMode(o.drop_caches));
  if (c.engine.kind == EngineKind::kNative) {
    if (!EngineAvailable(EngineKind::kNative)) return MakeNativeEngine(c.engine).status();
    RETURN_IF_ERROR(FindT0fsMount(path).status());
  }
  return c;
}

void AddOutputOptions(CLI::App* cmd, MlperfOutputOptions* o) {
  auto* g = "Output";
  cmd->add_option("--json", o->json, "Write the t0fs bench result (JSON) here")->group(g);
  cmd->add_option("--csv", o->csv, "Write the results as CSV here")->group(g);
  cmd->add_option("--label", o->label, "Name of this result set in reports")->group(g);
  cmd->add_flag("-q,--quiet", o->quiet, "No live progress line")->group(g);
  cmd->add_option("--results-dir", o->results_dir,
                  "Run leaves (summary.json, per-epoch stats, metadata) go under this directory")
      ->group(g);
}

Result<std::string> MakeResultsLeaf(const std::string& results_dir, const std::string& family,
                                    const std::string& name) {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  localtime_r(&now, &tm);
  char stamp[32];
  std::strftime(stamp, sizeof(stamp), "%Y%m%d_%H%M%S", &tm);
  std::string leaf = fmt::format("{}/{}/{}/{}", results_dir, family, name, stamp);
  // Two invocations within a second get distinct leaves.
  std::string unique = leaf;
  for (int n = 1; ::access(unique.c_str(), F_OK) == 0; ++n) unique = fmt::format("{}_{}", leaf, n);
  RETURN_IF_ERROR(MakeDirs(unique));
  return unique;
}

Status WriteJsonFile(const std::string& path, const nlohmann::json& j) {
  auto slash = path.find_last_of('/');
  if (slash != std::string::npos) RETURN_IF_ERROR(MakeDirs(path.substr(0, slash)));
  return WriteFileAtomic(path, j.dump(2) + "\n");
}

Status WriteOutputs(const ResultSet& set, const MlperfOutputOptions& o) {
  if (!o.json.empty()) RETURN_IF_ERROR(WriteFileAtomic(o.json, ToJson(set).dump(1) + "\n"));
  if (!o.csv.empty()) RETURN_IF_ERROR(WriteFileAtomic(o.csv, ToCsv(set)));
  return Status::Ok();
}

double ClientMemoryGib(double option_gib) { return option_gib > 0 ? option_gib : HostMemoryGib(); }

std::string HumanBytes(double bytes) {
  const double gib = bytes / 1073741824.0;
  if (gib >= 1024) return fmt::format("{:.2f} TiB ({:.2f} TB)", gib / 1024, bytes / 1e12);
  if (gib >= 1) return fmt::format("{:.2f} GiB ({:.2f} GB)", gib, bytes / 1e9);
  return fmt::format("{:.1f} MiB ({:.1f} MB)", bytes / 1048576.0, bytes / 1e6);
}

}  // namespace t0fs::bench::mlperf
