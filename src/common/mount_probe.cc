#include "common/mount_probe.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>

namespace t0fs {
namespace {

using Clock = std::chrono::steady_clock;

// Children killed after their timeout that had not exited yet (stuck in an
// uninterruptible wait): reaped by later calls so they do not stay zombies.
std::vector<pid_t>& Abandoned() {
  static std::vector<pid_t> pids;
  return pids;
}

void ReapAbandoned() {
  auto& pids = Abandoned();
  std::erase_if(pids, [](pid_t pid) {
    int status = 0;
    return ::waitpid(pid, &status, WNOHANG) != 0;
  });
}

// Kills a child that did not answer and reaps it if it dies promptly.
void KillChild(pid_t pid) {
  ::kill(pid, SIGKILL);
  for (int attempt = 0; attempt < 20; ++attempt) {
    int status = 0;
    if (::waitpid(pid, &status, WNOHANG) != 0) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  Abandoned().push_back(pid);
}

struct Running {
  pid_t pid = -1;
  int fd = -1;
  std::string out;
  bool eof = false;
};

void WriteAll(int fd, const std::string& data) {
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    done += static_cast<size_t>(n);
  }
}

// "E<errno>" from a failed call, the body's encoding of an error.
std::string Errno(int err) {
  return fmt::format("E{}", err);
}

int ParseErrno(const std::string& out) {
  return std::atoi(out.c_str() + 1);
}

}  // namespace

std::vector<std::optional<std::string>> RunInChildren(
    std::chrono::milliseconds timeout, const std::vector<std::function<std::string()>>& bodies) {
  ReapAbandoned();
  std::vector<Running> runs(bodies.size());
  std::vector<std::optional<std::string>> results(bodies.size());
  pid_t parent = ::getpid();
  for (size_t idx = 0; idx < bodies.size(); ++idx) {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) continue;
    pid_t pid = ::fork();
    if (pid < 0) {
      ::close(fds[0]);
      ::close(fds[1]);
      continue;
    }
    if (pid == 0) {
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (::getppid() != parent) ::_exit(1);
      ::close(fds[0]);
      WriteAll(fds[1], bodies[idx]());
      ::_exit(0);
    }
    ::close(fds[1]);
    ::fcntl(fds[0], F_SETFL, O_NONBLOCK);
    runs[idx].pid = pid;
    runs[idx].fd = fds[0];
  }
  auto deadline = Clock::now() + timeout;
  for (;;) {
    std::vector<pollfd> polls;
    std::vector<size_t> which;
    for (size_t idx = 0; idx < runs.size(); ++idx) {
      if (runs[idx].fd >= 0 && !runs[idx].eof) {
        polls.push_back(pollfd{runs[idx].fd, POLLIN, 0});
        which.push_back(idx);
      }
    }
    if (polls.empty()) break;
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) break;
    int n = ::poll(polls.data(), polls.size(), static_cast<int>(left.count()) + 1);
    if (n < 0 && errno != EINTR) break;
    for (size_t p = 0; p < polls.size(); ++p) {
      if (polls[p].revents == 0) continue;
      Running& run = runs[which[p]];
      char buf[4096];
      for (;;) {
        ssize_t got = ::read(run.fd, buf, sizeof buf);
        if (got > 0) {
          run.out.append(buf, static_cast<size_t>(got));
          continue;
        }
        if (got == 0) run.eof = true;
        if (got < 0 && errno == EINTR) continue;
        break;
      }
    }
  }
  for (size_t idx = 0; idx < runs.size(); ++idx) {
    Running& run = runs[idx];
    if (run.pid < 0) continue;
    ::close(run.fd);
    if (!run.eof) {
      KillChild(run.pid);
      continue;
    }
    // The pipe closed: the child has written everything and is exiting.
    int status = 0;
    if (::waitpid(run.pid, &status, 0) == run.pid && WIFEXITED(status) &&
        WEXITSTATUS(status) == 0) {
      results[idx] = std::move(run.out);
    }
  }
  return results;
}

