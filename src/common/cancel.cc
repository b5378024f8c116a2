#include "common/cancel.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <string_view>

#include "common/fd.h"

namespace t0fs {
namespace {

thread_local const std::atomic<bool>* current_flag = nullptr;
thread_local uint32_t current_tid = 0;
thread_local bool current_when_gone = false;

}  // namespace

CancelScope::CancelScope(const std::atomic<bool>* flag, uint32_t caller_tid, bool when_gone)
    : previous_flag_(current_flag),
      previous_tid_(current_tid),
      previous_when_gone_(current_when_gone) {
  current_flag = flag;
  current_tid = caller_tid;
  current_when_gone = when_gone;
}

CancelScope::~CancelScope() {
  current_flag = previous_flag_;
  current_tid = previous_tid_;
  current_when_gone = previous_when_gone_;
}

CallerState CallerStateOf(uint32_t tid) {
  if (tid == 0) return CallerState::kAlive;
  // A fatal signal starts a group exit: SIGKILL pending on every thread of
  // the process (the thread's own pending set, "SigPnd").
  UniqueFd fd(::open(fmt::format("/proc/{}/status", tid).c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return errno == ENOENT ? CallerState::kGone : CallerState::kAlive;
  char buf[4096];
  ssize_t n = ::read(fd.get(), buf, sizeof(buf));
  if (n <= 0) return n < 0 && errno == ESRCH ? CallerState::kGone : CallerState::kAlive;
  std::string_view status(buf, static_cast<size_t>(n));
  // A zombie (exited, not yet reaped) is gone as a caller.
  constexpr std::string_view kState = "\nState:\t";
  if (size_t state = status.find(kState);
      state != std::string_view::npos && state + kState.size() < status.size()) {
    const char code = status[state + kState.size()];
    if (code == 'Z' || code == 'X') return CallerState::kGone;
  }
  constexpr std::string_view kKey = "\nSigPnd:";
  size_t at = status.find(kKey);
  if (at == std::string_view::npos) return CallerState::kAlive;
  std::string_view rest = status.substr(at + kKey.size());
  while (!rest.empty() && (rest.front() == ' ' || rest.front() == '\t')) rest.remove_prefix(1);
  uint64_t pending = 0;
  auto [end, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), pending, 16);
  if (ec != std::errc()) return CallerState::kAlive;
  return (pending & (uint64_t{1} << (SIGKILL - 1))) != 0 ? CallerState::kBeingKilled
                                                         : CallerState::kAlive;
}

Status CancelledWait(std::string_view what) {
  return Status(StatusCode::kRpcTimeout,
                fmt::format("the wait for {} was given up: its caller was interrupted", what));
}

int PollCancellable(std::span<pollfd> fds, std::chrono::steady_clock::time_point deadline,
                    bool* cancelled) {
  *cancelled = false;
  for (;;) {
    const auto left = deadline - std::chrono::steady_clock::now();
    if (left <= std::chrono::steady_clock::duration::zero()) return 0;
    const auto slice = std::chrono::ceil<std::chrono::milliseconds>(
        std::min<std::chrono::steady_clock::duration>(left, kCancelSlice));
    const int n = ::poll(fds.data(), fds.size(), static_cast<int>(slice.count()));
    if (n < 0 && errno == EINTR) continue;
    if (n != 0) return n;
    if (std::chrono::steady_clock::now() < deadline && CancelRequested()) {
      *cancelled = true;
      return 0;
    }
  }
}

bool CancelRequested() {
  if (current_flag != nullptr && current_flag->load(std::memory_order_relaxed)) return true;
  switch (CallerStateOf(current_tid)) {
    case CallerState::kBeingKilled:
      return true;
    case CallerState::kGone:
      return current_when_gone;
    case CallerState::kAlive:
      return false;
  }
  return false;
}

}  // namespace t0fs
