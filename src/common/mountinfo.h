// The mount table of this host, as /proc/self/mountinfo lists it, and what
// the admin commands and `t0fs up` need from it: which mount holds a path,
// which mounts are t0fs mounts and of which cluster.
//
// Reading the table never touches a mounted file system, so it is safe with
// dead and hung mounts; anything that must ask a mount goes through
// common/mount_probe.h (a forked child with a timeout).
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

namespace t0fs {

// The source (field 10 of mountinfo) of a t0fs mount names its cluster:
// "t0fs:<cluster_id>". A bare "t0fs" is a mount of an unknown cluster.
inline constexpr std::string_view kT0fsFsType = "fuse.t0fs";

struct MountEntry {
  int id = 0;          // mount id (field 1): tells a remount at the same path apart
  dev_t dev = 0;       // st_dev of the files on it (field 3, major:minor)
  std::string point;   // mount point, unescaped
  std::string fstype;  // "ext4", "fuse.t0fs", ...
  std::string source;  // "/dev/nvme0n1p1", "t0fs:<cluster_id>", ...

  bool is_fuse() const { return fstype == "fuse" || fstype.rfind("fuse.", 0) == 0; }
  bool is_t0fs() const { return fstype == kT0fsFsType; }
  // The cluster id of a t0fs mount; empty when its source does not name one.
  std::string cluster_id() const;
  // "fuse.t0fs from t0fs:abcd" — what a message says is mounted there.
  std::string Describe() const;
};

// Every mount of this process's namespace, in mount order (a later entry at
// the same point is on top).
std::vector<MountEntry> ReadMounts();

// The top mount whose mount point is exactly `path` (absolute, normalized).
std::optional<MountEntry> MountAt(const std::vector<MountEntry>& mounts, const std::string& path);
// The mount that holds `path` (absolute, normalized): the top mount with the
// longest mount point that is `path` or one of its parents.
std::optional<MountEntry> MountHolding(const std::vector<MountEntry>& mounts,
                                       const std::string& path);

// `path` made absolute (against the working directory) and normalized
// lexically: nothing is stat'ed, so a dead or hung mount on the way is not
// touched. Symlinks are not resolved.
std::string LexicalAbsolute(const std::string& path);

}  // namespace t0fs
