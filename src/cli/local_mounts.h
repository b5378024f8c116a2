// The t0fs mounts of this host as `t0fs status` reports them.
//
// Only mounts of the cluster being shown are asked anything: a mount's
// source (mountinfo field 10) names its cluster, "t0fs:<cluster_id>"; a mount
// of another cluster, or one whose source is a bare "t0fs" (an unknown
// cluster), is listed as "not queried" without being touched. A mount of
// this cluster is asked for its user.t0fs.mount attribute in a child process
// with a timeout (mount_probe.h), all at once: a hung mount is reported as
// "not answering", a dead one as "dead", and never delays status by more
// than the timeout.
#pragma once

#include <map>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

namespace t0fs::cli {

struct LocalMount {
  std::string path;
  std::string source;      // "t0fs:<cluster_id>" or "t0fs"
  std::string cluster_id;  // empty: unknown
  // "answers", "not queried", "not answering", "dead", "error"
  std::string answer;
  std::string detail;                        // why not queried, or the error
  std::map<std::string, std::string> state;  // the fields of user.t0fs.mount
};

std::vector<LocalMount> QueryLocalMounts(const std::string& cluster_id);

nlohmann::json LocalMountsJson(const std::vector<LocalMount>& mounts);
// One line per mount, as the status table prints them.
std::vector<std::string> LocalMountLines(const std::vector<LocalMount>& mounts);

}  // namespace t0fs::cli
