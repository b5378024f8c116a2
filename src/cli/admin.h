// How admin commands (status, fsck, layout, objective, node) and the native
// bench engine find a cluster, from any working directory:
//
//   meta address   --meta; else the cluster directory's; else that of the
//                  t0fs mount holding PATH (the path argument, --mount, or
//                  the working directory): the meta its `t0fs mount` process
//                  was started with; else ./t0fs-data; else 127.0.0.1:7700
//                  when a secret was found
//   cluster dir    --dir; else ./t0fs-data when meta came from nowhere else
//   secret         --secret-file; else the cluster directory's; else the
//                  mount daemon's --secret-file; else ./secret
//
// When nothing is found, the error lists every place that was tried.
// Nothing here asks a mount anything: a mount is found in the mount table
// and its daemon by its command line (mounts.h, mount_daemon.h).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "common/status.h"
#include "t0fs/admin.h"

namespace CLI {
class App;
}

namespace t0fs::cli {

// What the user said about where the cluster is; every field may be empty.
struct ClusterQuery {
  std::string dir;          // --dir: a `t0fs up` cluster directory
  std::string meta;         // --meta host:port
  std::string secret_file;  // --secret-file
  std::string path;         // a path on a t0fs mount of the cluster
};

// Where a cluster is and how that was found.
struct ClusterLocation {
  std::string meta;         // host:port of meta
  std::string secret_file;  // the cluster secret file
  std::string dir;          // the cluster directory, when one was used
  std::string mount;        // the t0fs mount point PATH is on, when one was used
  std::string cluster_id;   // what the mount's source names (t0fs:<id>); empty if unknown
  std::string found_by;     // "--dir /x", "the mount /mnt (its daemon, pid 12)", ...
};

// The one function admin commands and `t0fs bench --engine native` call to
// find a cluster (see the top of this file). No network access.
Result<ClusterLocation> LocateCluster(const ClusterQuery& query);

struct AdminOptions {
  std::string dir;
  std::string meta;
  std::string secret_file;
  std::string mount;  // --mount: a path on a t0fs mount (status, fsck, node)
  bool json = false;
  std::string timeout;  // --timeout: how long one call to meta may take
  // Adds --dir, --meta, --secret-file, --json, --timeout (default
  // `timeout`) and, with `with_mount`, --mount.
  void Register(CLI::App* cmd, bool with_mount = true, std::string default_timeout = "30s");
};

struct AdminTarget {
  std::string meta;
  ClusterLocation location;
  std::unique_ptr<client::AdminClient> admin;  // of meta, authenticated as "admin"
};

// Locates the cluster (`path`, when the command has a path argument, goes
// first) and opens an AdminClient of its meta. When the mount names its
// cluster, a meta of another cluster is refused.
Result<AdminTarget> ConnectAdmin(const AdminOptions& options, const std::string& path = "");

}  // namespace t0fs::cli
