#include "cli/cluster_dir.h"

#include <fmt/format.h>
#include <sys/stat.h>
#include <toml++/toml.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <regex>
#include <sstream>

#include "cli/ports.h"
#include "common/config.h"
#include "common/secret.h"
#include "common/url_redact.h"
#include "rpc/endpoint.h"

namespace t0fs::cli {
namespace fs = std::filesystem;

namespace {

// `metas`: every meta server's address, comma-separated; `store` a URL,
// or empty for SQLite in the directory.
std::string ConfigText(const std::string& root, const std::string& meta, const std::string& metas,
                       const std::string& data, const std::string& store, uint64_t chunk_size) {
  const std::string store_line = store.empty() ? fmt::format("db = \"{}/meta.db\"", root)
                                               : fmt::format("store = \"{}\"", store);
  const std::string servers =
      metas == meta ? ""
                    : "# Meta server i listens on the [meta] listen port + i - 1; clients and data "
                      "nodes know them all ([data] meta).\n";
  return fmt::format(
      "# A t0fs cluster of this machine, created by `t0fs up`. Edit, then restart `t0fs up`.\n"
      "# Every key is documented by `t0fs meta --help`, `t0fs data --help`, `t0fs mount --help`.\n"
      "# Data node i (--nodes) listens on the [data] listen port + i - 1.\n{5}\n"
      "[meta]\n"
      "listen = \"{0}\"\n"
      "{4}\n"
      "secret-file = \"{2}/secret\"\n"
      "chunk-size = \"{3}\"\n\n"
      "[data]\n"
      "meta = \"{6}\"\n"
      "listen = \"{1}\"\n"
      "secret-file = \"{2}/secret\"\n"
      "volumes = [\"{2}/volume0\"]\n\n"
      "[client]\n"
      "local-bypass = true\n\n"
      "[mount]\n"
      "threads = 4\n",
      meta, data, root, chunk_size, store_line, servers, metas);
}

// "h:p,h:p+1,…": `count` addresses from `first`.
Result<std::string> AddressList(const std::string& first, uint32_t count) {
  ASSIGN_OR_RETURN(rpc::Endpoint ep, rpc::Endpoint::Parse(first));
  if (ep.port + count - 1 > 65535) {
    return Status(StatusCode::kInvalidArgument,
                  fmt::format("meta port {} + {} is past 65535", ep.port, count - 1));
  }
  std::string out;
  for (uint32_t idx = 0; idx < count; ++idx) {
    if (idx > 0) out += ',';
    out += fmt::format("{}:{}", ep.host, ep.port + idx);
  }
  return out;
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
    // `t0fs up` run in PATH keeps its cluster in PATH/t0fs-data: name it.
    const fs::path inner = fs::path(dir.root_) / "t0fs-data";
    if (fs::exists(inner / "t0fs.toml", ec)) {
      return Status(
          StatusCode::kNotFound,
          fmt::format("{} is not a t0fs cluster directory (no t0fs.toml); the cluster of `t0fs up` "
                      "run there is in {}: --dir {}",
                      path, inner.string(), inner.string()));
    }
    return Status(
        StatusCode::kNotFound,
        fmt::format("{} is not a t0fs cluster directory (no t0fs.toml); run `t0fs up --dir {}`",
                    path, path));
  }
  try {
    toml::table t = toml::parse_file(dir.config());
    dir.meta_ = t["meta"]["listen"].value_or(std::string("127.0.0.1:7700"));
    dir.metas_ = t["data"]["meta"].value_or(dir.meta_);
    dir.data_ = t["data"]["listen"].value_or(std::string("127.0.0.1:7701"));
    if (auto store = t["meta"]["store"].value<std::string>()) {
      dir.store_ = *store;
    } else {
      dir.store_ = "sqlite://" + t["meta"]["db"].value_or(dir.root_ + "/meta.db");
    }
  } catch (const std::exception& e) {
    return Status(StatusCode::kInvalidArgument, fmt::format("{}: {}", dir.config(), e.what()));
  }
  auto list = rpc::Endpoint::ParseList(dir.metas_);
  if (!list.ok()) return list.status().WithContext(dir.config() + ": [data] meta");
  for (const rpc::Endpoint& ep : *list) dir.meta_list_.push_back(ep.ToString());
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
  std::vector<std::pair<std::string, std::string>> all;
  for (uint32_t idx = 0; idx < meta_servers(); ++idx) {
    all.emplace_back(meta_servers() == 1 ? "meta" : fmt::format("meta server {}", idx + 1),
                     meta_list_[idx]);
  }
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

// An established (or unfinished) cluster keeps its store and its number of
// meta servers: asked for others, `up` says so instead of changing them.
Status CheckKept(const ClusterDir& dir, const ClusterDirOptions& options) {
  if (!options.store.empty() && options.store != dir.store()) {
    return Status(StatusCode::kInvalidArgument,
                  fmt::format("{} keeps its metadata in {} (t0fs.toml), not in --store {}; to move "
                              "it, stop the cluster and run `t0fs meta migrate`",
                              dir.root(), RedactUrlPassword(dir.store()),
                              RedactUrlPassword(options.store)));
  }
  if (options.meta_servers != 0 && options.meta_servers != dir.meta_servers()) {
    return Status(StatusCode::kInvalidArgument,
                  fmt::format("{} runs {} meta server{} ([data] meta in {}), not --meta-servers {}; "
                              "edit t0fs.toml to change it",
                              dir.root(), dir.meta_servers(), dir.meta_servers() == 1 ? "" : "s",
                              dir.config(), options.meta_servers));
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
    ASSIGN_OR_RETURN(ClusterDir dir, Open(root));
    RETURN_IF_ERROR(CheckKept(dir, options));
    return dir;
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
  // An unfinished directory: its config is kept (it may have been edited)
  // unless it is for another store or number of meta servers than asked for
  // now (a first start that failed on a wrong --store, say): then written anew.
  std::optional<ClusterDir> previous;
  bool rewrite = false;
  std::string store = options.store;
  uint32_t meta_servers = std::max<uint32_t>(options.meta_servers, 1);
  if (fs::exists(config)) {
    ASSIGN_OR_RETURN(previous, Open(root));
    const std::string default_store = "sqlite://" + root + "/meta.db";
    if (CheckKept(*previous, options).ok()) {
      store = previous->store() == default_store ? "" : previous->store();
      meta_servers = previous->meta_servers();
    } else {
      rewrite = true;
      notes->push_back(fmt::format("t0fs.toml of the unfinished cluster was for {} on {}; "
                                   "written anew for the store and meta servers asked for now",
                                   previous->meta_servers() == 1 ? "a meta server" : "meta servers",
                                   RedactUrlPassword(previous->store())));
    }
  }
  if (meta_servers > 1 && (store.empty() || store.starts_with("sqlite:"))) {
    return Status(StatusCode::kInvalidArgument,
                  fmt::format("{} meta servers need a store they can share: give --store "
                              "postgresql://USER@HOST:PORT/DB (SQLite is one server's)",
                              meta_servers));
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
  if (previous) {
    if (!options.meta_listen_given) meta = previous->meta_listen(0);
    if (!options.data_listen_given) data = previous->data_address();
  }
  ASSIGN_OR_RETURN(meta, ChooseAddress("meta", meta, options.meta_listen_given, meta_servers, {},
                                       notes));
  ASSIGN_OR_RETURN(rpc::Endpoint meta_ep, rpc::Endpoint::Parse(meta));
  std::set<uint16_t> meta_ports;
  for (uint32_t idx = 0; idx < meta_servers; ++idx) {
    meta_ports.insert(static_cast<uint16_t>(meta_ep.port + idx));
  }
  if (!options.data_listen_given) {
    // The default data port follows the meta servers' ports.
    ASSIGN_OR_RETURN(rpc::Endpoint data_ep, rpc::Endpoint::Parse(data));
    if (meta_ports.count(data_ep.port) != 0) {
      data = fmt::format("{}:{}", data_ep.host, meta_ep.port + meta_servers);
    }
  }
  ASSIGN_OR_RETURN(data, ChooseAddress("data", data, options.data_listen_given, options.data_nodes,
                                       meta_ports, notes));
  ASSIGN_OR_RETURN(std::string metas, AddressList(meta, meta_servers));
  if (!previous || rewrite) {
    RETURN_IF_ERROR(
        WriteFile(config, ConfigText(root, meta, metas, data, store, options.chunk_size)));
  } else {
    // Keep the file (it may have been edited); only its addresses move.
    const std::string old_text = ReadFile(config);
    std::string text = old_text;
    auto replace = [&text](const std::string& from, const std::string& to) {
      const std::string quoted_from = "\"" + from + "\"", quoted_to = "\"" + to + "\"";
      for (size_t pos = 0; (pos = text.find(quoted_from, pos)) != std::string::npos;
           pos += quoted_to.size()) {
        text.replace(pos, quoted_from.size(), quoted_to);
      }
    };
    // Through placeholders: the new meta address may be the old data one.
    // The list first: with one server it is the meta address itself.
    replace(previous->meta_address(), "\001metas");
    replace(previous->meta_listen(0), "\001meta");
    replace(previous->data_address(), "\001data");
    replace("\001metas", metas);
    replace("\001meta", meta);
    replace("\001data", data);
    if (text != old_text) RETURN_IF_ERROR(WriteFile(config, text));
  }
  fs::create_directories(root + "/volume0", ec);
  fs::create_directories(root + "/logs", ec);
  return Open(root);
}

}  // namespace t0fs::cli
