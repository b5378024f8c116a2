// What this t0fs binary is (version, commit, build type) and what the running
// kernel offers it (FUSE device, passthrough, FUSE over io_uring): for
// `t0fs version`, `t0fs --version` and bug reports.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace t0fs::cli {

struct KernelFeatures {
  std::string release;        // uname -r
  bool fuse_device = false;   // /dev/fuse exists
  // FUSE_PASSTHROUGH: "yes" (kernel config says so), "no", or "likely"
  // (kernel >= 6.9, config not readable); a mount confirms it at INIT.
  std::string passthrough;
  // FUSE over io_uring: "enabled", "disabled" (module parameter off; root
  // can enable it) or "absent" (this kernel has no such parameter).
  std::string fuse_io_uring;
};

KernelFeatures ProbeKernel();

// "t0fs 0.1.0 (commit 1a2b3c4d5e6f, RelWithDebInfo)"
std::string VersionLine();

nlohmann::json VersionJson();

}  // namespace t0fs::cli
