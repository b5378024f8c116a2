#include "cli/cluster_dir.h"

#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <toml++/toml.h>

#include "common/config.h"
#include "common/secret.h"

namespace t0fs::cli {
namespace fs = std::filesystem;

namespace {

Status WriteConfig(const std::string& path, const std::string& root, const ClusterDirOptions& o) {
  std::string text = fmt::format(
      "# A single-node t0fs cluster created by `t0fs up`. Edit, then restart `t0fs up`.\n"
      "# Every key is documented by `t0fs meta --help`, `t0fs data --help`, `t0fs mount --help`.\n\n"
      "[meta]\n"
      "listen = \"{0}\"\n"
      "db = \"{2}/meta.db\"\n"
      "secret-file = \"{2}/secret\"\n"
      "chunk-size = \"{3}\"\n\n"
      "[data]\n"
      "meta = \"{0}\"\n"
      "listen = \"{1}\"\n"
      "secret-file = \"{2}/secret\"\n"
      "volumes = [\"{2}/volume0\"]\n\n"
      "[client]\n"
      "local-bypass = true\n\n"
      "[mount]\n"
      "threads = 4\n",
      o.meta_listen, o.data_listen, root, o.chunk_size);
  std::ofstream out(path);
  out << text;
  out.close();
  if (!out) return Status(StatusCode::kIoError, "cannot write " + path);
  return Status::Ok();
}

}  // namespace

Result<ClusterDir> ClusterDir::Open(const std::string& path) {
  std::error_code ec;
  fs::path abs = fs::absolute(path, ec);
  if (ec) return Status(StatusCode::kInvalidArgument, fmt::format("{}: {}", path, ec.message()));
  ClusterDir dir;
  dir.root_ = abs.lexically_normal().string();
  while (dir.root_.size() > 1 && dir.root_.back() == '/') dir.root_.pop_back();
  if (!fs::exists(dir.config())) {
    return Status(StatusCode::kNotFound,
                  fmt::format("{} is not a t0fs cluster directory (no t0fs.toml); run `t0fs up --dir {}`", path, path));
  }
  try {
    toml::table t = toml::parse_file(dir.config());
    dir.meta_ = t["meta"]["listen"].value_or(std::string("127.0.0.1:7700"));
    dir.data_ = t["data"]["listen"].value_or(std::string("127.0.0.1:7701"));
  } catch (const std::exception& e) {
    return Status(StatusCode::kInvalidArgument, fmt::format("{}: {}", dir.config(), e.what()));
  }
  return dir;
}

Result<ClusterDir> ClusterDir::OpenOrCreate(const std::string& path, const ClusterDirOptions& options,
                                            bool* created) {
  *created = false;
  std::error_code ec;
  if (fs::exists(fs::path(path) / "t0fs.toml")) return Open(path);
  if (fs::exists(path) && !fs::is_empty(path, ec)) {
    return Status(StatusCode::kExists,
                  fmt::format("{} exists and is not a t0fs cluster directory; choose another --dir", path));
  }
  fs::create_directories(path, ec);
  if (ec) return Status(StatusCode::kIoError, fmt::format("create {}: {}", path, ec.message()));
  fs::path abs = fs::absolute(path).lexically_normal();
  std::string root = abs.string();
  while (root.size() > 1 && root.back() == '/') root.pop_back();
  ::chmod(root.c_str(), 0700);  // the secret and the chunks are for root only
  RETURN_IF_ERROR(CreateSecret(root + "/secret"));
  fs::create_directories(root + "/volume0", ec);
  fs::create_directories(root + "/logs", ec);
  RETURN_IF_ERROR(WriteConfig(root + "/t0fs.toml", root, options));
  *created = true;
  return Open(root);
}

}  // namespace t0fs::cli
