// How admin commands (status, fsck) reach a cluster: --dir of a `t0fs up`
// cluster, or --meta with --secret-file. Without either, ./t0fs-data is
// tried, then 127.0.0.1:7700 with ./secret.
#pragma once

#include <memory>
#include <string>

#include "common/status.h"
#include "rpc/channel.h"

namespace CLI {
class App;
}

namespace t0fs::cli {

struct AdminOptions {
  std::string dir;
  std::string meta;
  std::string secret_file;
  bool json = false;
  void Register(CLI::App* cmd);
};

struct AdminTarget {
  std::string meta;
  std::string secret;
  std::unique_ptr<rpc::Channel> channel;  // to meta, authenticated as "admin"
};

Result<AdminTarget> ConnectAdmin(const AdminOptions& options);
// A channel to a data node's TCP address with the same secret.
std::unique_ptr<rpc::Channel> NodeChannel(const AdminTarget& target, const std::string& address);

}  // namespace t0fs::cli
