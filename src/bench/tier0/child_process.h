// A child process of the experiment: a t0fs daemon, a `t0fs bench` client,
// an `ip`/`tc` command or an ssh session. Started in a network namespace
// when asked (setns before exec, as `nsenter --net`), in its own process
// group (a terminal Ctrl-C reaches only the orchestrator, which then stops
// children in order) and with PR_SET_PDEATHSIG, so nothing outlives a
// killed orchestrator.
//
// Ownership: move-only; the destructor stops a child still running
// (SIGTERM, then SIGKILL) and reaps it. Thread safety: one thread.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

#include "common/status.h"

namespace t0fs::bench::tier0 {

struct SpawnSpec {
  std::vector<std::string> argv;  // argv[0] "t0fs" runs this binary (/proc/self/exe)
  std::string netns;              // a name in /run/netns, or "" for ours
  std::string output;             // stdout (and stderr unless `errors`) appended here
  std::string errors;             // stderr, when apart from stdout
};

class ChildProcess {
 public:
  ChildProcess() = default;
  ChildProcess(ChildProcess&& other) noexcept;
  ChildProcess& operator=(ChildProcess&& other) noexcept;
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;
  ~ChildProcess();

  static Result<ChildProcess> Spawn(const SpawnSpec& spec);

  pid_t pid() const { return pid_; }
  bool running() const { return pid_ > 0; }
  const std::string& name() const { return name_; }
  // The exit code if it has exited (128 + signal when killed), else -1.
  int Poll();
  // Waits until it exits, `timeout` passes (kRpcTimeout) or, when
  // `interruptible`, a stop is requested (kInterrupted); returns the exit
  // code. Cleanup waits are not interruptible.
  Result<int> Wait(std::chrono::seconds timeout, bool interruptible = true);
  // SIGTERM, up to `grace` to exit, then SIGKILL; always reaps.
  void Stop(std::chrono::seconds grace = std::chrono::seconds(15));
  // CPU seconds (user + sys) used so far, from /proc/PID/stat; 0 if gone.
  double CpuSeconds() const;

 private:
  pid_t pid_ = -1;
  std::string name_;
};

// CPU seconds (user + sys) process `pid` used so far, from /proc; 0 if gone.
double ProcessCpuSeconds(pid_t pid);

// Runs a short command to completion (stop requests interrupt it); a
// non-zero exit is an error carrying the last lines of its output.
Status RunCommand(const SpawnSpec& spec, std::chrono::seconds timeout, bool interruptible = true);
// The same, returning what it printed on stdout.
Result<std::string> CaptureCommand(SpawnSpec spec, const std::string& scratch_file,
                                   std::chrono::seconds timeout);
// The last `lines` lines of a file.
std::string TailFile(const std::string& path, size_t lines);

}  // namespace t0fs::bench::tier0
