// The child processes of `t0fs up` (meta, data nodes, mount).
//
// Each child runs in a process group of its own: a Ctrl-C on the terminal
// signals the foreground group — `up` alone — and `up` stops the children in
// its order (mount, data, meta). PR_SET_PDEATHSIG ties each child to `up`, so
// that a kill -9 of `up` still stops them (SIGTERM). A child that dies is
// restarted after a back-off that grows while it keeps dying quickly.
//
// Thread safety: one thread (the supervisor's) uses these objects.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"

namespace t0fs::cli {

using SupervisorClock = std::chrono::steady_clock;

enum class RestartPolicy { kAlways, kNever };
Result<RestartPolicy> ParseRestartPolicy(const std::string& text);

class ChildProcess {
 public:
  // `args` is the argv of the t0fs binary (/proc/self/exe): {"t0fs", "meta", ...}.
  ChildProcess(std::string name, std::vector<std::string> args, std::string log);

  // Forks and execs; stdout and stderr are appended to the log, stdin is
  // /dev/null, the signal mask is cleared.
  Status Start();
  // The exit status (128 + signal when killed) once it has exited; nullopt
  // while it runs (and after it was reaped).
  std::optional<int> Reap();
  void Signal(int sig) const;
  // Forgets a child that SIGKILL did not reap in time (stuck in the kernel).
  void Abandon() { pid_ = -1; }

  bool running() const { return pid_ > 0; }
  pid_t pid() const { return pid_; }
  const std::string& name() const { return name_; }
  const std::string& log() const { return log_; }
  SupervisorClock::time_point started_at() const { return started_at_; }

  // Restarts: the delay before the next one (1 s, doubled for every death
  // within kQuickDeath of its start, at most 30 s; back to 1 s after a long
  // run), and when it is due.
  std::chrono::milliseconds NextBackoff();
  std::optional<SupervisorClock::time_point> restart_at;
  uint32_t restarts = 0;

 private:
  std::string name_;
  std::vector<std::string> args_;
  std::string log_;
  pid_t pid_ = -1;
  SupervisorClock::time_point started_at_{};
  std::chrono::milliseconds backoff_{0};
};

// SIGTERM to every running child of `group` at once, then waits until they
// have exited, `deadline` passes, or `hurry()` says to stop waiting; the rest
// get SIGKILL. Returns the names of the children that had to be killed.
std::vector<std::string> StopGroup(const std::vector<ChildProcess*>& group,
                                   SupervisorClock::time_point deadline,
                                   const std::function<bool()>& hurry);

// The last `lines` lines of a log, indented, for a report.
std::string TailOf(const std::string& path, size_t lines);

}  // namespace t0fs::cli
