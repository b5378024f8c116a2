#include "cli/supervisor.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <thread>

namespace t0fs::cli {
namespace {

constexpr std::chrono::seconds kQuickDeath{30};
constexpr std::chrono::milliseconds kFirstBackoff{1000};
constexpr std::chrono::milliseconds kMaxBackoff{30000};

}  // namespace

Result<RestartPolicy> ParseRestartPolicy(const std::string& text) {
  if (text == "always") return RestartPolicy::kAlways;
  if (text == "never") return RestartPolicy::kNever;
  return Status(StatusCode::kInvalidArgument,
                fmt::format("--restart must be always or never, not '{}'", text));
}

ChildProcess::ChildProcess(std::string name, std::vector<std::string> args, std::string log)
    : name_(std::move(name)), args_(std::move(args)), log_(std::move(log)) {}

Status ChildProcess::Start() {
  int log_fd = ::open(log_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (log_fd < 0) return Status::FromErrno(errno, "open " + log_);
  pid_t parent = ::getpid();
  pid_t pid = ::fork();
  if (pid < 0) {
    int err = errno;
    ::close(log_fd);
    return Status::FromErrno(err, "fork");
  }
  if (pid == 0) {
    // A group of its own: the terminal's Ctrl-C goes to `up` only.
    ::setpgid(0, 0);
    // Stop with the supervisor even if it is killed without a chance to stop us.
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (::getppid() != parent) ::_exit(1);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::dup2(log_fd, STDOUT_FILENO);
    ::dup2(log_fd, STDERR_FILENO);
    int null_fd = ::open("/dev/null", O_RDONLY);
    if (null_fd >= 0) ::dup2(null_fd, STDIN_FILENO);
    std::vector<char*> argv;
    for (auto& a : args_) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execv("/proc/self/exe", argv.data());
    ::_exit(127);
  }
  // Also from the parent, so the group exists before anyone signals it.
  ::setpgid(pid, pid);
  ::close(log_fd);
  pid_ = pid;
  started_at_ = SupervisorClock::now();
  restart_at.reset();
  return Status::Ok();
}

std::optional<int> ChildProcess::Reap() {
  if (pid_ <= 0) return std::nullopt;
  int status = 0;
  pid_t r = ::waitpid(pid_, &status, WNOHANG);
  if (r != pid_) return std::nullopt;
  pid_ = -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

void ChildProcess::Signal(int sig) const {
  if (pid_ > 0) ::kill(pid_, sig);
}

std::chrono::milliseconds ChildProcess::NextBackoff() {
  bool quick = SupervisorClock::now() - started_at_ < kQuickDeath;
  backoff_ = !quick || backoff_.count() == 0 ? kFirstBackoff : std::min(backoff_ * 2, kMaxBackoff);
  return backoff_;
}

std::vector<std::string> StopGroup(const std::vector<ChildProcess*>& group,
                                   SupervisorClock::time_point deadline,
                                   const std::function<bool()>& hurry) {
  for (ChildProcess* child : group) child->Signal(SIGTERM);
  auto all_exited = [&] {
    bool all = true;
    for (ChildProcess* child : group) {
      (void)child->Reap();
      all = all && !child->running();
    }
    return all;
  };
  while (!all_exited() && SupervisorClock::now() < deadline && !hurry()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  std::vector<std::string> killed;
  for (ChildProcess* child : group) {
    if (!child->running()) continue;
    killed.push_back(child->name());
    child->Signal(SIGKILL);
  }
  // SIGKILL is prompt unless the child is stuck in the kernel: bounded wait.
  auto reap_deadline = SupervisorClock::now() + std::chrono::milliseconds(500);
  while (!all_exited() && SupervisorClock::now() < reap_deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  for (ChildProcess* child : group) {
    if (child->running()) child->Abandon();
  }
  return killed;
}

std::string TailOf(const std::string& path, size_t lines) {
  std::ifstream in(path);
  std::vector<std::string> all;
  for (std::string line; std::getline(in, line);) all.push_back(line);
  std::string out;
  for (size_t idx = all.size() > lines ? all.size() - lines : 0; idx < all.size(); ++idx) {
    out += "    " + all[idx] + "\n";
  }
  return out;
}

}  // namespace t0fs::cli
