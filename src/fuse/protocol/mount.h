// FuseMount: one FUSE mount and its /dev/fuse connection fd.
//
// Mounting: as root, mount(2) directly ("fuse.t0fs", source "t0fs", options
// fd=N,rootmode=40000,user_id=U,group_id=G,default_permissions
// [,allow_other],max_read=N; MS_NOSUID|MS_NODEV); when mount(2) says EPERM,
// through fusermount3 (fusermount.h). Before mounting, PrepareMountpoint()
// detaches a dead FUSE mount left at the path (its server died) and refuses
// a live one. Unmounting is lazy (MNT_DETACH / fusermount3 -u -z): the path
// is free at once, open files keep the file system until closed.
//
// Thread safety: requires external synchronization.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <string>

#include "common/fd.h"
#include "common/status.h"

namespace t0fs::fuse {

struct MountOptions {
  std::string fsname = "t0fs";   // the "source" column of /proc/mounts
  std::string subtype = "t0fs";  // fstype becomes fuse.<subtype>
  bool allow_other = false;
  uint32_t max_read = 1u << 20;  // largest READ the kernel sends
  bool read_only = false;        // MS_RDONLY ("ro")
  bool no_exec = false;          // MS_NOEXEC ("noexec")
  // Mount through fusermount3 even when mount(2) would work (tests of the
  // unprivileged path run as root).
  bool force_fusermount = false;
};

class FuseMount {
 public:
  // Mounts at `mountpoint` (absolute, canonical; see CanonicalMountpoint).
  static Result<FuseMount> Mount(const std::string& mountpoint, const MountOptions& options);

  FuseMount() = default;
  FuseMount(FuseMount&& other) noexcept;
  FuseMount& operator=(FuseMount&& other) noexcept;
  FuseMount(const FuseMount&) = delete;
  FuseMount& operator=(const FuseMount&) = delete;
  // Unmounts if still mounted (errors are logged).
  ~FuseMount();

  // Lazy unmount; no-op when not mounted (or Forget() was called).
  Status Unmount();
  // The connection ended (someone else unmounted): do not unmount the path,
  // which may hold a different mount by now.
  void Forget() { mounted_ = false; }

  int device_fd() const { return device_.get(); }
  // Hands the device fd to the session (the mount keeps the path).
  UniqueFd TakeDevice() { return std::move(device_); }
  const std::string& path() const { return path_; }
  bool via_fusermount() const { return via_fusermount_; }

 private:
  std::string path_;
  UniqueFd device_;
  bool mounted_ = false;
  bool via_fusermount_ = false;
};

// Absolute path with symlinks in the parent resolved (the last component is
// not stat'ed, since it may be a dead mount).
Result<std::string> CanonicalMountpoint(const std::string& path);

// Makes `path` ready for a mount: it must exist and be a directory; a dead
// FUSE mount on it is detached (repeatedly, if stacked); a live FUSE mount on
// it is an error (kBusy). A hung server makes this block (statfs waits).
Status PrepareMountpoint(const std::string& path);

// Lazily detaches whatever is mounted at `path` (umount2 MNT_DETACH, or
// fusermount3 -u -z without privileges). Not mounted is not an error.
Status DetachMount(const std::string& path);

// True if /proc/self/mountinfo lists a fuse/fuse.* mount at `path`.
bool IsFuseMountpoint(const std::string& path);

// The device number of the FUSE mount at `path` (the newest one there), read
// from /proc/self/mountinfo: no request reaches the mount, so a server may
// ask this about its own mount. 0 if there is none.
dev_t FuseMountDevice(const std::string& path);

}  // namespace t0fs::fuse
