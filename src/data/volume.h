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
#include "common/mountinfo.h"
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

// What the data node says about the file system under volume directory
// `dir`, or "" when it has nothing to say. Today: ext4 without a journal.
// There ext4 scans for recently freed inodes (reused too soon, a crash
// could mix a new file with a dead one's data) on every file it creates, a
// scan that grows with the files deleted in the last minutes: under file
// churn each chunk file (two for every new file) then costs the data node
// several times the CPU it costs on journaled ext4 or XFS (measured: 58-73 %
// of its CPU in `bench meta` file creates). `sys_root`: where sysfs is.
std::string FileSystemWarning(const std::string& dir, const std::string& sys_root = "/sys");
// The same for `mount`, the mount that holds a volume.
std::string FileSystemWarning(const MountEntry& mount, const std::string& sys_root);

}  // namespace t0fs::data
