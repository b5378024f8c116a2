// ClusterDir: the directory `t0fs up` keeps a cluster of this machine in.
//
//   <dir>/secret      cluster secret (0600)
//   <dir>/t0fs.toml   the config of meta, data and mount (written once; edit it)
//   <dir>/meta.db     metadata (SQLite, WAL), unless the cluster keeps it
//                     in a store given by URL (--store postgresql://…)
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
  // The metadata store by URL; empty: SQLite in <dir>/meta.db. Only for a
  // new cluster: an established one keeps the store it has.
  std::string store;
  // Meta servers of the cluster: server i listens on the meta port + i, so
  // this many consecutive ports must be free. More than one needs a shared
  // store (PostgreSQL). 0: as recorded (1 for a new cluster).
  uint32_t meta_servers = 0;
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
  // The meta address clients use (the config's [data] meta): one server's,
  // or all of them, comma-separated ("a:7700,a:7701").
  const std::string& meta_address() const { return metas_; }
  // How many meta servers the cluster runs, and the address of server
  // `idx` (0-based).
  uint32_t meta_servers() const { return static_cast<uint32_t>(meta_list_.size()); }
  const std::string& meta_listen(uint32_t idx) const { return meta_list_.at(idx); }
  // The metadata store as recorded: a URL, or "sqlite://<dir>/meta.db".
  const std::string& store() const { return store_; }
  // The (first) data node address recorded in the config.
  const std::string& data_address() const { return data_; }
  // The address of data node `idx` (0-based): the data port + idx.
  Result<std::string> data_address(uint32_t idx) const;
  bool established() const;

  // Every port the cluster's meta servers and `nodes` data nodes listen on is free;
  // otherwise an error naming the busy address and where it is configured.
  Status CheckPortsFree(uint32_t nodes) const;

 private:
  std::string root_;
  std::string meta_;   // [meta] listen: the first meta server's address
  std::string metas_;  // [data] meta: every meta server's
  std::vector<std::string> meta_list_;
  std::string store_;
  std::string data_;
};

}  // namespace t0fs::cli
