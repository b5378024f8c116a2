// The machines of the experiment as the tests see them: N GPU nodes (a data
// node and a t0fs mount each) and M storage nodes (a data node each) of one
// t0fs cluster. Two implementations: NetnsTestbed builds the cluster on this
// machine, every node in its own network namespace with the storage links
// shaped by tc; HostsTestbed uses a cluster already running on real hosts
// and reaches the GPU nodes over ssh.
//
// Ownership: a testbed owns what it created (processes, namespaces, mounts)
// and removes it in Teardown(), which its destructor also runs.
// Thread safety: one thread.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "bench/tier0/child_process.h"
#include "common/status.h"

namespace t0fs::bench::tier0 {

class Testbed {
 public:
  virtual ~Testbed() = default;

  virtual uint32_t GpuNodes() const = 0;
  // The data node id of GPU node `idx` (0-based).
  virtual uint64_t GpuNodeId(uint32_t idx) const = 0;
  virtual std::vector<uint64_t> StorageNodeIds() const = 0;
  // The t0fs mount of GPU node `idx`, as a path on that node.
  virtual std::string MountOf(uint32_t idx) const = 0;
  // Starts `argv` on GPU node `idx` (argv[0] "t0fs" is the t0fs binary
  // there), output appended to the local file `log`. With `json` set, argv
  // is a `t0fs bench` command and its --json result must end up in the
  // local file `json`.
  virtual Result<ChildProcess> Launch(uint32_t idx, std::vector<std::string> argv,
                                      const std::string& json, const std::string& log) = 0;
  // Runs a t0fs admin command (objective, layout, status) against the
  // cluster's meta service; returns its stdout.
  virtual Result<std::string> Admin(std::vector<std::string> argv) = 0;
  // CPU seconds used so far by the mount daemon of GPU node `idx`; a
  // negative value when it cannot be seen from here.
  virtual double MountCpuSeconds(uint32_t idx) const = 0;
  // CPU seconds used so far by every t0fs daemon of the cluster (meta, data
  // nodes, mounts); negative when they are not ours to see.
  virtual double DaemonCpuSeconds() const = 0;
  // One line: what the nodes are and how they are connected.
  virtual std::string Describe() const = 0;
  // Removes everything the testbed created; idempotent.
  virtual void Teardown() = 0;
};

}  // namespace t0fs::bench::tier0
