// Orderly shutdown on SIGINT/SIGTERM for the long-running subcommands.
//
// BlockStopSignals() runs first in main, before any thread exists, so every
// thread inherits the mask and the signals are only ever taken by
// WaitForStopSignal() (sigwait): no async handler, no races.
#pragma once

#include <thread>

namespace t0fs::cli {

void BlockStopSignals();
// Blocks until SIGINT, SIGTERM or SIGHUP arrives; returns the signal.
int WaitForStopSignal();
// Makes WaitForStopSignal() return (e.g. when the work ended by itself).
void WakeStopWaiter();
// For the short-lived commands (status, fsck, layout, objective, node,
// umount), which have nothing to stop in order: a thread takes the stop
// signals and ends the process at once (exit 128 + signal), so that Ctrl-C
// works while a call waits for a meta that does not answer. Once per
// process; start it before the work.
void ExitOnStopSignal();

// While one lives, a stop signal ends the process at once (128 + signal):
// for a start-up step that may wait long (a meta that does not answer) and
// leaves nothing behind when cut short. Its end hands the signals back (to
// WaitForStopSignal; one that came meanwhile stays pending).
class ExitOnStopDuring {
 public:
  ExitOnStopDuring();
  ~ExitOnStopDuring();
  ExitOnStopDuring(const ExitOnStopDuring&) = delete;
  ExitOnStopDuring& operator=(const ExitOnStopDuring&) = delete;

 private:
  std::thread watcher_;
};

}  // namespace t0fs::cli
