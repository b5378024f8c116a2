#include "bench/tier0/child_process.h"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <utility>

#include <fmt/format.h>

#include "bench/stop_signal.h"

namespace t0fs::bench::tier0 {

ChildProcess::ChildProcess(ChildProcess&& other) noexcept
    : pid_(std::exchange(other.pid_, -1)), name_(std::move(other.name_)) {}

ChildProcess& ChildProcess::operator=(ChildProcess&& other) noexcept {
  if (this != &other) {
    Stop();
    pid_ = std::exchange(other.pid_, -1);
    name_ = std::move(other.name_);
  }
  return *this;
}

ChildProcess::~ChildProcess() { Stop(); }

Result<ChildProcess> ChildProcess::Spawn(const SpawnSpec& spec) {
  if (spec.argv.empty()) return Status(StatusCode::kInvalidArgument, "empty command");
  // Everything the child needs is prepared before fork: after it, only
  // async-signal-safe calls.
  int out_fd = ::open(spec.output.empty() ? "/dev/null" : spec.output.c_str(),
                      O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (out_fd < 0) return Status::FromErrno(errno, "open " + spec.output);
  int err_fd = spec.errors.empty()
                   ? -1
                   : ::open(spec.errors.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  int ns_fd = -1;
  if (!spec.netns.empty()) {
    std::string path = "/run/netns/" + spec.netns;
    ns_fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (ns_fd < 0) {
      Status st = Status::FromErrno(errno, "open " + path);
      ::close(out_fd);
      if (err_fd >= 0) ::close(err_fd);
      return st;
    }
  }
  std::vector<std::string> args = spec.argv;
  bool self = args[0] == "t0fs";
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t parent = ::getpid();
  pid_t pid = ::fork();
  if (pid < 0) {
    Status st = Status::FromErrno(errno, "fork");
    ::close(out_fd);
    if (err_fd >= 0) ::close(err_fd);
    if (ns_fd >= 0) ::close(ns_fd);
    return st;
  }
  if (pid == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (::getppid() != parent) ::_exit(1);
    ::setpgid(0, 0);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    if (ns_fd >= 0 && ::setns(ns_fd, CLONE_NEWNET) != 0) ::_exit(126);
    ::dup2(out_fd, STDOUT_FILENO);
    ::dup2(err_fd >= 0 ? err_fd : out_fd, STDERR_FILENO);
    int null_fd = ::open("/dev/null", O_RDONLY);
    if (null_fd >= 0) ::dup2(null_fd, STDIN_FILENO);
    if (self) {
      ::execv("/proc/self/exe", argv.data());
    } else {
      ::execvp(argv[0], argv.data());
    }
    ::_exit(127);
  }
  ::close(out_fd);
  if (err_fd >= 0) ::close(err_fd);
  if (ns_fd >= 0) ::close(ns_fd);
  ChildProcess child;
  child.pid_ = pid;
  child.name_ = spec.argv.size() > 1 && self ? "t0fs " + spec.argv[1] : spec.argv[0];
  return child;
}

int ChildProcess::Poll() {
  if (pid_ <= 0) return -1;
  int status = 0;
  if (::waitpid(pid_, &status, WNOHANG) != pid_) return -1;
  pid_ = -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

Result<int> ChildProcess::Wait(std::chrono::seconds timeout, bool interruptible) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    int rc = Poll();
    if (rc >= 0) return rc;
    if (pid_ <= 0) return Status(StatusCode::kInternal, name_ + " was not started");
    if (!interruptible) {
      ::usleep(20 * 1000);
    } else if (StopRequested(std::chrono::milliseconds(50))) {
      return Status(StatusCode::kInterrupted, "stopped by a signal");
    }
    if (std::chrono::steady_clock::now() > deadline) {
      return Status(StatusCode::kRpcTimeout,
                    fmt::format("{} did not finish within {} s", name_, timeout.count()));
    }
  }
}

void ChildProcess::Stop(std::chrono::seconds grace) {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGTERM);
  auto deadline = std::chrono::steady_clock::now() + grace;
  while (std::chrono::steady_clock::now() < deadline) {
    if (Poll() >= 0) return;
    ::usleep(20 * 1000);
  }
  ::kill(pid_, SIGKILL);
  int status = 0;
  ::waitpid(pid_, &status, 0);
  pid_ = -1;
}

double ChildProcess::CpuSeconds() const { return pid_ > 0 ? ProcessCpuSeconds(pid_) : 0; }

double ProcessCpuSeconds(pid_t pid) {
  std::ifstream in(fmt::format("/proc/{}/stat", pid));
  std::string line;
  if (!std::getline(in, line)) return 0;
  // Fields after the ")" that ends the command name: state is field 3,
  // utime and stime are fields 14 and 15.
  size_t close = line.rfind(')');
  if (close == std::string::npos) return 0;
  std::istringstream fields(line.substr(close + 2));
  std::string field;
  double ticks = 0;
  for (int idx = 3; idx <= 15 && fields >> field; ++idx) {
    if (idx == 14 || idx == 15) ticks += std::stod(field);
  }
  return ticks / static_cast<double>(::sysconf(_SC_CLK_TCK));
}

std::string TailFile(const std::string& path, size_t lines) {
  std::ifstream in(path);
  std::vector<std::string> all;
  for (std::string line; std::getline(in, line);) all.push_back(line);
  std::string out;
  for (size_t idx = all.size() > lines ? all.size() - lines : 0; idx < all.size(); ++idx) {
    out += (out.empty() ? "" : " | ") + all[idx];
  }
  return out;
}

Status RunCommand(const SpawnSpec& spec, std::chrono::seconds timeout, bool interruptible) {
  ASSIGN_OR_RETURN(ChildProcess child, ChildProcess::Spawn(spec));
  ASSIGN_OR_RETURN(int rc, child.Wait(timeout, interruptible));
  if (rc == 0) return Status::Ok();
  std::string cmd;
  for (const auto& a : spec.argv) cmd += (cmd.empty() ? "" : " ") + a;
  std::string why = TailFile(spec.errors.empty() ? spec.output : spec.errors, 3);
  return Status(StatusCode::kInternal,
                fmt::format("`{}`{} failed (exit {}){}{}", cmd,
                            spec.netns.empty() ? "" : " in namespace " + spec.netns, rc,
                            why.empty() ? "" : ": ", why));
}

Result<std::string> CaptureCommand(SpawnSpec spec, const std::string& scratch_file,
                                   std::chrono::seconds timeout) {
  ::unlink(scratch_file.c_str());
  if (spec.errors.empty()) spec.errors = scratch_file + ".err";
  spec.output = scratch_file;
  RETURN_IF_ERROR(RunCommand(spec, timeout));
  std::ifstream in(scratch_file);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace t0fs::bench::tier0
