// Asking a mount whether it answers, without ever blocking on it.
//
// A FUSE mount whose daemon is gone answers every request with ENOTCONN (a
// dead mount); one whose daemon is stopped or stuck answers nothing, and a
// stat or getxattr on it blocks until the daemon moves. Every access here
// runs in a forked child that is killed when it does not answer within the
// timeout, so the caller always gets an answer: answers, dead, or not
// answering. A child stuck in the kernel beyond SIGKILL is not waited for;
// it is reaped by a later call.
//
// Thread safety: the functions fork; call them from a process whose other
// threads hold no locks the child needs (the CLI is single-threaded).
#pragma once

#include <sys/stat.h>

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"

namespace t0fs {

inline constexpr std::chrono::milliseconds kProbeTimeout{1000};

// Runs each body in its own forked child, all at once, and returns what each
// wrote (its return value), or nullopt for a child that did not finish
// within `timeout`. A body may only make system calls and build its string.
std::vector<std::optional<std::string>> RunInChildren(
    std::chrono::milliseconds timeout, const std::vector<std::function<std::string()>>& bodies);

enum class MountHealth {
  kAnswers,       // statfs of the mount point succeeded
  kDead,          // ENOTCONN / ECONNABORTED: its daemon is gone
  kNotAnswering,  // no answer within the timeout: its daemon is stopped or hung
  kError,         // another error (e.g. EACCES)
};

struct MountProbe {
  MountHealth health = MountHealth::kError;
  int error = 0;      // the errno of kDead and kError
  std::string state;  // the root's user.t0fs.mount, when asked and answered
  // "answers", "dead (its daemon is gone: Transport endpoint is not connected)", ...
  std::string Describe() const;
};

// Probes every mount point at once (statfs, which always reaches the daemon,
// unlike a stat the kernel may answer from its cache); with `read_state`, an
// answering mount is also asked for its user.t0fs.mount attribute.
std::vector<MountProbe> ProbeMounts(const std::vector<std::string>& points, bool read_state,
                                    std::chrono::milliseconds timeout = kProbeTimeout);
MountProbe ProbeMount(const std::string& point, bool read_state = false,
                      std::chrono::milliseconds timeout = kProbeTimeout);

// stat(2) and realpath(3) of a path that may lie on a hung mount.
Result<struct stat> StatWithTimeout(const std::string& path,
                                    std::chrono::milliseconds timeout = kProbeTimeout);
Result<std::string> RealpathWithTimeout(const std::string& path,
                                        std::chrono::milliseconds timeout = kProbeTimeout);

}  // namespace t0fs
