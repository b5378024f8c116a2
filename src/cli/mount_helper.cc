#include "cli/mount_helper.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include <fmt/format.h>

#include "common/mountinfo.h"

namespace t0fs::cli {
namespace {

constexpr std::string_view kHelperSecret = "/etc/t0fs/secret";
constexpr std::string_view kHelperConfig = "/etc/t0fs/t0fs.toml";
constexpr auto kMountWait = std::chrono::seconds(60);

// fstab/mount(8)/systemd options that mean nothing to the mount itself.
bool Ignored(const std::string& opt) {
  static const std::set<std::string> kIgnored = {
      "defaults", "rw",     "auto",       "noauto",    "nofail",   "_netdev",  "user",
      "users",    "nouser", "owner",      "group",     "nosuid",   "nodev",    "exec",
      "async",    "atime",  "noatime",    "relatime",  "strictatime", "nodiratime", "diratime",
      "lazytime", "nolazytime", "loud", "silent"};
  return kIgnored.contains(opt) || opt.starts_with("x-") || opt.starts_with("comment=");
}

std::string Absolute(const std::string& path) {
  return path.empty() || path[0] == '/' ? path : LexicalAbsolute(path);
}

// "/mnt/t0fs" -> "mnt-t0fs" (a log file name per mount point).
std::string EscapePath(const std::string& path) {
  std::string out;
  for (char c : path) {
    if (c != '/') {
      out += c;
    } else if (!out.empty() && out.back() != '-') {
      out += '-';
    }
  }
  while (!out.empty() && out.back() == '-') out.pop_back();
  return out.empty() ? "root" : out;
}

Result<std::string> MetaFromSpec(std::string spec) {
  if (spec.starts_with("t0fs://")) spec = spec.substr(7);
  if (auto root = spec.find(":/"); root != std::string::npos) {
    std::string path = spec.substr(root + 1);
    spec = spec.substr(0, root);
    if (path.find_first_not_of('/') != std::string::npos) {
      return Status(StatusCode::kInvalidArgument,
                    fmt::format("mounting a subdirectory ({}) is not supported; mount {}:/", path, spec));
    }
  }
  if (spec.empty() || spec.find(':') == std::string::npos) {
    return Status(StatusCode::kInvalidArgument,
                  fmt::format("'{}' is not a meta address (host:port, e.g. 10.0.0.1:7700:/)", spec));
  }
  return spec;
}

std::string LogTail(const std::string& file, size_t lines) {
  std::ifstream in(file);
  std::vector<std::string> all;
  for (std::string line; std::getline(in, line);) all.push_back(line);
  std::string out;
  for (size_t i = all.size() > lines ? all.size() - lines : 0; i < all.size(); ++i) out += "  " + all[i] + "\n";
  return out;
}

bool Mounted(const std::string& point) {
  auto m = MountAt(ReadMounts(), point);
  return m && m->is_t0fs();
}

}  // namespace

bool IsMountHelper(const char* argv0) {
  std::string_view name(argv0);
  if (auto slash = name.rfind('/'); slash != std::string_view::npos) name = name.substr(slash + 1);
  return name == "mount.fuse.t0fs" || name == "mount.t0fs";
}

Result<MountHelperPlan> PlanMountHelper(const std::vector<std::string>& argv) {
  std::vector<std::string> positional;
  std::vector<std::string> options;
  MountHelperPlan plan;
  for (size_t i = 1; i < argv.size(); ++i) {
    const std::string& a = argv[i];
    if (a.starts_with("-o")) {  // "-o LIST" or "-oLIST"
      if (a == "-o" && i + 1 == argv.size()) return Status(StatusCode::kInvalidArgument, "-o needs a value");
      std::stringstream ss(a == "-o" ? argv[++i] : a.substr(2));
      for (std::string opt; std::getline(ss, opt, ',');) {
        if (!opt.empty()) options.push_back(opt);
      }
    } else if (a == "-f") {
      plan.fake = true;
    } else if (a == "-s" || a == "-n" || a == "-v") {
      // sloppy, no mtab, verbose: nothing to do
    } else if (a == "-t" || a == "-N") {
      ++i;  // a type or namespace given by some callers
    } else if (a.starts_with("-")) {
      return Status(StatusCode::kInvalidArgument, fmt::format("unknown flag {}", a));
    } else {
      positional.push_back(a);
    }
  }
  if (positional.size() != 2) {
    return Status(StatusCode::kInvalidArgument,
                  "usage: mount.fuse.t0fs META_ADDR[:/] MOUNTPOINT [-o OPTIONS]");
  }
  ASSIGN_OR_RETURN(std::string meta, MetaFromSpec(positional[0]));
  plan.mountpoint = Absolute(positional[1]);
  plan.args = {"t0fs", "mount", meta, plan.mountpoint};
  std::string secret(kHelperSecret);
  std::string config;
  if (::access(std::string(kHelperConfig).c_str(), R_OK) == 0) config = kHelperConfig;
  plan.log_file = "/var/log/t0fs/mount-" + EscapePath(plan.mountpoint) + ".log";
  for (const std::string& opt : options) {
    if (Ignored(opt)) continue;
    auto eq = opt.find('=');
    std::string key = opt.substr(0, eq);
    std::string value = eq == std::string::npos ? "" : opt.substr(eq + 1);
    for (char& c : key) c = c == '_' ? '-' : c;
    if (key == "suid" || key == "dev") {
      return Status(StatusCode::kInvalidArgument,
                    fmt::format("option {}: t0fs mounts are always nosuid,nodev", key));
    }
    if (key == "ro") {
      plan.args.insert(plan.args.end(), {"--read-only", "true"});
    } else if (key == "noexec") {
      plan.args.insert(plan.args.end(), {"--no-exec", "true"});
    } else if (key == "secret-file") {
      secret = Absolute(value);
    } else if (key == "config") {
      config = Absolute(value);
    } else if (key == "log") {
      plan.log_file = Absolute(value);
    } else {
      plan.args.push_back("--" + key);
      plan.args.push_back(eq == std::string::npos ? "true" : value);
    }
  }
  plan.args.insert(plan.args.end(), {"--secret-file", secret});
  if (!config.empty()) plan.args.insert(plan.args.end(), {"--config", config});
  return plan;
}

int MountHelperMain(int argc, char** argv) {
  std::vector<std::string> args(argv, argv + argc);
  auto plan = PlanMountHelper(args);
  if (!plan.ok()) {
    fmt::print(stderr, "mount.fuse.t0fs: {}\n", plan.status().message());
    return 1;
  }
  if (plan->fake) return 0;
  if (Mounted(plan->mountpoint)) {
    fmt::print(stderr, "mount.fuse.t0fs: {} is already a t0fs mount\n", plan->mountpoint);
    return 1;
  }
  std::string log_dir = plan->log_file.substr(0, plan->log_file.rfind('/'));
  if (!log_dir.empty()) ::mkdir(log_dir.c_str(), 0750);
  int log_fd = ::open(plan->log_file.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0640);
  if (log_fd < 0) {
    fmt::print(stderr, "mount.fuse.t0fs: cannot open log {}: {}; logging to /dev/null\n", plan->log_file,
               std::strerror(errno));
    plan->log_file = "/dev/null";
    log_fd = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
  }
  pid_t pid = ::fork();
  if (pid < 0) {
    fmt::print(stderr, "mount.fuse.t0fs: fork: {}\n", std::strerror(errno));
    return 1;
  }
  if (pid == 0) {
    // The mount outlives mount(8): its own session, no terminal.
    ::setsid();
    int null_fd = ::open("/dev/null", O_RDONLY);
    ::dup2(null_fd, 0);
    ::dup2(log_fd, 1);
    ::dup2(log_fd, 2);
    std::vector<char*> cargs;
    for (auto& a : plan->args) cargs.push_back(a.data());
    cargs.push_back(nullptr);
    ::execv("/proc/self/exe", cargs.data());
    fmt::print(stderr, "mount.fuse.t0fs: exec t0fs: {}\n", std::strerror(errno));
    ::_exit(127);
  }
  ::close(log_fd);
  const auto deadline = std::chrono::steady_clock::now() + kMountWait;
  while (std::chrono::steady_clock::now() < deadline) {
    if (Mounted(plan->mountpoint)) return 0;
    int status = 0;
    if (::waitpid(pid, &status, WNOHANG) == pid) {
      fmt::print(stderr, "mount.fuse.t0fs: t0fs mount of {} failed; the end of {}:\n{}", plan->mountpoint,
                 plan->log_file, LogTail(plan->log_file, 10));
      return 1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ::kill(pid, SIGTERM);
  fmt::print(stderr, "mount.fuse.t0fs: {} not mounted after {} s (meta unreachable?); stopped. See {}\n",
             plan->mountpoint, kMountWait.count(), plan->log_file);
  return 1;
}

}  // namespace t0fs::cli
