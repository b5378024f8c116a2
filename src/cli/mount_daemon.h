// Which `t0fs mount` process serves a mount point, and what it was started
// with (meta address, secret file, config): how an admin command given a
// path on a t0fs mount finds that mount's cluster without asking the mount.
//
// Read from /proc/<pid>/cmdline and /proc/<pid>/cwd of this host's processes
// (root, or the same user, can read them); nothing is asked of the mount.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

namespace t0fs::cli {

struct MountDaemon {
  pid_t pid = 0;
  std::string meta;         // the META_ADDR argument
  std::string secret_file;  // absolute; the mount's default "secret" when not given
  std::string config;       // absolute; empty when not given
};

// The `t0fs mount` process whose MOUNTPOINT argument is `point` (absolute,
// normalized), if one runs on this host.
std::optional<MountDaemon> FindMountDaemon(const std::string& point);

// Parses the argv of a `t0fs mount` (argv[1] == "mount") relative to its
// working directory `cwd`; nullopt when its mount point is not `point`.
std::optional<MountDaemon> ParseMountCommand(const std::vector<std::string>& argv,
                                             const std::string& cwd, const std::string& point);

}  // namespace t0fs::cli
