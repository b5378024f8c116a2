#include "bench/engine.h"

#include <fmt/format.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <vector>

namespace t0fs::bench {

Result<EngineKind> ParseEngineKind(std::string_view text) {
  if (text == "psync" || text == "sync") return EngineKind::kPsync;
  if (text == "io_uring" || text == "uring") return EngineKind::kUring;
  if (text == "native" || text == "libt0fs") return EngineKind::kNative;
  return Status(StatusCode::kInvalidArgument,
                fmt::format("unknown engine '{}' (psync, io_uring, native)", text));
}

std::string_view EngineName(EngineKind kind) {
  switch (kind) {
    case EngineKind::kPsync: return "psync";
    case EngineKind::kUring: return "io_uring";
    case EngineKind::kNative: return "native";
  }
  return "?";
}

bool EngineAvailable(EngineKind kind) {
#ifdef T0FS_BENCH_HAVE_NATIVE
  (void)kind;
  return true;
#else
  return kind != EngineKind::kNative;
#endif
}

Result<std::unique_ptr<Engine>> MakeEngine(const EngineOptions& options) {
  if (options.depth == 0) return Status(StatusCode::kInvalidArgument, "iodepth must be >= 1");
  switch (options.kind) {
    case EngineKind::kPsync: return MakePsyncEngine(options);
    case EngineKind::kUring: return MakeUringEngine(options);
    case EngineKind::kNative: return MakeNativeEngine(options);
  }
  return Status(StatusCode::kInvalidArgument, "unknown engine");
}

// /proc/self/mountinfo fields: id parent major:minor root mount-point options
// [optional...] - fstype source super-options. Octal escapes (\040) in paths.
static std::string Unescape(const std::string& s) {
  std::string out;
  for (size_t idx = 0; idx < s.size(); ++idx) {
    if (s[idx] == '\\' && idx + 3 < s.size()) {
      int v = (s[idx + 1] - '0') * 64 + (s[idx + 2] - '0') * 8 + (s[idx + 3] - '0');
      out.push_back(static_cast<char>(v));
      idx += 3;
    } else {
      out.push_back(s[idx]);
    }
  }
  return out;
}

Result<T0fsLocation> FindT0fsMount(const std::string& path) {
  char* real = realpath(path.c_str(), nullptr);
  std::string abs;
  if (real != nullptr) {
    abs = real;
    free(real);
  } else {
    // A file that does not exist yet: resolve its directory.
    auto slash = path.find_last_of('/');
    std::string dir = slash == std::string::npos ? "." : path.substr(0, slash == 0 ? 1 : slash);
    real = realpath(dir.c_str(), nullptr);
    if (real == nullptr) return Status::FromErrno(errno, path);
    abs = std::string(real) + "/" + path.substr(slash == std::string::npos ? 0 : slash + 1);
    free(real);
  }
  std::ifstream in("/proc/self/mountinfo");
  std::string line, best_mount, best_type, best_source;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::vector<std::string> parts;
    std::string part;
    while (fields >> part) parts.push_back(part);
    if (parts.size() < 7) continue;
    std::string mount = Unescape(parts[4]);
    size_t dash = 6;
    while (dash < parts.size() && parts[dash] != "-") ++dash;
    if (dash + 2 >= parts.size()) continue;
    bool inside = abs == mount || mount == "/" ||
                  (abs.size() > mount.size() && abs.compare(0, mount.size(), mount) == 0 &&
                   abs[mount.size()] == '/');
    if (inside && mount.size() >= best_mount.size()) {
      best_mount = mount;
      best_type = parts[dash + 1];
      best_source = parts[dash + 2];
    }
  }
  bool is_t0fs = best_type == "fuse.t0fs" ||
                 (best_type.rfind("fuse", 0) == 0 && best_source.rfind("t0fs", 0) == 0);
  if (!is_t0fs) {
    return Status(StatusCode::kInvalidArgument,
                  fmt::format("--engine native needs a path on a t0fs mount; {} is on {} ({}, "
                              "mounted at {})",
                              path, best_type.empty() ? "an unknown file system" : best_type,
                              best_source, best_mount));
  }
  std::string rel = abs.substr(best_mount == "/" ? 0 : best_mount.size());
  if (rel.empty()) rel = "/";
  return T0fsLocation{best_mount, rel};
}

}  // namespace t0fs::bench
