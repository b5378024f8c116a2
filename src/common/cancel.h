// The cancellation of the request a thread serves: a FUSE worker points the
// thread at its request (the interrupt flag the kernel's INTERRUPT sets, and
// the calling thread's id) for as long as it serves it, and the retry loops
// of the calls the thread makes (MetaClient::Retry, DataClient::Attempt)
// stop retrying once it is cancelled: a caller stuck on an unreachable node
// gets the error it would get at the end of the retry timeout, at once.
//
// Cancelled means: the kernel interrupted the request (a signal to the
// caller, for foreground requests), or the calling thread is being killed
// (SIGKILL pending: a fatal signal, Ctrl-C included, becomes one), or (for
// a request whose result only its caller wants: a read) it is gone. The
// kernel never interrupts background requests (buffered reads, async direct
// I/O), and a caller waiting for an O_DIRECT read cannot die before its
// answer: only its pending SIGKILL tells.
//
// Thread safety: the scope is the current thread's only.
#pragma once

#include <poll.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <span>
#include <string_view>

#include "common/status.h"

namespace t0fs {

class CancelScope {
 public:
  // `flag` (may be null) must outlive the scope; `caller_tid` 0: unknown.
  // `when_gone`: a caller that no longer exists cancels too.
  CancelScope(const std::atomic<bool>* flag, uint32_t caller_tid, bool when_gone = false);
  ~CancelScope();
  CancelScope(const CancelScope&) = delete;
  CancelScope& operator=(const CancelScope&) = delete;

 private:
  const std::atomic<bool>* previous_flag_;
  uint32_t previous_tid_;
  bool previous_when_gone_;
};

// Whether the request the current thread serves was cancelled (reads the
// caller's /proc status: for retry loops, not for every request).
bool CancelRequested();
// How long a wait that may be cancelled (a reply, a poll for several
// replies) sleeps at most between two looks at CancelRequested.
inline constexpr std::chrono::milliseconds kCancelSlice{1000};
// The status of a wait given up because its request was cancelled: a
// timeout (nothing was answered), whose message names `what` ("a reply",
// "replies") and why. No server is to blame for it.
Status CancelledWait(std::string_view what);
// poll(2) on `fds` until one of them has an event or `deadline` passes,
// looking at CancelRequested between slices of kCancelSlice (not when the
// deadline ends the wait). >0: events; 0: the deadline passed, or the
// request was cancelled (`*cancelled` set); <0: an error (errno; EINTR is
// waited through).
int PollCancellable(std::span<pollfd> fds, std::chrono::steady_clock::time_point deadline,
                    bool* cancelled);

enum class CallerState { kAlive, kBeingKilled, kGone };
// Thread `tid`: alive, being killed (SIGKILL pending), or gone (no such
// thread, or a zombie). When /proc cannot tell (e.g. another pid
// namespace): kAlive.
CallerState CallerStateOf(uint32_t tid);

}  // namespace t0fs
