#include "common/mountinfo.h"

#include <fmt/format.h>
#include <sys/sysmacros.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace t0fs {
namespace {

// Decodes the octal escapes (\040 for a space, ...) of a mountinfo field.
std::string Unescape(std::string_view field) {
  auto octal = [](char c) { return c >= '0' && c <= '7'; };
  std::string out;
  for (size_t idx = 0; idx < field.size(); ++idx) {
    if (field[idx] == '\\' && idx + 3 < field.size() && octal(field[idx + 1]) &&
        octal(field[idx + 2]) && octal(field[idx + 3])) {
      out += static_cast<char>((field[idx + 1] - '0') * 64 + (field[idx + 2] - '0') * 8 +
                               (field[idx + 3] - '0'));
      idx += 3;
      continue;
    }
    out += field[idx];
  }
  return out;
}

}  // namespace

std::string MountEntry::cluster_id() const {
  if (!is_t0fs() || source.rfind("t0fs:", 0) != 0) return "";
  return source.substr(5);
}

std::string MountEntry::Describe() const {
  return fmt::format("{} from {}", fstype, source);
}

std::vector<MountEntry> ReadMounts() {
  std::vector<MountEntry> out;
  std::ifstream in("/proc/self/mountinfo");
  for (std::string line; std::getline(in, line);) {
    // id parent major:minor root mountpoint options [optional...] - fstype source super
    std::istringstream fields(line);
    MountEntry e;
    std::string parent, dev, root, point, options;
    if (!(fields >> e.id >> parent >> dev >> root >> point >> options)) continue;
    std::string token;
    while (fields >> token && token != "-") {
    }
    if (!(fields >> e.fstype >> e.source)) continue;
    unsigned major = 0, minor = 0;
    if (std::sscanf(dev.c_str(), "%u:%u", &major, &minor) == 2) e.dev = makedev(major, minor);
    e.point = Unescape(point);
    e.source = Unescape(e.source);
    out.push_back(std::move(e));
  }
  return out;
}

std::optional<MountEntry> MountAt(const std::vector<MountEntry>& mounts, const std::string& path) {
  std::optional<MountEntry> top;
  for (const MountEntry& e : mounts) {
    if (e.point == path) top = e;
  }
  return top;
}

std::optional<MountEntry> MountHolding(const std::vector<MountEntry>& mounts,
                                       const std::string& path) {
  std::optional<MountEntry> best;
  for (const MountEntry& e : mounts) {
    bool holds = e.point == "/" || path == e.point ||
                 (path.size() > e.point.size() && path.compare(0, e.point.size(), e.point) == 0 &&
                  path[e.point.size()] == '/');
    // Equal lengths: the later entry is mounted on top of the earlier one.
    if (holds && (!best || e.point.size() >= best->point.size())) best = e;
  }
  return best;
}

std::string LexicalAbsolute(const std::string& path) {
  std::error_code ec;
  std::filesystem::path abs = std::filesystem::absolute(path, ec);
  if (ec) abs = path;
  std::string out = abs.lexically_normal().string();
  while (out.size() > 1 && out.back() == '/') out.pop_back();
  return out;
}

}  // namespace t0fs
