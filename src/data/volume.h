// Volume: one directory of chunk files on a local drive, and its identity.
//
// A volume directory holds volume.json (format, uuid, cluster id, node id,
// volume id) and chunks/<xx>/<id>.{dat,crc}. The identity stops a volume of
// one cluster from being attached to another by mistake.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "common/ids.h"
#include "common/lock_file.h"
#include "common/status.h"

namespace t0fs::data {

struct VolumeIdentity {
  std::string uuid;
  std::string cluster_id;  // empty until the first registration
  NodeId node;
  VolumeId volume;
};

struct VolumeStats {
  uint64_t total_bytes = 0;
  uint64_t free_bytes = 0;
};

class Volume {
 public:
  // Opens (creating on first use) the volume directory `dir`.
  static Result<Volume> Open(const std::string& dir);

  const std::string& dir() const { return dir_; }
  const VolumeIdentity& identity() const { return identity_; }
  // Records the ids meta assigned; refuses a different cluster.
  Status Bind(const std::string& cluster_id, NodeId node, VolumeId volume);
  Result<VolumeStats> Stats() const;

 private:
  Status Save() const;
  std::string dir_;
  VolumeIdentity identity_;
  std::shared_ptr<LockFile> lock_;  // one data service per volume
};

}  // namespace t0fs::data
