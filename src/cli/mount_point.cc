#include "cli/mount_point.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "cli/mount_daemon.h"
#include "common/mount_probe.h"
#include "common/mountinfo.h"
#include "fuse/protocol/mount.h"

namespace t0fs::cli {
namespace {

namespace fs = std::filesystem;

// Stacked dead mounts are detached one by one; more than this is a loop.
constexpr int kMaxDetach = 8;

std::string WhatIsMounted(const MountEntry& mount) {
  std::string what = mount.Describe();
  if (mount.is_t0fs()) {
    std::string id = mount.cluster_id();
    what += id.empty() ? " (a t0fs cluster)" : fmt::format(" (t0fs cluster {})", id);
    if (auto daemon = FindMountDaemon(mount.point)) {
      what += fmt::format(", served by `t0fs mount` pid {} of meta {}", daemon->pid, daemon->meta);
    }
  }
  return what;
}

}  // namespace

Result<std::string> ResolveMountPoint(const std::string& path) {
  std::string abs = LexicalAbsolute(path);
  if (abs == "/") return Status(StatusCode::kInvalidArgument, "cannot mount on /");
  fs::path p(abs);
  std::error_code ec;
  fs::create_directories(p.parent_path(), ec);
  if (ec) {
    return Status(StatusCode::kIoError,
                  fmt::format("create {}: {}", p.parent_path().string(), ec.message()));
  }
  ASSIGN_OR_RETURN(std::string parent, RealpathWithTimeout(p.parent_path().string()));
  return (parent == "/" ? "" : parent) + "/" + p.filename().string();
}

Status ClaimMountPoint(const std::string& point, std::vector<std::string>* notes) {
  for (int attempt = 0; attempt < kMaxDetach; ++attempt) {
    auto mount = MountAt(ReadMounts(), point);
    if (!mount) break;
    if (!mount->is_fuse()) {
      return Status(StatusCode::kBusy,
                    fmt::format("{} is already a mount point ({}); choose another --mount", point,
                                mount->Describe()));
    }
    MountProbe probe = ProbeMount(point);
    switch (probe.health) {
      case MountHealth::kAnswers:
        return Status(StatusCode::kBusy,
                      fmt::format("{} is already mounted and answering: {}. Stop what serves it "
                                  "first (Ctrl-C in the terminal of its `t0fs up`), or choose "
                                  "another --mount",
                                  point, WhatIsMounted(*mount)));
      case MountHealth::kNotAnswering:
        return Status(StatusCode::kBusy,
                      fmt::format("{} is mounted and does not answer: {}. Its daemon is stopped "
                                  "or hung; resume or stop that daemon, or choose another --mount",
                                  point, WhatIsMounted(*mount)));
      case MountHealth::kError:
        return Status::FromErrno(probe.error,
                                 fmt::format("mount point {} ({})", point, mount->Describe()));
      case MountHealth::kDead:
        break;
    }
    RETURN_IF_ERROR(fuse::DetachMount(point).WithContext("detach the dead mount at " + point));
    notes->push_back(
        fmt::format("{} was a dead mount ({}; its daemon is gone: every access "
                    "failed with \"{}\"); detached it",
                    point, mount->Describe(), std::strerror(probe.error)));
  }
  if (auto still = MountAt(ReadMounts(), point); still && still->is_fuse()) {
    return Status(StatusCode::kBusy,
                  fmt::format("{}: more than {} dead mounts stacked", point, kMaxDetach));
  }
  // Not a mount (any more): an ordinary directory, created if missing.
  auto st = StatWithTimeout(point);
  if (!st.ok() && st.status().code() == StatusCode::kNotFound) {
    if (::mkdir(point.c_str(), 0755) != 0 && errno != EEXIST) {
      return Status::FromErrno(errno, "create " + point);
    }
    st = StatWithTimeout(point);
  }
  if (!st.ok()) return st.status();
  if (!S_ISDIR(st->st_mode)) {
    return Status(StatusCode::kNotDirectory, fmt::format("{} is not a directory", point));
  }
  return Status::Ok();
}

int T0fsMountId(const std::string& point) {
  auto mount = MountAt(ReadMounts(), point);
  return mount && mount->is_t0fs() ? mount->id : 0;
}

bool DetachIfStillMounted(const std::string& point, int mount_id) {
  auto mount = MountAt(ReadMounts(), point);
  if (!mount || mount_id == 0 || mount->id != mount_id) return false;
  return fuse::DetachMount(point).ok();
}

}  // namespace t0fs::cli
