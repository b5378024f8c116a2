// ClusterDir: the directory `t0fs up` keeps a single-node cluster in.
//
//   <dir>/secret      cluster secret (0600)
//   <dir>/t0fs.toml   the config of meta, data and mount (written once; edit it)
//   <dir>/meta.db     metadata (SQLite, WAL)
//   <dir>/volume0/    chunk files
//   <dir>/logs/       one log per daemon
#pragma once

#include <cstdint>
#include <string>

#include "common/status.h"

namespace t0fs::cli {

struct ClusterDirOptions {
  std::string meta_listen = "127.0.0.1:7700";
  std::string data_listen = "127.0.0.1:7701";
  uint64_t chunk_size = 64u << 20;
};

class ClusterDir {
 public:
  // Opens `path`, creating the cluster (secret, config, directories) on
  // first use; `created` tells which. Refuses a non-empty directory that is
  // not a t0fs cluster.
  static Result<ClusterDir> OpenOrCreate(const std::string& path, const ClusterDirOptions& options,
                                         bool* created);
  // Opens an existing cluster directory (for status, fsck).
  static Result<ClusterDir> Open(const std::string& path);

  const std::string& root() const { return root_; }
  std::string secret() const { return root_ + "/secret"; }
  std::string config() const { return root_ + "/t0fs.toml"; }
  std::string logs() const { return root_ + "/logs"; }
  // The meta address recorded in the config.
  const std::string& meta_address() const { return meta_; }
  // The (first) data node address recorded in the config.
  const std::string& data_address() const { return data_; }

 private:
  std::string root_;
  std::string meta_;
  std::string data_;
};

}  // namespace t0fs::cli
