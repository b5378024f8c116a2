#include "bench/tier0/cli_tier0.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <memory>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "bench/cli_common.h"
#include "bench/tier0/experiment.h"
#include "bench/tier0/hosts_testbed.h"
#include "bench/tier0/netns_testbed.h"
#include "bench/tier0/say.h"
#include "bench/stop_signal.h"
#include "bench/tier0/tier0_report.h"

namespace t0fs::bench::tier0 {
namespace {

constexpr int kExitRefused = 2;  // not root, no namespaces: nothing was tried

// Removes the scratch directory on every return path, after the testbed
// (declared later, so destroyed first) has stopped and unmounted
// everything; a mount still inside is detached first, never deleted into.
class ScratchDir {
 public:
  explicit ScratchDir(std::string path) : path_(std::move(path)) {}
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  ~ScratchDir() {
    if (path_.empty()) return;
    DetachMountsBelow(path_);
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Keeps the daemons' logs (meta, data nodes, mounts) with the results.
void CopyDaemonLogs(const std::string& scratch, const std::string& out) {
  std::error_code ec;
  std::filesystem::create_directories(out + "/logs/cluster", ec);
  for (const auto& entry : std::filesystem::directory_iterator(scratch, ec)) {
    if (entry.path().extension() == ".log") {
      std::filesystem::copy_file(entry.path(), out + "/logs/cluster/" + entry.path().filename().string(),
                                 std::filesystem::copy_options::overwrite_existing, ec);
    }
  }
}

int Refuse(const std::string& message) {
  std::fprintf(stderr, "t0fs bench tier0-vs-networked: %s\n", message.c_str());
  return kExitRefused;
}

Status WriteText(const std::string& path, const std::string& text) { return WriteFileAtomic(path, text); }

// Runs `t0fs bench report` on the two result sets (networked is the baseline).
Status RenderReport(const std::string& out) {
  return RunCommand({{"t0fs", "bench", "report", out + "/networked.json", out + "/tier0.json", "-o",
                      out + "/report.html", "--title", "t0fs: Tier 0 vs networked storage"},
                     "",
                     out + "/logs/report.log",
                     ""},
                    std::chrono::seconds(120));
}

// After a stop: the rows measured so far, printed and written (table.txt,
// tier0-vs-networked.json and the two result sets, all marked stopped
// early; no HTML report, it would start another process).
void WritePartial(const Tier0Results& partial, const Tier0Plan& plan, const std::string& command) {
  if (partial.rows.empty()) {
    Say("stopped before any test completed: nothing to report");
    return;
  }
  std::string table = RenderTable(partial, plan);
  std::string banner = fmt::format("STOPPED EARLY by {}: the rows measured before the stop\n",
                                   StopSignalName());
  std::fputs(("\n" + banner + table).c_str(), stdout);
  ResultSet header = NewResultSet("tier0-vs-networked", "Tier 0 vs networked", "");
  header.command = command;
  header.stopped_by = StopSignalName();
  nlohmann::json summary = ToSummaryJson(partial, plan);
  summary["stopped_early"] = true;
  summary["stop_signal"] = StopSignalName();
  header.params = summary["params"];
  for (Status st : {WriteText(plan.out + "/table.txt", banner + table),
                    WriteText(plan.out + "/tier0-vs-networked.json", summary.dump(2)),
                    WriteText(plan.out + "/tier0.json",
                              ToJson(ToResultSet(partial, Placement::kTier0, header)).dump(2)),
                    WriteText(plan.out + "/networked.json",
                              ToJson(ToResultSet(partial, Placement::kNetworked, header)).dump(2))}) {
    if (!st.ok()) Say("could not write the partial results: " + st.ToString());
  }
  Say(fmt::format("wrote the partial results to {}/{{table.txt, tier0-vs-networked.json, "
                  "tier0.json, networked.json}}",
                  plan.out));
}

int Run(const Tier0Options& opts, const std::string& command) {
  auto plan_or = MakePlan(opts);
  if (!plan_or.ok()) return ReportError(plan_or.status());
  Tier0Plan plan = std::move(plan_or).value();
  if (!plan.hosts && ::geteuid() != 0) {
    return Refuse("needs root to create network namespaces, veth links and tc shaping (run as "
                  "root, or use --hosts with a running cluster)");
  }
  if (plan.out.empty()) {
    char stamp[32];
    std::time_t now = std::time(nullptr);
    std::strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", std::localtime(&now));
    plan.out = std::string("tier0-results-") + stamp;
  }
  std::error_code ec;
  std::filesystem::create_directories(plan.out, ec);
  if (ec) return ReportError(Status(StatusCode::kInvalidArgument, "--out " + plan.out + ": " + ec.message()));
  plan.out = std::filesystem::absolute(plan.out).string();

  std::string tag = std::to_string(::getpid());
  std::string tmpl = fmt::format("/tmp/t0x-{}-XXXXXX", tag);
  if (::mkdtemp(tmpl.data()) == nullptr) return ReportError(Status::FromErrno(errno, "mkdtemp"));
  ScratchDir scratch(tmpl);

  std::unique_ptr<Testbed> testbed;
  if (plan.hosts) {
    auto hosts = std::make_unique<HostsTestbed>(plan, scratch.path());
    if (Status st = hosts->Check(); !st.ok()) return ReportError(st);
    testbed = std::move(hosts);
  } else {
    auto netns = std::make_unique<NetnsTestbed>(plan, scratch.path(), tag);
    Status st = netns->Start();
    if (!st.ok()) {
      netns->Teardown();
      if (st.message().find("network namespaces") != std::string::npos) {
        return Refuse("cannot build the namespaces: " + st.ToString());
      }
      if (st == StatusCode::kInterrupted) Say("stopped; everything created was removed");
      return ReportError(st);
    }
    testbed = std::move(netns);
  }
  Say(testbed->Describe());

  Experiment experiment(plan, *testbed, plan.out, tag);
  auto results = experiment.Run();
  if (plan.hosts && !plan.keep) {
    if (Status st = experiment.RemoveData(); !st.ok()) Say("could not remove the data: " + st.ToString());
  }
  testbed->Teardown();
  if (!plan.hosts) CopyDaemonLogs(scratch.path(), plan.out);
  if (!results.ok()) {
    if (results.status() == StatusCode::kInterrupted) {
      WritePartial(experiment.partial(), plan, command);
      Say(fmt::format("stopped by {}; everything created was removed", StopSignalName()));
      return StopExitCode();
    }
    return ReportError(results.status());
  }

  std::string table = RenderTable(*results, plan);
  std::fputs(("\n" + table).c_str(), stdout);
  ResultSet header = NewResultSet("tier0-vs-networked", "Tier 0 vs networked", "");
  header.command = command;
  header.params = ToSummaryJson(*results, plan)["params"];
  for (Status st : {WriteText(plan.out + "/table.txt", table),
                    WriteText(plan.out + "/tier0-vs-networked.json", ToSummaryJson(*results, plan).dump(2)),
                    WriteText(plan.out + "/tier0.json",
                              ToJson(ToResultSet(*results, Placement::kTier0, header)).dump(2)),
                    WriteText(plan.out + "/networked.json",
                              ToJson(ToResultSet(*results, Placement::kNetworked, header)).dump(2)),
                    RenderReport(plan.out)}) {
    if (!st.ok()) return ReportError(st);
  }
  Say(fmt::format("wrote {}/{{table.txt, tier0-vs-networked.json, tier0.json, networked.json, "
                  "report.html, raw/, logs/}}",
                  plan.out));
  return 0;
}

}  // namespace

void RegisterTier0(CLI::App* bench, int* exit_code) {
  auto* cmd = AddBenchSubcommand(
      bench, "tier0-vs-networked",
      "The Tier 0 experiment: the tests of the Tier 0 report on data placed on the GPU nodes' own "
      "drives vs. on "
      "storage nodes behind a shaped link, in one command (root; network namespaces), or on a "
      "running cluster (--hosts)");
  auto o = std::make_shared<Tier0Options>();
  cmd->add_option("--gpu-nodes", o->gpu_nodes, "GPU nodes: a data node and a client each")->capture_default_str();
  cmd->add_option("--storage-nodes", o->storage_nodes, "storage nodes: a data node each, behind the link")
      ->capture_default_str();
  cmd->add_option("--link", o->link, "each storage node's link rate, tc units (1gbit, 10gbit, 500mbit)")
      ->capture_default_str();
  cmd->add_option("--size", o->size, "data per client for the 1 MiB / 4 KiB tests and the AI patterns "
                                     "(default 1G, --quick 8M)");
  cmd->add_option("--runtime", o->runtime, "length of each timed test (default 10s, --quick 1s)");
  cmd->add_option("--threads", o->threads, "threads per client in the 1 MiB / 4 KiB tests (default 4, --quick 2)");
  cmd->add_option("--out", o->out, "results directory (default ./tier0-results-<time>)");
  cmd->add_flag("--quick", o->quick, "tiny sizes and short runs: checks the machinery, not the hardware");
  cmd->add_flag("--keep", o->keep, "--hosts: keep the experiment's files in the file system");
  cmd->add_option("--chunk-size", o->chunk_size, "chunk size of the namespace cluster")->capture_default_str();
  cmd->add_option("--mlperf-scale", o->mlperf_scale,
                  "MLPerf unet3d records are 1/N of their real size (default 64, --quick 4096)");
  cmd->add_option("--mlperf-max", o->mlperf_max, "MLPerf search: most accelerators tried (default 16, --quick 4)");
  auto* hosts = cmd->add_option_group("Running cluster (--hosts)");
  hosts->add_flag("--hosts", o->hosts, "use a running cluster: no namespaces, no tc");
  hosts->add_option("--meta", o->meta, "meta service address (host:port)");
  hosts->add_option("--secret-file", o->secret_file, "cluster secret file");
  hosts->add_option("--gpu-mounts", o->gpu_mounts,
                    "GPU nodes: NODE_ID=HOST:MOUNT,... (HOST 'local' or an ssh destination)");
  hosts->add_option("--storage-node-ids", o->storage_node_ids, "storage nodes' data node ids: 3,4");
  hosts->add_option("--remote-t0fs", o->remote_t0fs, "the t0fs binary on ssh hosts")->capture_default_str();
  cmd->footer(
      "Examples:\n"
      "  t0fs bench tier0-vs-networked --gpu-nodes 2 --storage-nodes 1 --link 10gbit --out t0\n"
      "  t0fs bench tier0-vs-networked --quick --link 1gbit\n"
      "  t0fs bench tier0-vs-networked --hosts --meta meta1:7700 --secret-file /etc/t0fs/secret \\\n"
      "      --gpu-mounts 1=gpu1:/mnt/t0fs,2=gpu2:/mnt/t0fs --storage-node-ids 3 --link 100gbit\n"
      "Exit 2: refused (not root, no namespaces). Ctrl-C removes everything it created.");
  SetCallback(cmd, exit_code, [o] {
    std::string command = "t0fs bench tier0-vs-networked";
    return Run(*o, command);
  });
}

}  // namespace t0fs::bench::tier0
