// The experiment on a cluster that already runs (`--hosts`): meta, the data
// nodes and one t0fs mount per GPU node are up; nothing is created but the
// experiment's own directory tree. Commands for a GPU node run directly
// when its host is this machine ("local", "localhost", our hostname) and
// over `ssh -o BatchMode=yes HOST` otherwise, with `--remote-t0fs` as the
// binary there; a remote bench writes its result to a temp file there that
// is streamed back over ssh's stdout. Admin commands (objective, layout)
// run here against --meta with --secret-file, so meta must be reachable
// from this machine. No namespaces and no tc: the real network is measured.
//
// Ownership and thread safety: see Testbed.
#pragma once

#include <string>
#include <vector>

#include "bench/tier0/testbed.h"
#include "bench/tier0/tier0_options.h"

namespace t0fs::bench::tier0 {

class HostsTestbed : public Testbed {
 public:
  HostsTestbed(const Tier0Plan& plan, std::string workdir)
      : plan_(plan), workdir_(std::move(workdir)) {}

  // Checks that meta answers and every local mount is a t0fs mount.
  Status Check();

  uint32_t GpuNodes() const override { return static_cast<uint32_t>(plan_.mounts.size()); }
  uint64_t GpuNodeId(uint32_t idx) const override { return plan_.mounts.at(idx).node_id; }
  std::vector<uint64_t> StorageNodeIds() const override { return plan_.storage_node_ids; }
  std::string MountOf(uint32_t idx) const override { return plan_.mounts.at(idx).mount; }
  Result<ChildProcess> Launch(uint32_t idx, std::vector<std::string> argv, const std::string& json,
                              const std::string& log) override;
  Result<std::string> Admin(std::vector<std::string> argv) override;
  double MountCpuSeconds(uint32_t idx) const override;
  double DaemonCpuSeconds() const override { return -1; }
  std::string Describe() const override;
  void Teardown() override {}

 private:
  const Tier0Plan& plan_;
  std::string workdir_;
  int admin_calls_ = 0;
};

// Quotes one argument for a POSIX shell ('...' with ' as '\'').
std::string ShellQuote(const std::string& arg);

}  // namespace t0fs::bench::tier0
