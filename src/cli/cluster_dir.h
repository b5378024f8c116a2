// ClusterDir: the directory `t0fs up` keeps a cluster of this machine in.
//
//   <dir>/secret      cluster secret (0600)
//   <dir>/t0fs.toml   the config of meta, data and mount (written once; edit it)
//   <dir>/meta.db     metadata (SQLite, WAL)
//   <dir>/volume<i>/  chunk files of data node i+1
//   <dir>/logs/       one log per daemon
//
// A directory is *established* once a data node has registered its volume
// (volume0/volume.json exists): from then on its addresses are the cluster's
// and are never changed by `up`. Before that — a first start that failed
// half-way, say with the secret and config written and meta never started —
// it is *unfinished*: the next `up` completes it (missing secret or config
// written, addresses moved off busy ports) instead of refusing it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"

namespace t0fs::cli {

struct ClusterDirOptions {
  std::string meta_listen = "127.0.0.1:7700";
  std::string data_listen = "127.0.0.1:7701";
  // Given on the command line: taken as they are (an error when the port is
  // busy). Defaults move to the next free ports when busy.
  bool meta_listen_given = false;
  bool data_listen_given = false;
  // Data nodes of the cluster: node i listens on the data port + i, so this
  // many consecutive ports must be free.
  uint32_t data_nodes = 1;
  uint64_t chunk_size = 64u << 20;
};

enum class ClusterDirOrigin {
  kCreated,    // a new cluster directory
  kCompleted,  // an unfinished one, completed now
  kReused,     // an established one
};

class ClusterDir {
 public:
  // Opens `path`, creating or completing the cluster directory as described
  // above; `notes` receives what the user should be told (ports moved, files
  // written). Refuses a non-empty directory that is not a t0fs cluster.
  static Result<ClusterDir> OpenOrCreate(const std::string& path, const ClusterDirOptions& options,
                                         ClusterDirOrigin* origin, std::vector<std::string>* notes);
  // Opens an existing cluster directory (for status, fsck).
  static Result<ClusterDir> Open(const std::string& path);

  const std::string& root() const { return root_; }
  std::string secret() const { return root_ + "/secret"; }
  std::string config() const { return root_ + "/t0fs.toml"; }
  std::string logs() const { return root_ + "/logs"; }
  std::string volume(uint32_t idx) const { return root_ + "/volume" + std::to_string(idx); }
  // The meta address recorded in the config.
  const std::string& meta_address() const { return meta_; }
  // The (first) data node address recorded in the config.
  const std::string& data_address() const { return data_; }
  // The address of data node `idx` (0-based): the data port + idx.
  Result<std::string> data_address(uint32_t idx) const;
  bool established() const;

  // Every port the cluster's meta and `nodes` data nodes listen on is free;
  // otherwise an error naming the busy address and where it is configured.
  Status CheckPortsFree(uint32_t nodes) const;

 private:
  std::string root_;
  std::string meta_;
  std::string data_;
};

}  // namespace t0fs::cli
