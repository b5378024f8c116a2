// fusermount3: the setuid helper that mounts and unmounts FUSE file systems
// for users without CAP_SYS_ADMIN.
//
// Mount protocol (_FUSE_COMMFD): we create a Unix socketpair, run
// `fusermount3 -o OPTS -- MOUNTPOINT` with the environment variable
// _FUSE_COMMFD naming its end; fusermount3 opens /dev/fuse, mounts, sends the
// fd back over the socket (SCM_RIGHTS, one data byte) and exits.
#pragma once

#include <string>

#include "common/fd.h"
#include "common/status.h"

namespace t0fs::fuse {

// Mounts `mountpoint` through fusermount3 with `options` (the user-settable
// subset: default_permissions, allow_other, max_read=, fsname=, subtype=,
// nosuid, nodev). Returns the /dev/fuse fd of the new connection.
Result<UniqueFd> FusermountMount(const std::string& mountpoint, const std::string& options);

// `fusermount3 -u -z -q MOUNTPOINT` (lazy unmount).
Status FusermountUnmount(const std::string& mountpoint);

}  // namespace t0fs::fuse
