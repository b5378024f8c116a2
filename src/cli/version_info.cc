#include "cli/version_info.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>

#include <fmt/format.h>

#include "cli/git_commit.h"  // generated: T0FS_GIT_COMMIT

namespace t0fs::cli {
namespace {

std::string ReadFirstLine(const char* path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

// Major and minor of a release string such as "6.12.48+deb13-amd64".
bool AtLeast(const std::string& release, int major, int minor) {
  int ma = 0, mi = 0;
  if (std::sscanf(release.c_str(), "%d.%d", &ma, &mi) != 2) return false;
  return ma > major || (ma == major && mi >= minor);
}

// The kernel's build configuration: /boot/config-RELEASE, else
// /proc/config.gz (through gzip, which every Debian system has).
std::string KernelConfig(const std::string& release) {
  std::ifstream boot("/boot/config-" + release);
  if (boot) return std::string(std::istreambuf_iterator<char>(boot), {});
  if (::access("/proc/config.gz", R_OK) != 0) return {};
  std::string text;
  if (FILE* pipe = ::popen("gzip -dc /proc/config.gz 2>/dev/null", "r")) {
    char buf[65536];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, pipe)) > 0) text.append(buf, n);
    ::pclose(pipe);
  }
  return text;
}

std::string PassthroughSupport(const std::string& release) {
  std::string config = KernelConfig(release);
  if (config.empty()) return AtLeast(release, 6, 9) ? "likely" : "no";
  return config.find("\nCONFIG_FUSE_PASSTHROUGH=y\n") != std::string::npos ? "yes" : "no";
}

}  // namespace

KernelFeatures ProbeKernel() {
  KernelFeatures k;
  struct utsname u {};
  if (::uname(&u) == 0) k.release = u.release;
  k.fuse_device = ::access("/dev/fuse", F_OK) == 0;
  k.passthrough = PassthroughSupport(k.release);
  std::string uring = ReadFirstLine("/sys/module/fuse/parameters/enable_uring");
  if (uring.empty()) {
    k.fuse_io_uring = "absent";
  } else {
    k.fuse_io_uring = (uring == "Y" || uring == "1") ? "enabled" : "disabled";
  }
  return k;
}

std::string VersionLine() {
  return fmt::format("t0fs {} (commit {}, {})", T0FS_VERSION, T0FS_GIT_COMMIT, T0FS_BUILD_TYPE);
}

nlohmann::json VersionJson() {
  KernelFeatures k = ProbeKernel();
  return {
      {"version", T0FS_VERSION},
      {"git_commit", T0FS_GIT_COMMIT},
      {"build_type", T0FS_BUILD_TYPE},
      {"compiler", fmt::format("gcc {}.{}.{}", __GNUC__, __GNUC_MINOR__, __GNUC_PATCHLEVEL__)},
      {"kernel",
       {{"release", k.release},
        {"fuse_device", k.fuse_device},
        {"passthrough", k.passthrough},
        {"fuse_io_uring", k.fuse_io_uring}}},
  };
}

}  // namespace t0fs::cli