std::string MountProbe::Describe() const {
  switch (health) {
    case MountHealth::kAnswers:
      return "answers";
    case MountHealth::kDead:
      return fmt::format("dead (its daemon is gone: {})", std::strerror(error));
    case MountHealth::kNotAnswering:
      return "not answering (its daemon is stopped or hung)";
    case MountHealth::kError:
      break;
  }
  return fmt::format("error ({})", std::strerror(error));
}

std::vector<MountProbe> ProbeMounts(const std::vector<std::string>& points, bool read_state,
                                    std::chrono::milliseconds timeout) {
  std::vector<std::function<std::string()>> bodies;
  for (const std::string& point : points) {
    bodies.push_back([point, read_state]() -> std::string {
      struct statfs sfs;
      if (::statfs(point.c_str(), &sfs) != 0) return Errno(errno);
      if (!read_state) return "A";
      char value[1024];
      ssize_t n = ::getxattr(point.c_str(), "user.t0fs.mount", value, sizeof value);
      if (n >= 0) return "X" + std::string(value, static_cast<size_t>(n));
      if (errno == ENODATA || errno == ENOTSUP || errno == ERANGE) return "X";
      return Errno(errno);
    });
  }
  std::vector<MountProbe> out;
  for (const auto& answer : RunInChildren(timeout, bodies)) {
    MountProbe probe;
    if (!answer || answer->empty()) {
      probe.health = answer ? MountHealth::kError : MountHealth::kNotAnswering;
    } else if ((*answer)[0] == 'E') {
      probe.error = ParseErrno(*answer);
      bool dead = probe.error == ENOTCONN || probe.error == ECONNABORTED;
      probe.health = dead ? MountHealth::kDead : MountHealth::kError;
    } else {
      probe.health = MountHealth::kAnswers;
      if ((*answer)[0] == 'X') probe.state = answer->substr(1);
    }
    out.push_back(std::move(probe));
  }
  return out;
}

MountProbe ProbeMount(const std::string& point, bool read_state,
                      std::chrono::milliseconds timeout) {
  return ProbeMounts({point}, read_state, timeout).front();
}

Result<struct stat> StatWithTimeout(const std::string& path, std::chrono::milliseconds timeout) {
  auto answer =
      RunInChildren(timeout, {[path]() -> std::string {
                      struct stat st {};
                      if (::stat(path.c_str(), &st) != 0) return Errno(errno);
                      return "S" + std::string(reinterpret_cast<const char*>(&st), sizeof st);
                    }})
          .front();
  if (!answer) {
    return Status(StatusCode::kRpcTimeout,
                  fmt::format("{}: no answer within {} ms (a hung mount?)", path, timeout.count()));
  }
  if (answer->size() == 1 + sizeof(struct stat) && (*answer)[0] == 'S') {
    struct stat st {};
    std::memcpy(&st, answer->data() + 1, sizeof st);
    return st;
  }
  if (!answer->empty() && (*answer)[0] == 'E') return Status::FromErrno(ParseErrno(*answer), path);
  return Status(StatusCode::kInternal, fmt::format("stat {}: no result", path));
}

Result<std::string> RealpathWithTimeout(const std::string& path,
                                        std::chrono::milliseconds timeout) {
  auto answer = RunInChildren(timeout, {[path]() -> std::string {
                                char resolved[PATH_MAX];
                                if (::realpath(path.c_str(), resolved) == nullptr) {
                                  return Errno(errno);
                                }
                                return "P" + std::string(resolved);
                              }})
                    .front();
  if (!answer) {
    return Status(StatusCode::kRpcTimeout,
                  fmt::format("{}: no answer within {} ms (a hung mount?)", path, timeout.count()));
  }
  if (!answer->empty() && (*answer)[0] == 'P') return answer->substr(1);
  if (!answer->empty() && (*answer)[0] == 'E') return Status::FromErrno(ParseErrno(*answer), path);
  return Status(StatusCode::kInternal, fmt::format("realpath {}: no result", path));
}

}  // namespace t0fs
