// `t0fs umount MOUNTPOINT`: stop the mount there in order — the `t0fs mount`
// process is asked to stop (it commits open files' writes and unmounts),
// and this waits until the mount is gone. A mount whose process is gone is
// unmounted directly. Never blocks on the mount itself: the mount table is
// read, the mount point is never stat'ed.
#include <fmt/format.h>
#include <signal.h>
#include <sys/mount.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstring>
#include <thread>

#include "cli/command_util.h"
#include "cli/commands.h"
#include "cli/mount_daemon.h"
#include "cli/mount_point.h"
#include "cli/signals.h"
#include "common/mountinfo.h"

namespace t0fs::cli {
namespace {

int RunUmount(const std::string& path, int timeout_s) {
  const std::string point = LexicalAbsolute(path);
  auto mount = MountAt(ReadMounts(), point);
  if (!mount) return Fail("umount", Status(StatusCode::kNotFound, point + " is not a mount point"));
  if (mount->fstype != kT0fsFsType) {
    return Fail("umount", Status(StatusCode::kInvalidArgument,
                                 fmt::format("{} is a {} mount, not t0fs", point, mount->fstype)));
  }
  auto daemon = FindMountDaemon(point);
  if (daemon) {
    fmt::print("stopping the mount at {} (t0fs mount, pid {})\n", point, daemon->pid);
    ::kill(daemon->pid, SIGTERM);
  } else if (::umount2(point.c_str(), 0) != 0) {
    // No process serves it on this host (it died, or runs in another
    // namespace): the kernel's unmount ends the connection.
    int err = errno;
    if (err == EBUSY) {
      return Fail("umount", Status(StatusCode::kBusy,
                                   fmt::format("{} is busy (open files or working directories: "
                                               "fuser -vm {})",
                                               point, point)));
    }
    return Fail("umount", Status::FromErrno(err, "umount " + point));
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
  while (T0fsMountId(point) != 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      return Fail("umount", Status(StatusCode::kRpcTimeout,
                                   fmt::format("{} still mounted after {} s{}", point, timeout_s,
                                               daemon ? fmt::format(" (pid {} is still stopping)", daemon->pid)
                                                      : "")));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  if (daemon) {
    // The process exits right after its unmount; wait for it briefly.
    while (::kill(daemon->pid, 0) == 0 && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
  fmt::print("unmounted {}\n", point);
  return 0;
}

}  // namespace

void RegisterUmount(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand("umount", "Unmount a t0fs mount (its writes committed first)");
  struct Args {
    std::string path;
    int timeout = 30;
  };
  auto args = std::make_shared<Args>();
  cmd->add_option("MOUNTPOINT", args->path, "the mount point")->required();
  cmd->add_option("--timeout", args->timeout, "seconds to wait for the mount to go")->capture_default_str();
  cmd->callback([args, exit_code] {
    ExitOnStopSignal();
    *exit_code = RunUmount(args->path, args->timeout);
  });
}

}  // namespace t0fs::cli
