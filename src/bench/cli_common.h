// Shared plumbing of the bench subcommands: running a workload --repeat
// times, printing the table, writing --json/--csv, and the one-line errors.
#pragma once

#include <functional>
#include <string>

#include "bench/cli_options.h"
#include "bench/result.h"

namespace t0fs::bench {

// Prints "t0fs bench: error: <message>" on stderr; returns the exit code (1).
int ReportError(const Status& st);
// Fills host, start time and command line of a new result set.
ResultSet NewResultSet(std::string kind, std::string workload, const std::string& label);
// Checks early that --json/--csv can be written (their directory exists).
Status CheckOutputPaths(const CommonOptions& opts);
// Runs `run_once` opts.repeat times; on rank 0 prints the table and writes
// the result files. Returns the process exit code.
int Execute(ResultSet set, const CommonOptions& opts,
            const std::function<Result<RunResult>()>& run_once);
// Registers `name` under `parent`; the callback's exceptions become one-line errors.
CLI::App* AddBenchSubcommand(CLI::App* parent, const std::string& name,
                             const std::string& description);
// Wraps a subcommand body: catches every exception into a one-line error.
void SetCallback(CLI::App* cmd, int* exit_code, std::function<int()> body);

Result<EngineOptions> ToEngineOptions(const EngineCliOptions& opts, const std::string& engine);
// "randread 4 KiB, 4 threads x iodepth 32"
std::string DescribeIo(const IoSpec& spec);
nlohmann::json IoParams(const IoSpec& spec);

// The subcommands (one file each).
void RegisterIo(CLI::App* bench, int* exit_code);
void RegisterAi(CLI::App* bench, int* exit_code);
void RegisterSweep(CLI::App* bench, int* exit_code);
void RegisterMeta(CLI::App* bench, int* exit_code);
void RegisterEc(CLI::App* bench, int* exit_code);
void RegisterReport(CLI::App* bench, int* exit_code);

}  // namespace t0fs::bench
