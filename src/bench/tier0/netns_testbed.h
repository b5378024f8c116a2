// The experiment's cluster on this machine: meta in the hub namespace, GPU
// nodes 1..N (a data node and a FUSE mount each, node ids 1..N) and storage
// nodes N+1..N+M (a data node each), every node in its own namespace; the
// storage nodes' links are shaped by tc tbf to the plan's rate both ways.
// Daemons are this binary (`t0fs meta|data|mount`) with the flags of
// tests/lib/cluster.sh. Mounts are made from inside a node's network
// namespace only, so they are visible (and are cleaned up) here.
//
// Ownership and thread safety: see Testbed.
#pragma once

#include <string>
#include <vector>

#include "bench/tier0/netns_topology.h"
#include "bench/tier0/testbed.h"
#include "bench/tier0/tier0_options.h"

namespace t0fs::bench::tier0 {

class NetnsTestbed : public Testbed {
 public:
  // `workdir` (created by the caller, removed by it after Teardown) holds
  // the secret, meta.db, volumes, mount points and logs.
  NetnsTestbed(const Tier0Plan& plan, std::string workdir, std::string tag);
  ~NetnsTestbed() override { Teardown(); }

  // Namespaces, shaping, meta, data nodes, mounts; each step said.
  Status Start();

  uint32_t GpuNodes() const override { return plan_.gpu_nodes; }
  uint64_t GpuNodeId(uint32_t idx) const override { return idx + 1; }
  std::vector<uint64_t> StorageNodeIds() const override;
  std::string MountOf(uint32_t idx) const override;
  Result<ChildProcess> Launch(uint32_t idx, std::vector<std::string> argv, const std::string& json,
                              const std::string& log) override;
  Result<std::string> Admin(std::vector<std::string> argv) override;
  double MountCpuSeconds(uint32_t idx) const override { return mounts_.at(idx).CpuSeconds(); }
  double DaemonCpuSeconds() const override;
  std::string Describe() const override;
  void Teardown() override;

 private:
  Status StartDataNode(uint32_t node);
  Status StartMount(uint32_t idx);
  Status WaitNodeUp(uint64_t node);

  const Tier0Plan& plan_;
  std::string workdir_;
  NetnsTopology topo_;
  std::string meta_addr_;
  ChildProcess meta_;
  std::vector<ChildProcess> data_;
  std::vector<ChildProcess> mounts_;
  int admin_calls_ = 0;
};

// True if `path` is a mount point of fuse.t0fs (in our mount namespace).
bool IsT0fsMounted(const std::string& path);
// Detaches every mount at or below `dir`; returns how many.
int DetachMountsBelow(const std::string& dir);

}  // namespace t0fs::bench::tier0
