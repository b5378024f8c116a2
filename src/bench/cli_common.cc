#include "bench/cli_common.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <ctime>
#include <fstream>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "bench/cache_drop.h"
#include "bench/comm.h"
#include "bench/report_checks.h"
#include "bench/stop_signal.h"
#include "bench/table.h"
#include "common/config.h"
#include "common/host_name.h"

namespace t0fs::bench {

void AddCommonOptions(CLI::App* cmd, CommonOptions* opts) {
  cmd->add_option("--json", opts->json, "Write the results to this JSON file")
      ->type_name("FILE");
  cmd->add_option("--csv", opts->csv, "Write the results to this CSV file")->type_name("FILE");
  cmd->add_option("--label", opts->label, "Name of this result set in reports (default: PATH)");
  cmd->add_option("--repeat", opts->repeat,
                  "Run N times; report each run, the median and the coefficient of variation")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000));
  cmd->add_flag("-q,--quiet", opts->quiet, "No live progress line");
  cmd->add_flag("--keep", opts->keep, "Keep the files the benchmark created");
}

void AddEngineOptions(CLI::App* cmd, EngineCliOptions* opts, bool with_engine) {
  if (with_engine) {
    cmd->add_option("--engine", opts->engine,
                    "I/O engine: psync (pread/pwrite), io_uring (iodepth in flight per thread, "
                    "registered buffers) or native (libt0fs's batched I/O, iodepth in flight per "
                    "thread; PATH on "
                    "t0fs)")
        ->capture_default_str()
        ->check(CLI::IsMember({"psync", "io_uring", "native"}));
  }
  cmd->add_option("--meta", opts->meta, "native engine: address of the t0fs meta service")
      ->capture_default_str();
  cmd->add_option("--secret-file", opts->secret_file,
                  "native engine: the cluster secret file");
  cmd->add_option("--node-id", opts->node_id,
                  "native engine: this client's data node, whose replicas it reads directly "
                  "(default: detected by host)");
  cmd->add_flag("--verify", opts->verify,
                "Write a checkable pattern and verify every block read (a write run reads its "
                "data back afterwards, untimed)");
  cmd->add_option("--seed", opts->seed, "Seed of the data pattern and random offsets")
      ->capture_default_str();
  cmd->add_option("--drop-caches", opts->drop_caches, kDropCachesHelp)
      ->capture_default_str()
      ->check(CLI::IsMember(CacheDropChoices()));
}

int ReportError(const Status& st) {
  std::string msg = st.message().empty() ? std::string(CodeText(st.code())) : st.message();
  std::fprintf(stderr, "t0fs bench: error: %s\n", msg.c_str());
  return 1;
}

static std::string CommandLine() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::string raw((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::string out;
  for (char c : raw) out += c == '\0' ? ' ' : c;
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

ResultSet NewResultSet(std::string kind, std::string workload, const std::string& label) {
  ResultSet set;
  set.kind = std::move(kind);
  set.workload = std::move(workload);
  set.label = label;
  set.host = HostName();
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
  set.started = buf;
  set.command = CommandLine();
  set.ranks = WorldComm().size();
  return set;
}

Status CheckOutputPaths(const CommonOptions& opts) {
  for (const std::string& path : {opts.json, opts.csv}) {
    if (path.empty()) continue;
    auto slash = path.find_last_of('/');
    std::string dir = slash == std::string::npos ? "." : path.substr(0, slash == 0 ? 1 : slash);
    struct stat st {};
    if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
      return Status(StatusCode::kNotFound, path + ": directory " + dir + " does not exist");
    }
    if (::access(dir.c_str(), W_OK) != 0) {
      return Status(StatusCode::kPermissionDenied, path + ": directory " + dir + " is not writable");
    }
  }
  return Status::Ok();
}

int Execute(ResultSet set, const CommonOptions& opts,
            const std::function<Result<RunResult>()>& run_once) {
  if (set.label.empty()) set.label = set.params.value("path", set.workload);
  Status paths = CheckOutputPaths(opts);
  if (!paths.ok()) return ReportError(paths);
  Comm& comm = WorldComm();
  for (uint32_t run = 0; run < opts.repeat && !StopRequested(); ++run) {
    auto result = run_once();
    if (!result.ok()) {
      if (StopRequested()) break;  // an error the stop caused: report what ran
      if (comm.rank() == 0 || result.status().code() != StatusCode::kIoError) {
        return ReportError(result.status());
      }
      return 1;
    }
    set.runs.push_back(std::move(result).value());
    if (set.runs.back().stopped_early) break;
  }
  if (StopRequested()) set.stopped_by = StopSignalName();
  if (comm.rank() != 0) return set.stopped_early() ? StopExitCode() : 0;
  std::string table = FormatResultSet(set);
  std::fwrite(table.data(), 1, table.size(), stdout);
  std::fflush(stdout);
  for (const std::string& warning : set.Cache().warnings) {
    std::fprintf(stderr, "t0fs bench: warning: %s\n", warning.c_str());
  }
  if (!opts.json.empty()) {
    Status st = WriteFileAtomic(opts.json, ToJson(set).dump(1) + "\n");
    if (!st.ok()) return ReportError(st);
  }
  if (!opts.csv.empty()) {
    Status st = WriteFileAtomic(opts.csv, ToCsv(set));
    if (!st.ok()) return ReportError(st);
  }
  if (set.stopped_early()) {
    std::fprintf(stderr, "t0fs bench: stopped by %s: the result above is partial%s\n",
                 set.stopped_by.c_str(), opts.keep ? "" : "; the files it created were removed");
    return StopExitCode();
  }
  return 0;
}

CLI::App* AddBenchSubcommand(CLI::App* parent, const std::string& name,
                             const std::string& description) {
  CLI::App* cmd = parent->add_subcommand(name, description);
  cmd->option_defaults()->always_capture_default();
  return cmd;
}

void SetCallback(CLI::App* cmd, int* exit_code, std::function<int()> body) {
  cmd->callback([exit_code, body = std::move(body)] {
    // SIGINT/SIGTERM from here on raise the stop flag the workloads poll.
    StopWatcher watcher;
    try {
      *exit_code = body();
    } catch (const std::exception& e) {
      *exit_code = ReportError(Status(StatusCode::kInternal, e.what()));
    }
    // A stopped command exits 128 + signal (130 for Ctrl-C), whatever its path.
    if (StopRequested()) *exit_code = StopExitCode();
  });
}

}  // namespace t0fs::bench
