// The mount point of `t0fs up`: made ready before anything starts, and
// cleaned after its mount daemon died.
//
// A live mount already there (of this cluster, another one, or any file
// system) is refused, naming what is mounted. A dead FUSE mount (its daemon
// was killed: every access fails with ENOTCONN) is detached (umount2
// MNT_DETACH), with a note. Dead and live are told apart by the mount table
// and a statfs in a child process with a timeout (mount_probe.h), so a hung
// mount never blocks `up` and a live one is never touched beyond that.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"

namespace t0fs::cli {

// The absolute mount point for `path`, its parent resolved (which is created
// if missing); the last component is not touched (it may be a dead mount).
Result<std::string> ResolveMountPoint(const std::string& path);

// Makes `point` usable for a new mount: refuses a live or hung mount there,
// detaches dead FUSE mounts (each one a line in `notes`), creates the
// directory if missing.
Status ClaimMountPoint(const std::string& point, std::vector<std::string>* notes);

// The id (mountinfo field 1) of the t0fs mount at `point`, 0 if there is none.
int T0fsMountId(const std::string& point);

// Detaches the mount with id `mount_id` at `point` if it is still the top
// mount there (its daemon is gone); true if it was detached.
bool DetachIfStillMounted(const std::string& point, int mount_id);

}  // namespace t0fs::cli
