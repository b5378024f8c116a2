#include "fuse/protocol/mount.h"

#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>

#include <fmt/format.h>

#include "common/logging.h"
#include "common/mount_probe.h"
#include "common/mountinfo.h"
#include "fuse/protocol/fusermount.h"

namespace t0fs::fuse {
namespace {

bool IsDeadConnection(int err) { return err == ENOTCONN || err == ECONNABORTED; }

std::string KernelOptions(int fd, mode_t root_mode, const MountOptions& o) {
  return fmt::format("fd={},rootmode={:o},user_id={},group_id={},default_permissions{},max_read={}",
                     fd, root_mode & S_IFMT, ::getuid(), ::getgid(),
                     o.allow_other ? ",allow_other" : "", o.max_read);
}

std::string FusermountOptions(const MountOptions& o) {
  return fmt::format("default_permissions{},max_read={},fsname={},subtype={},nosuid,nodev{}{}",
                     o.allow_other ? ",allow_other" : "", o.max_read, o.fsname, o.subtype,
                     o.read_only ? ",ro" : "", o.no_exec ? ",noexec" : "");
}

// Always nosuid and nodev: a network file system's setuid bits and device
// nodes are not trusted on this host.
unsigned long MountFlags(const MountOptions& o) {
  return MS_NOSUID | MS_NODEV | (o.read_only ? MS_RDONLY : 0) | (o.no_exec ? MS_NOEXEC : 0);
}

}  // namespace

Result<FuseMount> FuseMount::Mount(const std::string& mountpoint, const MountOptions& options) {
  struct stat st;
  if (::stat(mountpoint.c_str(), &st) != 0) {
    return Status::FromErrno(errno, fmt::format("mountpoint {}", mountpoint));
  }
  FuseMount m;
  m.path_ = mountpoint;
  UniqueFd device(::open("/dev/fuse", O_RDWR | O_CLOEXEC));
  int err = device.valid() ? 0 : errno;
  if (options.force_fusermount) {
    (void)device.Close();
    err = EPERM;
  }
  if (err == ENOENT || err == ENODEV || err == ENXIO) {
    return Status(StatusCode::kNotFound,
                  "/dev/fuse is missing: load the fuse module (modprobe fuse) or give the "
                  "container the device");
  }
  if (device.valid()) {
    const std::string fstype = "fuse." + options.subtype;
    const std::string data = KernelOptions(device.get(), st.st_mode, options);
    int rc = ::mount(options.fsname.c_str(), mountpoint.c_str(), fstype.c_str(), MountFlags(options),
                     data.c_str());
    if (rc != 0 && errno == ENODEV) {
      // A kernel without "fuse.<subtype>" types: plain "fuse" + subtype option.
      std::string with_subtype = data + ",subtype=" + options.subtype;
      rc = ::mount(options.fsname.c_str(), mountpoint.c_str(), "fuse", MountFlags(options),
                   with_subtype.c_str());
    }
    if (rc == 0) {
      m.device_ = std::move(device);
      m.mounted_ = true;
      return m;
    }
    err = errno;
    (void)device.Close();
  }
  // Without privileges mount(2) says EPERM (and /dev/fuse may not even open):
  // the setuid helper mounts for us.
  if (err != EPERM && err != EACCES) {
    return Status::FromErrno(err, fmt::format("mount fuse at {}", mountpoint));
  }
  LOG_DEBUG("fuse: mount(2) not permitted; using fusermount3");
  ASSIGN_OR_RETURN(m.device_, FusermountMount(mountpoint, FusermountOptions(options)));
  m.mounted_ = true;
  m.via_fusermount_ = true;
  return m;
}

FuseMount::FuseMount(FuseMount&& other) noexcept
    : path_(std::move(other.path_)),
      device_(std::move(other.device_)),
      mounted_(std::exchange(other.mounted_, false)),
      via_fusermount_(other.via_fusermount_) {}

FuseMount& FuseMount::operator=(FuseMount&& other) noexcept {
  if (this != &other) {
    if (mounted_) (void)Unmount();
    path_ = std::move(other.path_);
    device_ = std::move(other.device_);
    mounted_ = std::exchange(other.mounted_, false);
    via_fusermount_ = other.via_fusermount_;
  }
  return *this;
}

FuseMount::~FuseMount() {
  if (!mounted_) return;
  Status st = Unmount();
  if (!st.ok()) LOG_WARN("fuse: unmount {}: {}", path_, st.ToString());
}

Status FuseMount::Unmount() {
  if (!mounted_) return Status::Ok();
  mounted_ = false;
  if (via_fusermount_) return FusermountUnmount(path_);
  return DetachMount(path_);
}

Result<std::string> CanonicalMountpoint(const std::string& path) {
  if (path.empty()) return Status(StatusCode::kInvalidArgument, "empty mountpoint");
  std::string abs = path;
  if (abs[0] != '/') {
    char cwd[PATH_MAX];
    if (::getcwd(cwd, sizeof(cwd)) == nullptr) return Status::FromErrno(errno, "getcwd");
    abs = std::string(cwd) + "/" + abs;
  }
  while (abs.size() > 1 && abs.back() == '/') abs.pop_back();
  if (abs == "/") return abs;
  size_t slash = abs.rfind('/');
  std::string parent = slash == 0 ? "/" : abs.substr(0, slash);
  std::string name = abs.substr(slash + 1);
  if (name == "." || name == "..") {
    char resolved[PATH_MAX];
    if (::realpath(abs.c_str(), resolved) == nullptr) {
      return Status::FromErrno(errno, fmt::format("mountpoint {}", path));
    }
    return std::string(resolved);
  }
  char resolved[PATH_MAX];
  if (::realpath(parent.c_str(), resolved) == nullptr) {
    return Status::FromErrno(errno, fmt::format("parent of mountpoint {}", path));
  }
  std::string out = resolved;
  if (out != "/") out += "/";
  return out + name;
}

Status PrepareMountpoint(const std::string& path) {
  for (int attempt = 0; attempt < 8; ++attempt) {
    if (IsFuseMountpoint(path)) {
      // A FUSE mount is there (mountinfo says so without touching it). stat
      // may be answered from the attribute cache of a dead mount; statfs
      // always asks the server, so it tells dead from alive. In a child,
      // with a timeout: a hung server must not hang us.
      MountProbe probe = ProbeMount(path, /*read_state=*/false, std::chrono::seconds(2));
      if (probe.health == MountHealth::kAnswers) {
        return Status(StatusCode::kBusy,
                      fmt::format("{} is already a live FUSE mount; stop the t0fs mount serving it, or "
                                  "choose another directory",
                                  path));
      }
      if (probe.health == MountHealth::kNotAnswering) {
        return Status(StatusCode::kBusy,
                      fmt::format("{} is a FUSE mount whose server does not answer (stopped or hung?); "
                                  "it was left alone",
                                  path));
      }
      if (probe.health == MountHealth::kError || !IsDeadConnection(probe.error)) {
        return Status::FromErrno(probe.error, fmt::format("mountpoint {}", path));
      }
      LOG_WARN("fuse: {} is a dead FUSE mount (its server is gone); detaching it", path);
      RETURN_IF_ERROR(DetachMount(path).WithContext("detach stale mount"));
      continue;
    }
    struct stat st;
    if (::stat(path.c_str(), &st) != 0) {
      if (errno == ENOENT) {
        return Status(StatusCode::kNotFound, fmt::format("mountpoint {} does not exist", path));
      }
      return Status::FromErrno(errno, fmt::format("mountpoint {}", path));
    }
    if (!S_ISDIR(st.st_mode)) {
      return Status(StatusCode::kNotDirectory, fmt::format("mountpoint {} is not a directory", path));
    }
    return Status::Ok();
  }
  return Status(StatusCode::kBusy, fmt::format("{}: too many stale mounts stacked", path));
}

Status DetachMount(const std::string& path) {
  if (::umount2(path.c_str(), MNT_DETACH | UMOUNT_NOFOLLOW) == 0) return Status::Ok();
  int err = errno;
  if (err == EINVAL) return Status::Ok();  // not a mount point (any more)
  if (err == EPERM) return FusermountUnmount(path);
  return Status::FromErrno(err, fmt::format("umount {}", path));
}

bool IsFuseMountpoint(const std::string& path) {
  std::optional<MountEntry> top = MountAt(ReadMounts(), path);
  return top && top->is_fuse();
}

dev_t FuseMountDevice(const std::string& path) {
  std::optional<MountEntry> top = MountAt(ReadMounts(), path);
  return top && top->is_fuse() ? top->dev : 0;
}

}  // namespace t0fs::fuse
