#include "cli/mount_daemon.h"

#include <dirent.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/mountinfo.h"

namespace t0fs::cli {
namespace {

std::string Absolute(const std::string& path, const std::string& cwd) {
  std::filesystem::path p(path);
  if (p.is_relative()) p = std::filesystem::path(cwd) / p;
  std::string out = p.lexically_normal().string();
  while (out.size() > 1 && out.back() == '/') out.pop_back();
  return out;
}

std::vector<std::string> ReadCmdline(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/cmdline", std::ios::binary);
  std::vector<std::string> argv;
  for (std::string arg; std::getline(in, arg, '\0');) argv.push_back(arg);
  return argv;
}

std::string ReadCwd(pid_t pid) {
  std::error_code ec;
  auto cwd = std::filesystem::read_symlink("/proc/" + std::to_string(pid) + "/cwd", ec);
  return ec ? std::string() : cwd.string();
}

}  // namespace

std::optional<MountDaemon> ParseMountCommand(const std::vector<std::string>& argv,
                                             const std::string& cwd, const std::string& point) {
  if (argv.size() < 4 || argv[1] != "mount") return std::nullopt;
  if (std::filesystem::path(argv[0]).filename().string().rfind("t0fs", 0) != 0) return std::nullopt;
  // Every option of `t0fs mount` takes a value (--opt VALUE or --opt=VALUE),
  // so the other words are META_ADDR and MOUNTPOINT, in that order.
  std::vector<std::string> positional;
  MountDaemon d;
  std::string secret = "secret";
  for (size_t idx = 2; idx < argv.size(); ++idx) {
    const std::string& arg = argv[idx];
    if (arg.rfind("--", 0) != 0) {
      positional.push_back(arg);
      continue;
    }
    std::string name = arg, value;
    size_t eq = arg.find('=');
    if (eq != std::string::npos) {
      name = arg.substr(0, eq);
      value = arg.substr(eq + 1);
    } else if (idx + 1 < argv.size()) {
      value = argv[++idx];
    }
    if (name == "--secret-file") secret = value;
    if (name == "--config") d.config = Absolute(value, cwd);
  }
  if (positional.size() != 2 || Absolute(positional[1], cwd) != point) return std::nullopt;
  d.meta = positional[0];
  d.secret_file = Absolute(secret, cwd);
  return d;
}

std::optional<MountDaemon> FindMountDaemon(const std::string& point) {
  DIR* proc = ::opendir("/proc");
  if (proc == nullptr) return std::nullopt;
  std::optional<MountDaemon> found;
  while (dirent* entry = ::readdir(proc)) {
    char* end = nullptr;
    long pid = std::strtol(entry->d_name, &end, 10);
    if (pid <= 0 || *end != '\0' || pid == ::getpid()) continue;
    auto argv = ReadCmdline(static_cast<pid_t>(pid));
    if (argv.size() < 4 || argv[1] != "mount") continue;
    auto daemon = ParseMountCommand(argv, ReadCwd(static_cast<pid_t>(pid)), point);
    if (daemon) {
      daemon->pid = static_cast<pid_t>(pid);
      found = daemon;
      break;
    }
  }
  ::closedir(proc);
  return found;
}

}  // namespace t0fs::cli
