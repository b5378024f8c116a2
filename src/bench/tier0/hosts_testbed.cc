#include "bench/tier0/hosts_testbed.h"

#include <dirent.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <fstream>

#include <fmt/format.h>

#include "bench/tier0/netns_testbed.h"

namespace t0fs::bench::tier0 {
namespace {

std::string RealPath(const std::string& path) {
  char buf[PATH_MAX];
  return ::realpath(path.c_str(), buf) != nullptr ? std::string(buf) : path;
}

// The pid of the `t0fs mount ... MOUNTPOINT` process serving `mount`, or -1.
pid_t FindMountDaemon(const std::string& mount) {
  std::string want = RealPath(mount);
  DIR* proc = ::opendir("/proc");
  if (proc == nullptr) return -1;
  pid_t found = -1;
  while (dirent* entry = ::readdir(proc)) {
    pid_t pid = static_cast<pid_t>(std::atoi(entry->d_name));
    if (pid <= 0) continue;
    std::ifstream in(fmt::format("/proc/{}/cmdline", pid), std::ios::binary);
    std::vector<std::string> args;
    for (std::string arg; std::getline(in, arg, '\0');) args.push_back(arg);
    if (args.size() < 3 || args[1] != "mount" || args[0].find("t0fs") == std::string::npos) continue;
    for (size_t idx = 2; idx < args.size(); ++idx) {
      if (args[idx] == mount || args[idx] == want) found = pid;
    }
  }
  ::closedir(proc);
  return found;
}

}  // namespace

std::string ShellQuote(const std::string& arg) {
  std::string out = "'";
  for (char c : arg) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

Status HostsTestbed::Check() {
  auto status = Admin({"status"});
  if (!status.ok()) return status.status().WithContext("meta " + plan_.meta + " does not answer");
  for (const auto& m : plan_.mounts) {
    if (m.IsLocal() && !IsT0fsMounted(RealPath(m.mount))) {
      return Status(StatusCode::kInvalidArgument,
                    fmt::format("--gpu-mounts: {} (node {}) is not a t0fs mount", m.mount, m.node_id));
    }
  }
  return Status::Ok();
}

Result<ChildProcess> HostsTestbed::Launch(uint32_t idx, std::vector<std::string> argv,
                                          const std::string& json, const std::string& log) {
  const HostMount& m = plan_.mounts.at(idx);
  if (m.IsLocal()) {
    if (!json.empty()) argv.insert(argv.end(), {"--json", json});
    return ChildProcess::Spawn({std::move(argv), "", log, ""});
  }
  std::string cmd;
  for (size_t arg_idx = 0; arg_idx < argv.size(); ++arg_idx) {
    bool binary = arg_idx == 0 && argv[0] == "t0fs";
    cmd += (cmd.empty() ? "" : " ") + ShellQuote(binary ? plan_.remote_t0fs : argv[arg_idx]);
  }
  if (json.empty()) {
    return ChildProcess::Spawn({{"ssh", "-o", "BatchMode=yes", m.host, "--", cmd}, "", log, ""});
  }
  // The result travels back on stdout; the bench's own output goes to stderr.
  std::string remote = fmt::format(
      "tmp=$(mktemp /tmp/t0fs-tier0.XXXXXX) || exit 1; {} --json \"$tmp\" >&2; rc=$?; "
      "cat \"$tmp\"; rm -f \"$tmp\"; exit $rc",
      cmd);
  return ChildProcess::Spawn({{"ssh", "-o", "BatchMode=yes", m.host, "--", remote}, "", json, log});
}

Result<std::string> HostsTestbed::Admin(std::vector<std::string> argv) {
  argv.insert(argv.begin(), "t0fs");
  argv.insert(argv.end(), {"--meta", plan_.meta, "--secret-file", plan_.secret_file});
  return CaptureCommand({std::move(argv), "", "", ""},
                        fmt::format("{}/admin.{}.out", workdir_, admin_calls_++ % 4),
                        std::chrono::seconds(60));
}

double HostsTestbed::MountCpuSeconds(uint32_t idx) const {
  const HostMount& m = plan_.mounts.at(idx);
  if (!m.IsLocal()) return -1;
  pid_t pid = FindMountDaemon(m.mount);
  return pid > 0 ? ProcessCpuSeconds(pid) : -1;
}

std::string HostsTestbed::Describe() const {
  std::string gpus;
  for (const auto& m : plan_.mounts) {
    gpus += fmt::format("{}node {} {}:{}", gpus.empty() ? "" : ", ", m.node_id, m.host, m.mount);
  }
  std::string storage;
  for (uint64_t id : plan_.storage_node_ids) storage += (storage.empty() ? "" : ",") + std::to_string(id);
  return fmt::format("running cluster, meta {}; GPU nodes: {}; storage nodes: {}; network as is "
                     "(no shaping){}",
                     plan_.meta, gpus, storage,
                     plan_.link.empty() ? "" : ", link taken to be " + plan_.link);
}

}  // namespace t0fs::bench::tier0
