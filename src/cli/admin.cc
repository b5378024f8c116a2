#include "cli/admin.h"

#include <fmt/format.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <filesystem>
#include <optional>

#include "cli/cluster_dir.h"
#include "cli/mount_daemon.h"
#include "common/config.h"
#include "common/mount_probe.h"
#include "common/mountinfo.h"
#include "common/secret.h"

namespace t0fs::cli {
namespace {

namespace fs = std::filesystem;

constexpr const char* kDefaultDir = "t0fs-data";
constexpr const char* kDefaultMeta = "127.0.0.1:7700";
constexpr const char* kDefaultSecret = "secret";

// The t0fs mount holding `path`: by the mount table first (no access at
// all), then with symlinks resolved (in a child: the path may cross a hung
// mount).
std::optional<MountEntry> T0fsMountHolding(const std::string& path) {
  std::vector<MountEntry> mounts = ReadMounts();
  std::string abs = LexicalAbsolute(path);
  auto mount = MountHolding(mounts, abs);
  if (mount && mount->is_t0fs()) return mount;
  auto real = RealpathWithTimeout(abs);
  if (real.ok() && *real != abs) {
    mount = MountHolding(mounts, *real);
    if (mount && mount->is_t0fs()) return mount;
  }
  return std::nullopt;
}

std::string Cwd() {
  std::error_code ec;
  auto cwd = fs::current_path(ec);
  return ec ? std::string("?") : cwd.string();
}

std::string JoinTried(const std::vector<std::string>& tried) {
  std::string out;
  for (const std::string& t : tried) out += "\n  - " + t;
  return out;
}

}  // namespace

Result<ClusterLocation> LocateCluster(const ClusterQuery& q) {
  ClusterLocation loc;
  std::vector<std::string> tried;
  std::string daemon_secret;

  if (!q.dir.empty()) {
    ASSIGN_OR_RETURN(ClusterDir dir, ClusterDir::Open(q.dir));
    loc.dir = dir.root();
    loc.meta = dir.meta_address();
    loc.found_by = "--dir " + dir.root();
  } else {
    tried.push_back("--dir (not given)");
  }
  if (!q.meta.empty()) {
    loc.meta = q.meta;
    loc.found_by = "--meta " + q.meta;
  } else if (loc.meta.empty()) {
    tried.push_back("--meta (not given)");
  }

  // The t0fs mount holding PATH (or the working directory): its daemon's
  // meta when none was given, its secret when no other was.
  if (loc.meta.empty() || (q.secret_file.empty() && loc.dir.empty())) {
    const std::string where = q.path.empty() ? "the working directory " + Cwd() : q.path;
    auto mount = T0fsMountHolding(q.path.empty() ? Cwd() : q.path);
    if (!mount) {
      if (!q.path.empty() && loc.meta.empty()) {
        return Status(StatusCode::kInvalidArgument,
                      fmt::format("{} is not on a t0fs mount", q.path));
      }
      if (loc.meta.empty()) tried.push_back(fmt::format("{} (not on a t0fs mount)", where));
    } else if (auto daemon = FindMountDaemon(mount->point)) {
      daemon_secret = daemon->secret_file;
      if (loc.meta.empty()) {
        loc.mount = mount->point;
        loc.cluster_id = mount->cluster_id();
        loc.meta = daemon->meta;
        loc.found_by =
            fmt::format("the t0fs mount {} (the meta its `t0fs mount` process, pid {}, uses)",
                        mount->point, daemon->pid);
        // A mount of `t0fs up` names the cluster directory by its config.
        fs::path config(daemon->config);
        if (!daemon->config.empty() && config.filename() == "t0fs.toml" &&
            fs::exists(config.parent_path() / "secret")) {
          loc.dir = config.parent_path().string();
        }
      }
    } else if (loc.meta.empty()) {
      loc.mount = mount->point;
      loc.cluster_id = mount->cluster_id();
      tried.push_back(
          fmt::format("{} (on the t0fs mount {}, but no `t0fs mount` process of this "
                      "host serves it: a dead mount?)",
                      where, mount->point));
    }
  }

  if (loc.meta.empty()) {
    if (fs::exists(fs::path(kDefaultDir) / "t0fs.toml")) {
      ASSIGN_OR_RETURN(ClusterDir dir, ClusterDir::Open(kDefaultDir));
      loc.dir = dir.root();
      loc.meta = dir.meta_address();
      loc.found_by = "the cluster directory " + dir.root();
    } else {
      tried.push_back(fmt::format("./{} (no cluster directory in {})", kDefaultDir, Cwd()));
    }
  }

  // The secret.
  if (!q.secret_file.empty()) {
    loc.secret_file = q.secret_file;
  } else if (!loc.dir.empty()) {
    loc.secret_file = loc.dir + "/secret";
  } else if (!daemon_secret.empty()) {
    loc.secret_file = daemon_secret;
  } else if (fs::exists(kDefaultSecret)) {
    loc.secret_file = fs::absolute(kDefaultSecret).string();
  }
  std::vector<std::string> secret_tried;
  if (loc.secret_file.empty()) {
    secret_tried = {"--secret-file (not given)",
                    "the cluster directory's secret (no cluster directory)",
                    "the secret of the mount's `t0fs mount` process (no such mount or process)",
                    fmt::format("./{} (none in {})", kDefaultSecret, Cwd())};
  }

  if (loc.meta.empty() && !loc.secret_file.empty()) {
    loc.meta = kDefaultMeta;
    loc.found_by = fmt::format("the default meta address {} (with the secret {})", kDefaultMeta,
                               loc.secret_file);
  }
  if (loc.meta.empty()) {
    for (const std::string& t : secret_tried) tried.push_back(t);
    return Status(
        StatusCode::kNotFound,
        fmt::format("no t0fs cluster found; tried:{}\ngive --dir DIR (a `t0fs up` cluster "
                    "directory), --meta HOST:PORT with --secret-file FILE, or a path on a "
                    "t0fs mount",
                    JoinTried(tried)));
  }
  if (loc.secret_file.empty()) {
    return Status(
        StatusCode::kNotFound,
        fmt::format("no cluster secret for meta {} (found by {}); tried:{}\ngive --secret-file "
                    "FILE or --dir DIR",
                    loc.meta, loc.found_by, JoinTried(secret_tried)));
  }
  return loc;
}

void AdminOptions::Register(CLI::App* cmd, bool with_mount, std::string default_timeout) {
  timeout = std::move(default_timeout);
  cmd->add_option("--timeout", timeout,
                  "give up when meta does not answer a call within this long (e.g. 30s, 2m)")
      ->capture_default_str();
  cmd->add_option("--dir", dir, "cluster directory of `t0fs up` (default ./t0fs-data if present)");
  cmd->add_option("--meta", meta, "meta service address (host:port), or several meta servers of one store (host:port,host:port)");
  cmd->add_option("--secret-file", secret_file,
                  "cluster secret file (default: the cluster directory's, or the mount's)");
  if (with_mount) {
    cmd->add_option("--mount", mount,
                    "a path on a t0fs mount of the cluster (default: the working directory)");
  }
  cmd->add_flag("--json", json, "print JSON instead of a table");
}

Result<AdminTarget> ConnectAdmin(const AdminOptions& options, const std::string& path) {
  ClusterQuery query{options.dir, options.meta, options.secret_file,
                     path.empty() ? options.mount : path};
  AdminTarget target;
  ASSIGN_OR_RETURN(target.location, LocateCluster(query));
  target.meta = target.location.meta;
  auto secret = LoadSecret(target.location.secret_file);
  if (!secret.ok())
    return secret.status().WithContext("cluster secret (" + target.location.found_by + ")");
  client::AdminClient::Options admin_options;
  admin_options.meta = target.meta;
  admin_options.secret = *secret;
  if (!options.timeout.empty()) {
    auto timeout = ParseDuration(options.timeout);
    if (!timeout.ok() || timeout->value.count() <= 0) {
      return Status(
          StatusCode::kInvalidArgument,
          fmt::format("--timeout '{}' is not a positive duration (e.g. 30s, 2m)", options.timeout));
    }
    admin_options.timeout = *timeout;
  }
  ASSIGN_OR_RETURN(target.admin, client::AdminClient::Open(admin_options));
  if (!target.location.cluster_id.empty()) {
    auto status = target.admin->GetStatus();
    RETURN_IF_ERROR(
        status.status().WithContext("meta " + target.meta + " (" + target.location.found_by + ")"));
    if (status->cluster_id != target.location.cluster_id) {
      return Status(
          StatusCode::kInvalidArgument,
          fmt::format("meta {} serves cluster {}, but the mount {} is of cluster {}", target.meta,
                      status->cluster_id, target.location.mount, target.location.cluster_id));
    }
  }
  return target;
}

}  // namespace t0fs::cli
