// Ctrl-C and SIGTERM during the experiment. The t0fs binary blocks SIGINT,
// SIGTERM and SIGHUP in every thread before any subcommand runs, so a stop
// request waits as a pending signal; StopRequested() collects it
// (sigtimedwait) and remembers it. Every wait of the experiment polls it, so
// a stop unwinds through the normal error path and the cleanup objects
// remove what was created.
//
// Thread safety: call from the orchestrating thread only.
#pragma once

#include <chrono>

namespace t0fs::bench::tier0 {

// True once SIGINT, SIGTERM or SIGHUP arrived; waits up to `wait` for one.
bool StopRequested(std::chrono::milliseconds wait = std::chrono::milliseconds(0));
// The signal that stopped us (0 if none).
int StopSignal();

}  // namespace t0fs::bench::tier0
