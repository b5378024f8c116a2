#include "cli/local_mounts.h"

#include <fmt/format.h>

#include <cstring>
#include <nlohmann/json.hpp>
#include <sstream>

#include "common/mount_probe.h"
#include "common/mountinfo.h"

namespace t0fs::cli {
namespace {

std::map<std::string, std::string> ParseState(const std::string& value) {
  std::map<std::string, std::string> fields;
  std::istringstream words(value);
  for (std::string word; words >> word;) {
    auto eq = word.find('=');
    if (eq != std::string::npos) fields[word.substr(0, eq)] = word.substr(eq + 1);
  }
  return fields;
}

}  // namespace

std::vector<LocalMount> QueryLocalMounts(const std::string& cluster_id) {
  std::vector<LocalMount> out;
  std::vector<std::string> ours;
  std::vector<size_t> ours_idx;
  for (const MountEntry& m : ReadMounts()) {
    if (!m.is_t0fs()) continue;
    LocalMount lm;
    lm.path = m.point;
    lm.source = m.source;
    lm.cluster_id = m.cluster_id();
    if (lm.cluster_id.empty()) {
      lm.answer = "not queried";
      lm.detail = fmt::format("its source '{}' names no cluster", m.source);
    } else if (lm.cluster_id != cluster_id) {
      lm.answer = "not queried";
      lm.detail = fmt::format("a mount of cluster {}", lm.cluster_id);
    } else {
      ours.push_back(m.point);
      ours_idx.push_back(out.size());
    }
    out.push_back(std::move(lm));
  }
  std::vector<MountProbe> probes = ProbeMounts(ours, true);
  for (size_t idx = 0; idx < probes.size(); ++idx) {
    LocalMount& lm = out[ours_idx[idx]];
    const MountProbe& p = probes[idx];
    switch (p.health) {
      case MountHealth::kAnswers:
        lm.answer = "answers";
        lm.state = ParseState(p.state);
        break;
      case MountHealth::kNotAnswering:
        lm.answer = "not answering";
        lm.detail = fmt::format("no answer within {} ms: its daemon is stopped or hung",
                                kProbeTimeout.count());
        break;
      case MountHealth::kDead:
        lm.answer = "dead";
        lm.detail = fmt::format("its daemon is gone: {}", std::strerror(p.error));
        break;
      case MountHealth::kError:
        lm.answer = "error";
        lm.detail = p.Describe();
        break;
    }
  }
  return out;
}

nlohmann::json LocalMountsJson(const std::vector<LocalMount>& mounts) {
  nlohmann::json list = nlohmann::json::array();
  for (const LocalMount& m : mounts) {
    list.push_back({{"path", m.path},
                    {"source", m.source},
                    {"cluster_id", m.cluster_id},
                    {"answer", m.answer},
                    {"detail", m.detail},
                    {"state", m.state}});
  }
  return list;
}

std::vector<std::string> LocalMountLines(const std::vector<LocalMount>& mounts) {
  std::vector<std::string> lines;
  for (const LocalMount& m : mounts) {
    if (m.answer != "answers") {
      lines.push_back(fmt::format("mount {}: {} ({})", m.path, m.answer, m.detail));
      continue;
    }
    auto f = m.state;
    if (f.empty()) {
      lines.push_back(fmt::format(
          "mount {}: answers, state unknown (a t0fs mount of another version?)", m.path));
      continue;
    }
    lines.push_back(
        fmt::format("mount {}: node {}, passthrough {}; opens: {} by the kernel (passthrough), {} "
                    "through the mount, "
                    "{} refused busy; {} backing file(s) now",
                    m.path, f["local_node"], f["passthrough"], f["opens_passthrough"],
                    f["opens_cached"], f["opens_refused"], f["backing_files"]));
    if (!f["io_uring"].empty()) {
      lines.back() += fmt::format("; requests through {}",
                                  f["io_uring"] == "on" ? "FUSE over io_uring" : "/dev/fuse reads");
    }
    if (!f["metrics"].empty())
      lines.push_back(fmt::format("metrics: mount {} http://{}/metrics", m.path, f["metrics"]));
  }
  return lines;
}

}  // namespace t0fs::cli
