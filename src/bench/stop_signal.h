// Ctrl-C and SIGTERM in `t0fs bench`. The t0fs binary blocks SIGINT,
// SIGTERM and SIGHUP in every thread before any subcommand runs
// (cli/signals.h), so a stop request waits as a pending signal. While a
// bench command runs, a StopWatcher takes it with sigtimedwait in a thread
// of its own and raises a process-wide flag; nothing runs in a signal
// handler. Workers poll StopRequested() between I/Os (one relaxed atomic
// load), sleeps use SleepUnlessStopped(), and the command ends through its
// normal path: workers stop, the partial result is printed and written
// with a "stopped early" flag, the files it created are removed, and the
// exit code is 128 + the signal (130 for SIGINT, 143 for SIGTERM).
//
// Thread safety: every function is thread-safe. One StopWatcher at a time.
#pragma once

#include <chrono>
#include <string>
#include <thread>

namespace t0fs::bench {

// Takes SIGINT, SIGTERM and SIGHUP for as long as it lives.
class StopWatcher {
 public:
  StopWatcher();
  ~StopWatcher();
  StopWatcher(const StopWatcher&) = delete;
  StopWatcher& operator=(const StopWatcher&) = delete;

 private:
  std::thread thread_;
};

// True once a stop was requested. With `wait` > 0, waits up to that long for
// one (wakes at once when it comes).
bool StopRequested(std::chrono::milliseconds wait = std::chrono::milliseconds(0));
// Sleeps `seconds`; returns early (false) when a stop is requested.
bool SleepUnlessStopped(double seconds);
// The signal that asked for the stop (0 if none) and its name ("SIGINT").
int StopSignal();
std::string StopSignalName();
// 128 + the signal: the exit code of a stopped command.
int StopExitCode();
// Raises the flag as if `signal` had arrived (the watcher, and tests).
void RequestStop(int signal);
// Tests only: lowers the flag.
void ResetStopForTest();

}  // namespace t0fs::bench
