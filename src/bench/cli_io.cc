// `t0fs bench io PATH`: fio/elbencho-style block I/O.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "bench/cli_common.h"
#include "bench/cli_options.h"
#include "bench/comm.h"
#include "bench/progress.h"
#include "common/config.h"

namespace t0fs::bench {

Result<EngineOptions> ToEngineOptions(const EngineCliOptions& opts, const std::string& engine) {
  EngineOptions e;
  ASSIGN_OR_RETURN(e.kind, ParseEngineKind(engine));
  e.meta = opts.meta;
  e.secret_file = opts.secret_file;
  e.node_id = opts.node_id;
  return e;
}

void AddIoOptions(CLI::App* cmd, IoCliOptions* o) {
  cmd->add_option("PATH", o->path,
                  "A directory (files are created in it) or a file / block device (shared by all "
                  "threads)")
      ->required();
  cmd->add_option("--rw", o->rw, "read, write, randread, randwrite or randrw")
      ->check(CLI::IsMember({"read", "write", "randread", "randwrite", "randrw"}));
  cmd->add_option("--rwmixread", o->rwmixread, "randrw: percentage of reads")
      ->check(CLI::Range(0, 100));
  cmd->add_option("--bs", o->bs, "Block size of each I/O (4K, 1M, ...)");
  cmd->add_option("-t,--threads,--numjobs", o->threads, "Worker threads (per MPI rank)")
      ->check(CLI::Range(1, 4096));
  cmd->add_option("--iodepth", o->iodepth, "Requests in flight per thread (io_uring, native)")
      ->check(CLI::Range(1, 4096));
  cmd->add_flag("--direct", o->direct, "O_DIRECT (bypass the page cache)");
  cmd->add_option("-s,--size", o->size,
                  "Data per thread (--split per-thread) or the whole dataset (--split shared)");
  cmd->add_option("--split", o->split,
                  "per-thread: each thread moves --size (fio numjobs); shared: --size is one "
                  "dataset cut into equal per-thread shares (elbencho)")
      ->check(CLI::IsMember({"per-thread", "shared"}));
  cmd->add_option("--layout", o->layout,
                  "files: each thread its own files; shared: all threads on the same file(s)")
      ->check(CLI::IsMember({"files", "shared"}));
  cmd->add_option("--files,--nrfiles", o->files,
                  "Files per thread (--layout files) or in total (--layout shared)")
      ->check(CLI::Range(1, 100000));
  cmd->add_option("--runtime", o->runtime,
                  "Time-based: loop over the data for this long (30s, 5m); 0 = size-based");
  cmd->add_option("--ramp", o->ramp, "Time-based: run this long before measuring (fio ramp_time)");
  cmd->add_flag("--end-fsync", o->end_fsync, "fsync written files at the end, inside the timing");
  cmd->add_flag("--no-invalidate", o->no_invalidate,
                "Same as --drop-caches none: read what the page cache holds (fio invalidate=0)");
  AddEngineOptions(cmd, &o->engine, true);
}

Result<IoSpec> ToIoSpec(const IoCliOptions& o, bool keep, bool progress, uint32_t ranks) {
  IoSpec spec;
  spec.path = o.path;
  ASSIGN_OR_RETURN(spec.rw, ParseRwMode(o.rw));
  spec.rwmixread = o.rwmixread;
  ASSIGN_OR_RETURN(spec.block, ParseSizeOption("--bs", o.bs));
  spec.threads = o.threads;
  spec.iodepth = o.iodepth;
  spec.direct = o.direct;
  ASSIGN_OR_RETURN(spec.size, ParseSizeOption("--size", o.size));
  if (o.split != "per-thread" && o.split != "shared") {
    return Status(StatusCode::kInvalidArgument, "--split must be per-thread or shared");
  }
  spec.split = o.split == "shared" ? Split::kShared : Split::kPerThread;
  if (o.layout != "files" && o.layout != "shared") {
    return Status(StatusCode::kInvalidArgument, "--layout must be files or shared");
  }
  spec.layout = o.layout == "shared" ? FileLayout::kSharedFiles : FileLayout::kPerThreadFiles;
  spec.layout_given = o.layout != "files";
  spec.nrfiles = o.files;
  ASSIGN_OR_RETURN(spec.runtime_s, ParseSecondsOption("--runtime", o.runtime));
  ASSIGN_OR_RETURN(spec.ramp_s, ParseSecondsOption("--ramp", o.ramp));
  spec.end_fsync = o.end_fsync;
  if (o.no_invalidate) {
    spec.drop = CacheDropMode::kNone;
  } else {
    ASSIGN_OR_RETURN(spec.drop, ParseCacheDropMode(o.engine.drop_caches));
  }
  ASSIGN_OR_RETURN(spec.engine, ToEngineOptions(o.engine, o.engine.engine));
  spec.verify = o.engine.verify;
  spec.seed = o.engine.seed;
  spec.keep = keep;
  spec.progress = progress;
  RETURN_IF_ERROR(ValidateIoSpec(spec));
  RETURN_IF_ERROR(PlanIoDataset(spec, ranks).status());
  return spec;
}

std::string DescribeIo(const IoSpec& s) {
  std::string what = fmt::format("{} {}", RwModeName(s.rw), FormatByteSize(s.block));
  if (s.rw == RwMode::kRandRW) what += fmt::format(" ({}% reads)", s.rwmixread);
  what += fmt::format(", {} thread{}", s.threads, s.threads == 1 ? "" : "s");
  if (s.engine.kind != EngineKind::kPsync) what += fmt::format(" x iodepth {}", s.iodepth);
  return what;
}

nlohmann::json IoParams(const IoSpec& s) {
  std::string dataset = fmt::format(
      "{} {} split, {} layout, {} file{}{}", FormatByteSize(s.size),
      s.split == Split::kShared ? "shared (elbencho)" : "per-thread (fio)",
      s.layout == FileLayout::kSharedFiles ? "shared-file" : "file-per-thread", s.nrfiles,
      s.nrfiles == 1 ? "" : "s",
      s.runtime_s > 0 ? fmt::format(", time-based {}s (ramp {}s)", s.runtime_s, s.ramp_s)
                      : std::string(", size-based"));
  return {{"path", s.path},          {"rw", RwModeName(s.rw)},
          {"rwmixread", s.rwmixread}, {"bs", s.block},
          {"threads", s.threads},    {"iodepth", s.iodepth},
          {"direct", s.direct},      {"size", s.size},
          {"split", s.split == Split::kShared ? "shared" : "per-thread"},
          {"layout", s.layout == FileLayout::kSharedFiles ? "shared" : "files"},
          {"files", s.nrfiles},      {"runtime_s", s.runtime_s},
          {"ramp_s", s.ramp_s},      {"end_fsync", s.end_fsync},
          {"engine", EngineName(s.engine.kind)}, {"verify", s.verify},
          {"drop_caches", CacheDropModeName(s.drop)}, {"dataset", dataset}};
}

void RegisterIo(CLI::App* bench, int* exit_code) {
  auto* cmd = AddBenchSubcommand(
      bench, "io",
      "Block I/O on any path, fio/elbencho style: bandwidth, IOPS, latency percentiles, CPU");
  auto io = std::make_shared<IoCliOptions>();
  auto common = std::make_shared<CommonOptions>();
  AddIoOptions(cmd, io.get());
  AddCommonOptions(cmd, common.get());
  cmd->footer(
      "Examples:\n"
      "  t0fs bench io /mnt/t0 --rw read --bs 1M --threads 4 --direct --size 4G\n"
      "  t0fs bench io /mnt/t0 --rw randread --bs 4K --engine io_uring --iodepth 32 --direct "
      "--runtime 30s --ramp 5s\n"
      "  t0fs bench io /mnt/t0/model.bin --rw read --bs 16M --threads 8 --split shared --size 8G");
  SetCallback(cmd, exit_code, [io, common] {
    bool progress = ProgressWanted(common->quiet);
    auto spec = ToIoSpec(*io, common->keep, progress, static_cast<uint32_t>(WorldComm().size()));
    if (!spec.ok()) return ReportError(spec.status());
    ResultSet set = NewResultSet("io", DescribeIo(*spec), common->label);
    set.params = IoParams(*spec);
    return Execute(std::move(set), *common, [&] { return RunIo(*spec, WorldComm()); });
  });
}

}  // namespace t0fs::bench
