// The mount(8) helper: `mount -t fuse.t0fs META:/ /mnt/t0fs -o OPTIONS` and
// fstab lines of type fuse.t0fs run `/sbin/mount.fuse.t0fs SPEC DIR
// [-sfnv] [-o OPTIONS]`, a link to the t0fs binary. It starts `t0fs mount`
// in the background (its own session, output to a log file), waits until
// the mount is in the mount table, and exits 0 — or exits 1 with the end of
// the mount's log when it failed.
//
// SPEC is the meta address (`host:port`, optionally `t0fs://host:port` or
// with the root path `host:port:/`; subdirectory mounts are not supported).
// OPTIONS:
//   ro, noexec, allow_other         mount flags (always nosuid,nodev)
//   secret_file=F, config=F          as the flags of `t0fs mount`
//                                     (defaults /etc/t0fs/secret and, when it
//                                     exists, /etc/t0fs/t0fs.toml)
//   log=F                            the mount's log (default
//                                     /var/log/t0fs/mount-<path>.log)
//   KEY=VALUE / KEY                  any other `t0fs mount --KEY` flag
//                                     (underscores read as dashes)
//   rw, defaults, auto, noauto, nofail, _netdev, user(s), nouser, nosuid,
//   nodev, exec, (no|rel|strict)atime, x-*, comment=…  fstab/mount(8)
//                                     options, accepted and ignored
#pragma once

#include <string>
#include <vector>

#include "common/status.h"

namespace t0fs::cli {

struct MountHelperPlan {
  std::vector<std::string> args;  // argv of `t0fs mount …` (args[0] == "t0fs")
  std::string mountpoint;         // absolute
  std::string log_file;
  bool fake = false;              // -f: do everything but mount
};

// Turns the helper's argv (argv[0] is the helper's name) into the mount to
// run; pure but for making relative paths absolute and checking whether the
// default config file exists.
Result<MountHelperPlan> PlanMountHelper(const std::vector<std::string>& argv);

// main() of the helper (chosen by argv[0]: mount.fuse.t0fs, mount.t0fs).
int MountHelperMain(int argc, char** argv);

// True when argv[0] names the helper.
bool IsMountHelper(const char* argv0);

}  // namespace t0fs::cli
