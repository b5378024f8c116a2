// The Tier 0 experiment: the seed 001/000 tests run on the same cluster
// against two placements of the same data — Tier 0 (replicas=1
// placement=local, each GPU node's client writes its own data, so it lands
// on that node) and networked (placement=spread nodes=<storage nodes>) —
// with the placement proven from `t0fs layout`, the data read back and
// verified, and the client CPU of every test recorded.
//
// Thread safety: one thread. Every wait polls StopRequested(), so Ctrl-C
// ends Run() with kInterrupted and the caller's cleanup runs.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "bench/result.h"
#include "bench/tier0/testbed.h"
#include "bench/tier0/tier0_options.h"

namespace t0fs::bench::tier0 {

enum class Placement { kTier0 = 0, kNetworked = 1 };
const char* PlacementName(Placement p);  // "tier0", "networked"

// What limits a row is estimated from these, measured at the start.
struct MachineFacts {
  double disk_read_bps = 0;   // raw O_DIRECT 1 MiB read, GPU node 1's file system
  double disk_write_bps = 0;  // raw O_DIRECT 1 MiB write
  double disk_iops = 0;       // raw O_DIRECT 4 KiB random read
  uint32_t cores = 0;
  double link_bps = 0;        // bytes/s of one storage node's link (0: unknown)
  uint32_t storage_links = 0;
};

// One placement's measurement of one test.
struct Measurement {
  double value = 0;            // in the row's unit
  double traffic_bps = 0;      // bytes/s the test moved (for the limit estimate)
  double client_cpu_pct = -1;  // bench + mount daemon, % of one core, summed over clients
  double machine_busy_pct = 0; // whole machine, % of all cores (mean over clients)
  // The experiment's own processes (bench clients + every t0fs daemon), % of
  // all cores; negative when the daemons are not ours (--hosts).
  double system_cpu_pct = -1;
};

enum class Resource { kDisk, kLink, kCpu };

struct Row {
  Row(std::string test_name, std::string unit_name)
      : test(std::move(test_name)), unit(std::move(unit_name)) {}
  std::string test;    // "Seq read 1 MiB, 2 clients"
  std::string unit;    // "GB/s", "IOPS", "ms", "s", "accelerators"
  bool higher_better = true;
  bool is_write = false;
  bool is_iops = false;
  Measurement m[2];    // indexed by Placement
};

struct CurvePoint {
  uint32_t clients = 0;
  double value[2] = {0, 0};
  double cpu_pct[2] = {-1, -1};
};
struct Curve {
  std::string name;  // "Seq read 1 MiB", "Random read 4 KiB"
  std::string unit;  // "GB/s", "IOPS"
  std::vector<CurvePoint> points;
};

struct PlacementProof {
  Placement placement = Placement::kTier0;
  uint64_t gpu_node = 0;
  std::string file;
  std::vector<uint64_t> replica_nodes;  // every chunk's replicas
  bool ok = false;
};

struct VerifyCheck {
  Placement placement = Placement::kTier0;
  uint64_t gpu_node = 0;
  uint64_t bytes = 0;
  uint64_t errors = 0;
};

struct Tier0Results {
  MachineFacts facts;
  std::string testbed;
  std::vector<Row> rows;
  std::vector<Curve> curves;
  std::vector<PlacementProof> proofs;
  std::vector<VerifyCheck> verified;
};

class Experiment {
 public:
  // Result files go to `out_dir`/raw, child logs to `out_dir`/logs.
  Experiment(const Tier0Plan& plan, Testbed& testbed, std::string out_dir, std::string tag);

  Result<Tier0Results> Run();
  // What was measured so far: after Run() ended with kInterrupted, the rows
  // completed before the stop (curves only once a whole curve ran).
  const Tier0Results& partial() const { return results_; }
  // Removes the experiment's tree from the file system (hosts mode).
  Status RemoveData();

 private:
  struct ClientRun {
    ResultSet set;
    double mount_cpu_s = -1;
    double daemon_cpu_s = -1;  // all daemons over the whole call (same in every run)
    double wall_s = 0;
  };
  using ArgvFor = std::function<std::vector<std::string>(uint32_t idx)>;

  Status MeasureFacts();
  Status Prepare();
  Status LayOut();
  Status ProveLayout(Placement p, uint32_t idx);
  Status ScalingTests();
  Status WriteTest();
  Status AiTests();
  Status MlperfTests();
  Status VerifyAll();
  // Runs argv_for(idx) on every GPU node in `nodes` at once and waits for all.
  Result<std::vector<ClientRun>> RunClients(const std::string& name,
                                            const std::vector<uint32_t>& nodes,
                                            const ArgvFor& argv_for);
  // Sums the clients of one test into a measurement of `figure` (bw, iops, ...).
  Measurement Combine(const std::vector<ClientRun>& runs, const std::string& phase,
                      const std::string& figure, double scale) const;

  std::string Dir(Placement p, uint32_t idx) const;  // on GPU node idx, via its mount
  std::string FsPath(Placement p, uint32_t idx) const;  // t0fs:/... of the same
  std::vector<std::string> BenchIo(const std::string& path, const std::string& rw,
                                   const std::string& bs, bool timed) const;

  const Tier0Plan& plan_;
  Testbed& testbed_;
  std::string out_dir_;
  std::string top_;  // the experiment's directory in t0fs: /t0fs-tier0-<tag>
  std::string tag_;
  int runs_started_ = 0;
  Tier0Results results_;
};

}  // namespace t0fs::bench::tier0
