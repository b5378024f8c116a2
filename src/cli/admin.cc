#include "cli/admin.h"

#include <filesystem>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cli/cluster_dir.h"
#include "common/secret.h"

namespace t0fs::cli {

void AdminOptions::Register(CLI::App* cmd) {
  cmd->add_option("--dir", dir, "cluster directory of `t0fs up` (default ./t0fs-data if present)");
  cmd->add_option("--meta", meta, "meta service address (host:port)");
  cmd->add_option("--secret-file", secret_file, "cluster secret file");
  cmd->add_flag("--json", json, "print JSON instead of a table");
}

Result<AdminTarget> ConnectAdmin(const AdminOptions& options) {
  AdminTarget target;
  std::string secret_file = options.secret_file;
  std::string dir = options.dir;
  if (dir.empty() && options.meta.empty() && std::filesystem::exists("t0fs-data/t0fs.toml")) dir = "t0fs-data";
  if (!dir.empty()) {
    ASSIGN_OR_RETURN(ClusterDir cluster, ClusterDir::Open(dir));
    target.meta = cluster.meta_address();
    if (secret_file.empty()) secret_file = cluster.secret();
  }
  if (!options.meta.empty()) target.meta = options.meta;
  if (target.meta.empty()) target.meta = "127.0.0.1:7700";
  if (secret_file.empty()) secret_file = "secret";
  ASSIGN_OR_RETURN(target.secret, LoadSecret(secret_file));
  ASSIGN_OR_RETURN(rpc::Endpoint ep, rpc::Endpoint::Parse(target.meta));
  rpc::ClientOptions copts;
  copts.secret = target.secret;
  copts.role = "admin";
  copts.io_timeout.value = std::chrono::seconds(120);
  target.channel = std::make_unique<rpc::Channel>(ep, copts);
  return target;
}

std::unique_ptr<rpc::Channel> NodeChannel(const AdminTarget& target, const std::string& address) {
  auto ep = rpc::Endpoint::Parse(address);
  rpc::ClientOptions copts;
  copts.secret = target.secret;
  copts.role = "admin";
  copts.io_timeout.value = std::chrono::seconds(120);
  return std::make_unique<rpc::Channel>(ep.ok() ? *ep : rpc::Endpoint{}, copts);
}

}  // namespace t0fs::cli
