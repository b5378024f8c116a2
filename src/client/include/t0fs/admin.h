// AdminClient: libt0fs's administrative view of a cluster — the objective
// of a tree (get/set, with its settings parsed and validated here, once),
// the layout of a file, the data nodes, and draining a node — for the CLI's
// admin commands and other front ends. It speaks to meta as "admin" (no
// session: it opens no files and holds nothing).
//
// Where the cluster is (meta address, secret) is the caller's to find
// (cli/admin.h LocateCluster).
//
// Thread safety: one AdminClient per thread (calls are not serialised).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.h"
#include "common/ids.h"
#include "common/status.h"
#include "t0fs/client.h"

namespace t0fs::client {

// Where new chunks of a tree go (the wire's Placement, same numbers).
enum class Placement : uint32_t {
  kLocal = 0,   // the first replica on the writer's node
  kSpread = 1,  // by free space and load alone
};

// How many copies of the data below a directory, and where.
struct Objective {
  uint32_t replicas = 0;
  Placement placement = Placement::kLocal;
  std::vector<NodeId> nodes;  // allowed nodes; empty = any
  uint64_t chunk_size = 0;    // for new files; 0 = the cluster default
};

// Applies "key=value" settings to `base`: replicas=1..16,
// placement=local|spread, nodes=ID,ID (empty: any), chunk-size=SIZE.
// kInvalidArgument names the bad setting.
Result<Objective> ParseObjective(const std::vector<std::string>& settings, Objective base);
// "replicas=2 placement=local nodes=1,2 chunk-size=1 MiB" (the parts set).
std::string DescribeObjective(const Objective& objective);

// A data node as meta knows it.
struct NodeInfo {
  NodeId node;
  std::string address;   // host:port of its data service
  std::string hostname;
  std::string state;     // up, suspect, down, draining
  std::string host_id;   // boot id + network namespace: equal on one host
};

class AdminClient {
 public:
  struct Options {
    std::string meta;    // host:port
    std::string secret;  // the cluster secret
    Duration timeout{std::chrono::seconds(120)};  // per call (fsck-sized answers take long)
  };
  // Checks the address; the first call connects.
  static Result<std::unique_ptr<AdminClient>> Open(const Options& options);
  virtual ~AdminClient() = default;

  // The inode of an absolute path inside the file system ("/ckpt/run1").
  virtual Result<InodeId> Resolve(std::string_view path) = 0;
  virtual Result<Attr> GetAttr(InodeId ino) = 0;
  // Every chunk of a file (ReplicaInfo::local unset: see NodeInfo::host_id).
  virtual Result<std::vector<ChunkInfo>> Chunks(InodeId ino) = 0;

  virtual Result<Objective> GetObjective(InodeId ino) = 0;
  // Sets the objective of `ino` (and, `recursive`, of everything below a
  // directory); returns what was recorded and how many inodes changed.
  struct ObjectiveSet {
    Objective objective;
    uint64_t changed = 0;
  };
  virtual Result<ObjectiveSet> SetObjective(InodeId ino, const Objective& objective, bool recursive) = 0;

  virtual Result<std::vector<NodeInfo>> Nodes() = 0;
  // Drain: the node takes no new data and its chunks move to other nodes;
  // Undrain: it takes data again.
  virtual Status Drain(NodeId node) = 0;
  virtual Status Undrain(NodeId node) = 0;
};

}  // namespace t0fs::client
