// `t0fs bench meta PATH`: mdtest-style metadata rates.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "bench/cli_common.h"
#include "bench/cli_options.h"
#include "bench/comm.h"
#include "bench/progress.h"

namespace t0fs::bench {

void AddMetaOptions(CLI::App* cmd, MetaCliOptions* o) {
  cmd->add_option("PATH", o->path, "An existing directory (the run works in a new subdirectory)")
      ->required();
  cmd->add_option("-t,--threads", o->threads, "Worker threads (per MPI rank)")
      ->check(CLI::Range(1, 4096));
  cmd->add_option("-n,--items", o->items, "Files and directories per thread (mdtest -n)")
      ->check(CLI::Range(uint64_t{1}, uint64_t{100000000}));
  cmd->add_flag("--shared-dir", o->shared_dir,
                "All threads in one directory (default: one per thread, mdtest -u)");
  cmd->add_flag("-F,--files-only", o->files_only, "Only file phases (mdtest -F)");
  cmd->add_flag("-D,--dirs-only", o->dirs_only, "Only directory phases (mdtest -D)");
  cmd->add_option("-w,--write-bytes", o->write_bytes,
                  "Bytes written to each file at create and read back (mdtest -w/-e)");
  cmd->add_flag("--neighbor", o->neighbor,
                "Stat and read the next thread's items, not your own (mdtest -N 1)");
  cmd->add_flag("--no-list", o->no_list,
                "Leave out the dir-list phase (on by default, not in mdtest): after file-create, "
                "`ls -l` of the directory (readdir + lstat of every entry; rate in entries/s); "
                "with --shared-dir one thread lists the whole shared directory");
  cmd->add_flag("--no-rename", o->no_rename,
                "Leave out the file-rename phase (on by default, not in mdtest): before "
                "file-remove, each thread renames each of its files in the same directory");
}

Result<MetaSpec> ToMetaSpec(const MetaCliOptions& o, bool keep, bool progress) {
  MetaSpec spec;
  spec.path = o.path;
  spec.threads = o.threads;
  spec.items = o.items;
  spec.unique_dirs = !o.shared_dir;
  if (o.files_only && o.dirs_only) {
    return Status(StatusCode::kInvalidArgument, "--files-only and --dirs-only exclude each other");
  }
  spec.files = !o.dirs_only;
  spec.dirs = !o.files_only;
  ASSIGN_OR_RETURN(spec.write_bytes, ParseSizeOption("--write-bytes", o.write_bytes));
  spec.neighbor = o.neighbor;
  spec.list = !o.no_list;
  spec.rename = !o.no_rename;
  spec.keep = keep;
  spec.progress = progress;
  RETURN_IF_ERROR(ValidateMetaSpec(spec));
  return spec;
}

void RegisterMeta(CLI::App* bench, int* exit_code) {
  auto* cmd = AddBenchSubcommand(
      bench, "meta",
      "mdtest-style metadata rates: create / stat / remove of directories, then create / "
      "list (ls -l) / stat / read / rename / remove of files");
  auto meta = std::make_shared<MetaCliOptions>();
  auto common = std::make_shared<CommonOptions>();
  AddMetaOptions(cmd, meta.get());
  AddCommonOptions(cmd, common.get());
  cmd->footer("Example:\n  t0fs bench meta /mnt/t0 --threads 4 --items 10000 --write-bytes 3901");
  SetCallback(cmd, exit_code, [meta, common] {
    auto spec = ToMetaSpec(*meta, common->keep, ProgressWanted(common->quiet));
    if (!spec.ok()) return ReportError(spec.status());
    ResultSet set = NewResultSet(
        "meta",
        fmt::format("{} items x {} thread{}, {} dirs{}", spec->items, spec->threads,
                    spec->threads == 1 ? "" : "s", spec->unique_dirs ? "unique" : "shared",
                    spec->write_bytes > 0 ? fmt::format(", {} bytes per file", spec->write_bytes)
                                          : std::string()),
        common->label);
    set.params = {{"path", spec->path},     {"threads", spec->threads},
                  {"items", spec->items},   {"unique_dirs", spec->unique_dirs},
                  {"files", spec->files},   {"dirs", spec->dirs},
                  {"write_bytes", spec->write_bytes}, {"neighbor", spec->neighbor},
                  {"list", spec->list},     {"rename", spec->rename}};
    return Execute(std::move(set), *common, [&] { return RunMeta(*spec, WorldComm()); });
  });
}

}  // namespace t0fs::bench
