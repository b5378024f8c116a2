#include "cli/cluster_dir.h"

#include <fmt/format.h>
#include <sys/stat.h>
#include <toml++/toml.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "cli/ports.h"
#include "common/config.h"
#include "common/secret.h"
#include "rpc/endpoint.h"

namespace t0fs::cli {
namespace fs = std::filesystem;

namespace {

std::string ConfigText(const std::string& root, const std::string& meta, const std::string& data,
                       uint64_t chunk_size) {
  return fmt::format(
      "# A t0fs cluster of this machine, created by `t0fs up`. Edit, then restart `t0fs up`.\n"
      "# Every key is documented by `t0fs meta --help`, `t0fs data --help`, `t0fs mount --help`.\n"
      "# Data node i (--nodes) listens on the [data] listen port + i - 1.\n\n"
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
      meta, data, root, chunk_size);
}

Status WriteFile(const std::string& path, const std::string& text) {
  // Written whole under another name, then renamed: a crash leaves the old
  // file or the new one, never half of one.
  std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << text;
    out.close();
    if (!out) return Status(StatusCode::kIoError, "cannot write " + tmp);
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) return Status(StatusCode::kIoError, fmt::format("rename {}: {}", tmp, ec.message()));
  return Status::Ok();
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string Normalize(const std::string& path) {
  std::string out = fs::absolute(path).lexically_normal().string();
  while (out.size() > 1 && out.back() == '/') out.pop_back();
  return out;
}

// What `up` itself puts in a cluster directory: a directory holding only
// these (and no t0fs.toml) is an unfinished cluster, not someone's data.
bool IsOurs(const fs::directory_entry& entry) {
  static const std::regex kNames(
      R"(secret|secret\.tmp|t0fs\.toml|t0fs\.toml\.tmp|up\.lock|logs|meta\.db(-wal|-shm|\.lock)?|volume[0-9]+)");
  return std::regex_match(entry.path().filename().string(), kNames);
}

// The address to use for one role: the given one as it is (an error when
// busy); otherwise `current` when free, or the next free ports from it.
Result<std::string> ChooseAddress(const std::string& role, const std::string& current, bool given,
                                  uint32_t count, const std::set<uint16_t>& taken,
                                  std::vector<std::string>* notes) {
  ASSIGN_OR_RETURN(rpc::Endpoint ep, rpc::Endpoint::Parse(current));
  bool free = true;
  for (uint32_t idx = 0; free && idx < count; ++idx) {
    auto port = static_cast<uint16_t>(ep.port + idx);
    free = taken.count(port) == 0 && PortFree(ep.host, port);
  }
  if (free) return current;
  if (given) {
    return Status(
        StatusCode::kBusy,
        fmt::format("{} ({} listen address{}) is in use by another process; choose another",
                    current, role, count > 1 ? fmt::format(", {} ports", count) : ""));
  }
  ASSIGN_OR_RETURN(uint16_t port, FindFreePorts(ep.host, ep.port, count, taken));
  std::string chosen = fmt::format("{}:{}", ep.host, port);
  notes->push_back(fmt::format("port {} is in use: {} listens on {}{} (recorded in t0fs.toml)",
                               ep.port, role, chosen,
                               count > 1 ? fmt::format(" and the next {} ports", count - 1) : ""));
  return chosen;
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
    return Status(
        StatusCode::kNotFound,
        fmt::format("{} is not a t0fs cluster directory (no t0fs.toml); run `t0fs up --dir {}`",
                    path, path));
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

bool ClusterDir::established() const {
  return fs::exists(volume(0) + "/volume.json");
}

Result<std::string> ClusterDir::data_address(uint32_t idx) const {
  ASSIGN_OR_RETURN(rpc::Endpoint ep, rpc::Endpoint::Parse(data_));
  if (ep.port + idx > 65535) {
    return Status(StatusCode::kInvalidArgument,
                  fmt::format("data port {} + {} is past 65535", ep.port, idx));
  }
  return fmt::format("{}:{}", ep.host, ep.port + idx);
}

Status ClusterDir::CheckPortsFree(uint32_t nodes) const {
  std::vector<std::pair<std::string, std::string>> all = {{"meta", meta_}};
  for (uint32_t idx = 0; idx < nodes; ++idx) {
    ASSIGN_OR_RETURN(std::string address, data_address(idx));
    all.emplace_back(fmt::format("data node {}", idx + 1), address);
  }
  for (const auto& [role, address] : all) {
    ASSIGN_OR_RETURN(rpc::Endpoint ep, rpc::Endpoint::Parse(address));
    if (!PortFree(ep.host, ep.port)) {
      return Status(
          StatusCode::kBusy,
          fmt::format("{} ({}'s address, from {}) is in use by another process; stop it or "
                      "change the address in {}",
                      address, role, config(), config()));
    }
  }
  return Status::Ok();
}

Result<ClusterDir> ClusterDir::OpenOrCreate(const std::string& path,
                                            const ClusterDirOptions& options,
                                            ClusterDirOrigin* origin,
                                            std::vector<std::string>* notes) {
  std::error_code ec;
  const std::string root = Normalize(path);
  const std::string config = root + "/t0fs.toml";
  bool fresh = !fs::exists(root) || fs::is_empty(root, ec);
  if (!fresh && fs::exists(root + "/volume0/volume.json") && fs::exists(config)) {
    *origin = ClusterDirOrigin::kReused;
    return Open(root);
  }
  if (!fresh && !fs::exists(config)) {
    if (!fs::is_directory(root)) {
      return Status(StatusCode::kExists,
                    fmt::format("{} exists and is not a directory; choose another --dir", path));
    }
    for (const auto& entry : fs::directory_iterator(root, ec)) {
      if (!IsOurs(entry)) {
        return Status(StatusCode::kExists,
                      fmt::format("{} exists and is not a t0fs cluster directory ({} is not ours); "
                                  "choose another --dir",
                                  path, entry.path().filename().string()));
      }
    }
  }
  *origin = fresh ? ClusterDirOrigin::kCreated : ClusterDirOrigin::kCompleted;
  fs::create_directories(root, ec);
  if (ec) return Status(StatusCode::kIoError, fmt::format("create {}: {}", root, ec.message()));
  ::chmod(root.c_str(), 0700);  // the secret and the chunks are for root only

  // The secret: kept when a previous attempt wrote a valid one.
  const std::string secret = root + "/secret";
  if (fs::exists(secret) && !LoadSecret(secret).ok()) {
    notes->push_back(
        "the secret of the unfinished cluster directory was unreadable; wrote a new one");
    fs::remove(secret, ec);
  }
  if (!fs::exists(secret)) RETURN_IF_ERROR(CreateSecret(secret));

  // Addresses: the recorded ones of an unfinished directory, unless given now.
  std::string meta = options.meta_listen, data = options.data_listen;
  std::string old_text;
  if (fs::exists(config)) {
    ASSIGN_OR_RETURN(ClusterDir previous, Open(root));
    old_text = ReadFile(config);
    if (!options.meta_listen_given) meta = previous.meta_address();
    if (!options.data_listen_given) data = previous.data_address();
  }
  ASSIGN_OR_RETURN(meta, ChooseAddress("meta", meta, options.meta_listen_given, 1, {}, notes));
  ASSIGN_OR_RETURN(rpc::Endpoint meta_ep, rpc::Endpoint::Parse(meta));
  ASSIGN_OR_RETURN(data, ChooseAddress("data", data, options.data_listen_given, options.data_nodes,
                                       {meta_ep.port}, notes));
  if (old_text.empty()) {
    RETURN_IF_ERROR(WriteFile(config, ConfigText(root, meta, data, options.chunk_size)));
  } else {
    // Keep the file (it may have been edited); only its addresses move.
    ASSIGN_OR_RETURN(ClusterDir previous, Open(root));
    std::string text = old_text;
    auto replace = [&text](const std::string& from, const std::string& to) {
      const std::string quoted_from = "\"" + from + "\"", quoted_to = "\"" + to + "\"";
      for (size_t pos = 0; (pos = text.find(quoted_from, pos)) != std::string::npos;
           pos += quoted_to.size()) {
        text.replace(pos, quoted_from.size(), quoted_to);
      }
    };
    // Through placeholders: the new meta address may be the old data one.
    replace(previous.meta_address(), "\001meta");
    replace(previous.data_address(), "\001data");
    replace("\001meta", meta);
    replace("\001data", data);
    if (text != old_text) RETURN_IF_ERROR(WriteFile(config, text));
  }
  fs::create_directories(root + "/volume0", ec);
  fs::create_directories(root + "/logs", ec);
  return Open(root);
}

}  // namespace t0fs::cli
