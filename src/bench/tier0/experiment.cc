#include "bench/tier0/experiment.h"

#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <set>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "bench/tier0/say.h"

namespace t0fs::bench::tier0 {
namespace {

constexpr std::chrono::seconds kRunTimeout{3600};
constexpr double kGB = 1e9;
// unet3d's record (DLIO): 146,600,628 B, stdev 68,341,808 B.
constexpr double kUnetRecord = 146600628.0;
constexpr double kUnetRecordStdev = 68341808.0;

double FigureOf(const PhaseResult& phase, const std::string& name) {
  const Figure* f = phase.Find(name);
  return f != nullptr ? f->value : 0;
}

const PhaseResult* PhaseOf(const ResultSet& set, const std::string& name) {
  if (set.runs.empty()) return nullptr;
  for (const auto& p : set.runs[0].phases) {
    if (name.empty() || p.name == name) return &p;
  }
  return nullptr;
}

}  // namespace

const char* PlacementName(Placement p) { return p == Placement::kTier0 ? "tier0" : "networked"; }

Experiment::Experiment(const Tier0Plan& plan, Testbed& testbed, std::string out_dir, std::string tag)
    : plan_(plan), testbed_(testbed), out_dir_(std::move(out_dir)), tag_(std::move(tag)) {
  top_ = "/t0fs-tier0-" + tag_;
}

std::string Experiment::Dir(Placement p, uint32_t idx) const {
  return fmt::format("{}{}/{}/n{}", testbed_.MountOf(idx), top_, PlacementName(p),
                     testbed_.GpuNodeId(idx));
}

std::string Experiment::FsPath(Placement p, uint32_t idx) const {
  return fmt::format("t0fs:{}/{}/n{}", top_, PlacementName(p), testbed_.GpuNodeId(idx));
}

std::vector<std::string> Experiment::BenchIo(const std::string& path, const std::string& rw,
                                             const std::string& bs, bool timed) const {
  std::vector<std::string> argv = {"t0fs", "bench", "io", path, "--rw", rw, "--bs", bs,
                                   "--threads", std::to_string(plan_.threads),
                                   "--size", std::to_string(plan_.size), "--split", "shared",
                                   "--direct", "--keep", "-q"};
  if (rw == "randread") {
    argv.insert(argv.end(), {"--engine", "io_uring", "--iodepth", std::to_string(plan_.rand_iodepth)});
  }
  if (timed) {
    argv.insert(argv.end(), {"--runtime", fmt::format("{}ms", static_cast<int64_t>(plan_.runtime_s * 1000)),
                             "--ramp", fmt::format("{}ms", static_cast<int64_t>(plan_.ramp_s * 1000))});
  }
  return argv;
}

Result<std::vector<Experiment::ClientRun>> Experiment::RunClients(const std::string& name,
                                                                  const std::vector<uint32_t>& nodes,
                                                                  const ArgvFor& argv_for) {
  std::vector<ChildProcess> children;
  std::vector<std::string> jsons;
  std::vector<double> cpu_before;
  for (uint32_t idx : nodes) cpu_before.push_back(testbed_.MountCpuSeconds(idx));
  double daemons_before = testbed_.DaemonCpuSeconds();
  auto start = std::chrono::steady_clock::now();
  // `t0fs bench ...` children write a result file; helpers (mkdir, rm) and
  // the MLPerf datagen do not.
  bool bench = false;
  for (uint32_t idx : nodes) {
    int seq = runs_started_++;
    std::string stem = fmt::format("{:03d}-{}-node{}", seq, name, testbed_.GpuNodeId(idx));
    std::vector<std::string> argv = argv_for(idx);
    bench = argv.size() > 1 && argv[0] == "t0fs" && argv[1] == "bench" &&
            std::find(argv.begin(), argv.end(), "datagen") == argv.end();
    jsons.push_back(out_dir_ + "/raw/" + stem + ".json");
    ASSIGN_OR_RETURN(ChildProcess child,
                     testbed_.Launch(idx, std::move(argv), bench ? jsons.back() : "",
                                     out_dir_ + "/logs/" + stem + ".log"));
    children.push_back(std::move(child));
  }
  std::vector<ClientRun> runs(nodes.size());
  for (size_t idx = 0; idx < children.size(); ++idx) {
    ASSIGN_OR_RETURN(int rc, children[idx].Wait(kRunTimeout));
    if (rc != 0) {
      std::string log = out_dir_ + "/logs/" + jsons[idx].substr(jsons[idx].rfind('/') + 1);
      log.replace(log.size() - 5, 5, ".log");
      return Status(StatusCode::kInternal, fmt::format("{} on GPU node {} failed (exit {}): {}", name,
                                                       testbed_.GpuNodeId(nodes[idx]), rc,
                                                       TailFile(log, 3)));
    }
  }
  double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  double daemons_after = testbed_.DaemonCpuSeconds();
  for (size_t idx = 0; idx < nodes.size() && bench; ++idx) {
    ASSIGN_OR_RETURN(runs[idx].set, LoadResultSet(jsons[idx]));
    runs[idx].wall_s = wall;
    if (daemons_before >= 0 && daemons_after >= 0) runs[idx].daemon_cpu_s = daemons_after - daemons_before;
    double after = testbed_.MountCpuSeconds(nodes[idx]);
    if (cpu_before[idx] >= 0 && after >= 0) runs[idx].mount_cpu_s = after - cpu_before[idx];
  }
  return runs;
}

Measurement Experiment::Combine(const std::vector<ClientRun>& runs, const std::string& phase,
                                const std::string& figure, double scale) const {
  Measurement m;
  double cpu = 0, busy = 0, bench_cpu = 0;
  bool cpu_known = true;
  for (const auto& run : runs) {
    const PhaseResult* p = PhaseOf(run.set, phase);
    if (p == nullptr) continue;
    m.value += FigureOf(*p, figure) * scale;
    m.traffic_bps += FigureOf(*p, "bw");
    if (p->cpu.wall_s > 0) bench_cpu += (p->cpu.user_s + p->cpu.sys_s) / p->cpu.wall_s * 100;
    if (run.mount_cpu_s >= 0 && run.wall_s > 0) {
      cpu += run.mount_cpu_s / run.wall_s * 100;
    } else {
      cpu_known = false;
    }
    busy += p->cpu.machine_busy_pct;
  }
  // A figure that is a mean (latency) is averaged over the clients, not summed.
  if (figure.rfind("lat_", 0) == 0 && !runs.empty()) m.value /= static_cast<double>(runs.size());
  m.client_cpu_pct = cpu_known ? cpu + bench_cpu : -1;
  if (!runs.empty() && runs[0].daemon_cpu_s >= 0 && runs[0].wall_s > 0) {
    m.system_cpu_pct = (bench_cpu + runs[0].daemon_cpu_s / runs[0].wall_s * 100) /
                       std::max(1u, std::thread::hardware_concurrency());
  }
  m.machine_busy_pct = runs.empty() ? 0 : busy / static_cast<double>(runs.size());
  return m;
}

Result<Tier0Results> Experiment::Run() {
  ::mkdir((out_dir_ + "/raw").c_str(), 0755);
  ::mkdir((out_dir_ + "/logs").c_str(), 0755);
  results_.testbed = testbed_.Describe();
  RETURN_IF_ERROR(MeasureFacts());
  RETURN_IF_ERROR(Prepare());
  RETURN_IF_ERROR(LayOut());
  RETURN_IF_ERROR(ScalingTests());
  RETURN_IF_ERROR(WriteTest());
  RETURN_IF_ERROR(AiTests());
  RETURN_IF_ERROR(MlperfTests());
  RETURN_IF_ERROR(VerifyAll());
  return results_;
}

Status Experiment::MeasureFacts() {
  MachineFacts& f = results_.facts;
  f.cores = std::max(1u, std::thread::hardware_concurrency());
  f.link_bps = static_cast<double>(plan_.link_bits_per_s) / 8;
  f.storage_links = plan_.storage_nodes;
  // The raw disk under GPU node 1's volumes (a file beside them, O_DIRECT).
  std::string file = plan_.hosts ? fmt::format("/var/tmp/t0fs-tier0-disk-{}.dat", tag_)
                                 : testbed_.MountOf(0) + "/../disk.dat";
  Say("measuring the raw disk (O_DIRECT, for the limit estimate): " + file);
  auto raw = [&](const std::string& rw, const std::string& bs) -> Result<double> {
    auto argv = BenchIo(file, rw, bs, true);
    argv.insert(argv.end(), {"--layout", "shared"});
    ASSIGN_OR_RETURN(auto runs, RunClients("raw-disk-" + rw, {0}, [&](uint32_t) { return argv; }));
    const PhaseResult* p = PhaseOf(runs[0].set, "");
    return p == nullptr ? 0.0 : FigureOf(*p, rw == "randread" ? "iops" : "bw");
  };
  ASSIGN_OR_RETURN(f.disk_read_bps, raw("read", "1M"));
  ASSIGN_OR_RETURN(f.disk_iops, raw("randread", "4K"));
  ASSIGN_OR_RETURN(f.disk_write_bps, raw("write", "1M"));
  ASSIGN_OR_RETURN(auto rm, RunClients("raw-disk-remove", {0}, [&](uint32_t) {
                     return std::vector<std::string>{"rm", "-f", file};
                   }));
  (void)rm;
  Say(fmt::format("raw disk: read {:.2f} GB/s, write {:.2f} GB/s, 4 KiB random read {:.0f} IOPS; {} "
                  "cores; storage link {}",
                  f.disk_read_bps / kGB, f.disk_write_bps / kGB, f.disk_iops, f.cores,
                  plan_.link.empty() ? "unknown" : plan_.link));
  return Status::Ok();
}

Status Experiment::Prepare() {
  Say("creating " + top_ + "/{tier0,networked} and their objectives");
  std::vector<uint32_t> all;
  for (uint32_t idx = 0; idx < testbed_.GpuNodes(); ++idx) all.push_back(idx);
  // Objectives first (set on the empty directories, inherited below).
  ASSIGN_OR_RETURN(auto made, RunClients("mkdir", {0}, [&](uint32_t idx) {
                     return std::vector<std::string>{
                         "mkdir", "-p", testbed_.MountOf(idx) + top_ + "/tier0",
                         testbed_.MountOf(idx) + top_ + "/networked"};
                   }));
  (void)made;
  RETURN_IF_ERROR(testbed_.Admin({"objective", "set", "t0fs:" + top_ + "/tier0", "replicas=1",
                                  "placement=local"})
                      .status());
  std::string storage;
  for (uint64_t id : testbed_.StorageNodeIds()) storage += (storage.empty() ? "" : ",") + std::to_string(id);
  RETURN_IF_ERROR(testbed_.Admin({"objective", "set", "t0fs:" + top_ + "/networked", "replicas=1",
                                  "placement=spread", "nodes=" + storage})
                      .status());
  Say(fmt::format("objectives: tier0 replicas=1 placement=local; networked replicas=1 "
                  "placement=spread nodes={}",
                  storage));
  // Node 1 also runs the one-client tests: write, the AI patterns, MLPerf.
  ASSIGN_OR_RETURN(auto dirs, RunClients("mkdir-nodes", all, [&](uint32_t idx) {
                     std::vector<std::string> argv = {"mkdir", "-p"};
                     for (Placement p : {Placement::kTier0, Placement::kNetworked}) {
                       argv.push_back(Dir(p, idx));
                       if (idx != 0) continue;
                       for (const char* sub : {"write", "mlperf", "ai-random-sampling", "ai-sharded-training",
                                               "ai-model-load", "ai-checkpoint-save"}) {
                         argv.push_back(Dir(p, idx) + "/" + sub);
                       }
                     }
                     return argv;
                   }));
  (void)dirs;
  return Status::Ok();
}

Status Experiment::LayOut() {
  for (Placement p : {Placement::kTier0, Placement::kNetworked}) {
    for (uint32_t idx = 0; idx < testbed_.GpuNodes(); ++idx) {
      Say(fmt::format("laying out {} x {} MiB on {} for GPU node {} (written by its own client, "
                      "verify pattern)",
                      plan_.threads, plan_.size / plan_.threads >> 20, PlacementName(p),
                      testbed_.GpuNodeId(idx)));
      auto argv = BenchIo(Dir(p, idx), "write", "1M", false);
      argv.push_back("--verify");
      ASSIGN_OR_RETURN(auto runs, RunClients(std::string("layout-") + PlacementName(p), {idx},
                                             [&](uint32_t) { return argv; }));
      (void)runs;
      RETURN_IF_ERROR(ProveLayout(p, idx));
    }
  }
  return Status::Ok();
}

Status Experiment::ProveLayout(Placement p, uint32_t idx) {
  PlacementProof proof;
  proof.placement = p;
  proof.gpu_node = testbed_.GpuNodeId(idx);
  proof.file = FsPath(p, idx) + "/t0fs-bench.0.0";
  ASSIGN_OR_RETURN(std::string out,
                   testbed_.Admin({"layout", proof.file, "--json", "--node-id",
                                   std::to_string(proof.gpu_node)}));
  auto j = nlohmann::json::parse(out, nullptr, false);
  if (j.is_discarded() || !j.contains("chunks")) {
    return Status(StatusCode::kInternal, "t0fs layout printed no chunk list for " + proof.file);
  }
  std::set<uint64_t> nodes;
  for (const auto& chunk : j["chunks"]) {
    for (const auto& r : chunk["replicas"]) nodes.insert(r.value("node", uint64_t{0}));
  }
  proof.replica_nodes.assign(nodes.begin(), nodes.end());
  auto storage = testbed_.StorageNodeIds();
  proof.ok = !nodes.empty();
  for (uint64_t n : nodes) {
    bool on_storage = std::find(storage.begin(), storage.end(), n) != storage.end();
    if (p == Placement::kTier0 ? n != proof.gpu_node : !on_storage) proof.ok = false;
  }
  std::string list;
  for (uint64_t n : nodes) list += (list.empty() ? "" : ",") + std::to_string(n);
  Say(fmt::format("  layout {}: replicas on node(s) {} — {}", proof.file, list,
                  proof.ok ? "as placed" : "WRONG PLACEMENT"));
  results_.proofs.push_back(proof);
  if (!proof.ok) {
    return Status(StatusCode::kInternal,
                  fmt::format("{} data of GPU node {} is on node(s) {}, not where its objective "
                              "puts it; the comparison would be meaningless",
                              PlacementName(p), proof.gpu_node, list));
  }
  return Status::Ok();
}

Status Experiment::ScalingTests() {
  Curve seq{"Seq read 1 MiB", "GB/s", {}};
  Curve rnd{"Random read 4 KiB", "IOPS", {}};
  uint32_t n = testbed_.GpuNodes();
  for (uint32_t clients = 1; clients <= n; ++clients) {
    std::vector<uint32_t> nodes;
    for (uint32_t idx = 0; idx < clients; ++idx) nodes.push_back(idx);
    CurvePoint seq_point{clients, {0, 0}, {-1, -1}};
    CurvePoint rnd_point{clients, {0, 0}, {-1, -1}};
    Row seq_row{fmt::format("Seq read 1 MiB, {} client{}", clients, clients > 1 ? "s" : ""), "GB/s"};
    Row rnd_row{fmt::format("Random read 4 KiB, {} client{}", clients, clients > 1 ? "s" : ""), "IOPS"};
    rnd_row.is_iops = true;
    for (Placement p : {Placement::kTier0, Placement::kNetworked}) {
      int pi = static_cast<int>(p);
      Say(fmt::format("seq read 1 MiB O_DIRECT, {} client(s) at once, {}", clients, PlacementName(p)));
      ASSIGN_OR_RETURN(auto runs, RunClients(fmt::format("seqread-{}c-{}", clients, PlacementName(p)),
                                             nodes, [&](uint32_t idx) {
                                               return BenchIo(Dir(p, idx), "read", "1M", true);
                                             }));
      seq_row.m[pi] = Combine(runs, "read", "bw", 1 / kGB);
      Say(fmt::format("  {:.3f} GB/s", seq_row.m[pi].value));
      Say(fmt::format("random read 4 KiB O_DIRECT io_uring qd{}, {} client(s) at once, {}",
                      plan_.rand_iodepth, clients, PlacementName(p)));
      ASSIGN_OR_RETURN(auto rruns, RunClients(fmt::format("randread-{}c-{}", clients, PlacementName(p)),
                                              nodes, [&](uint32_t idx) {
                                                return BenchIo(Dir(p, idx), "randread", "4K", true);
                                              }));
      rnd_row.m[pi] = Combine(rruns, "read", "iops", 1);
      Say(fmt::format("  {:.0f} IOPS", rnd_row.m[pi].value));
      seq_point.value[pi] = seq_row.m[pi].value;
      seq_point.cpu_pct[pi] = seq_row.m[pi].client_cpu_pct;
      rnd_point.value[pi] = rnd_row.m[pi].value;
      rnd_point.cpu_pct[pi] = rnd_row.m[pi].client_cpu_pct;
    }
    seq.points.push_back(seq_point);
    rnd.points.push_back(rnd_point);
    // The table has the single client and the all-clients rows.
    if (clients == 1 || clients == n) {
      results_.rows.push_back(seq_row);
      results_.rows.push_back(rnd_row);
    }
  }
  results_.curves = {seq, rnd};
  return Status::Ok();
}

Status Experiment::WriteTest() {
  Row bw{"Seq write 1 MiB, 1 client", "GB/s"};
  Row lat{"Write latency 1 MiB (mean), 1 client", "ms"};
  bw.is_write = lat.is_write = true;
  lat.higher_better = false;
  for (Placement p : {Placement::kTier0, Placement::kNetworked}) {
    int pi = static_cast<int>(p);
    Say(fmt::format("seq write 1 MiB O_DIRECT, GPU node {}, {}", testbed_.GpuNodeId(0), PlacementName(p)));
    ASSIGN_OR_RETURN(auto runs, RunClients(std::string("seqwrite-") + PlacementName(p), {0},
                                           [&](uint32_t idx) {
                                             return BenchIo(Dir(p, idx) + "/write", "write", "1M", true);
                                           }));
    bw.m[pi] = Combine(runs, "write", "bw", 1 / kGB);
    lat.m[pi] = Combine(runs, "write", "lat_mean", 1e-6);
    Say(fmt::format("  {:.3f} GB/s, mean latency {:.2f} ms", bw.m[pi].value, lat.m[pi].value));
  }
  results_.rows.push_back(bw);
  results_.rows.push_back(lat);
  return Status::Ok();
}

Status Experiment::AiTests() {
  struct Pattern {
    const char* name;
    const char* phase;
    const char* row;
  };
  const Pattern patterns[] = {{"random-sampling", "read", "Random sampling 128 KiB"},
                              {"sharded-training", "read", "Sharded training 1 MiB"},
                              {"model-load", "read", "Model load"},
                              {"checkpoint-save", "write", "Checkpoint save"}};
  for (const auto& pat : patterns) {
    Row row{pat.row, "GB/s"};
    Row load_time{"Model load, time to load", "s"};
    load_time.higher_better = false;
    row.is_write = std::string(pat.phase) == "write";
    for (Placement p : {Placement::kTier0, Placement::kNetworked}) {
      int pi = static_cast<int>(p);
      Say(fmt::format("AI pattern {} ({} MiB), GPU node {}, {}", pat.name, plan_.ai_size >> 20,
                      testbed_.GpuNodeId(0), PlacementName(p)));
      std::vector<std::string> argv = {"t0fs", "bench", "ai", Dir(p, 0) + "/ai-" + pat.name,
                                       "--pattern", pat.name, "--size", std::to_string(plan_.ai_size),
                                       "--runtime", fmt::format("{}ms", static_cast<int64_t>(plan_.runtime_s * 1000)),
                                       "-q"};
      if (plan_.ai_threads != 0) argv.insert(argv.end(), {"--threads", std::to_string(plan_.ai_threads)});
      if (plan_.ai_files != 0) argv.insert(argv.end(), {"--files", std::to_string(plan_.ai_files)});
      ASSIGN_OR_RETURN(auto runs, RunClients(std::string("ai-") + pat.name + "-" + PlacementName(p), {0},
                                             [&](uint32_t) { return argv; }));
      row.m[pi] = Combine(runs, "", "bw", 1 / kGB);
      load_time.m[pi] = Combine(runs, "", "elapsed", 1);
      Say(fmt::format("  {:.3f} GB/s", row.m[pi].value));
    }
    results_.rows.push_back(row);
    if (std::string(pat.name) == "model-load") results_.rows.push_back(load_time);
  }
  return Status::Ok();
}

Status Experiment::MlperfTests() {
  Row acc{fmt::format("MLPerf 3D U-Net H100: accelerators >= 90 % AU, 1 GPU node (records 1/{})",
                      plan_.mlperf_scale),
          "accelerators"};
  Row io{"MLPerf 3D U-Net H100: throughput at that count", "GB/s"};
  double record = kUnetRecord / plan_.mlperf_scale;
  double stdev = kUnetRecordStdev / plan_.mlperf_scale;
  for (Placement p : {Placement::kTier0, Placement::kNetworked}) {
    int pi = static_cast<int>(p);
    std::string data = Dir(p, 0) + "/mlperf";
    std::vector<std::string> shape = {"-w", "unet3d", "-g", "h100", "--data-dir", data,
                                      "--num-files", std::to_string(plan_.mlperf_files),
                                      "--record-length", fmt::format("{:.0f}", record),
                                      "--record-length-stdev", fmt::format("{:.0f}", stdev), "-q"};
    Say(fmt::format("MLPerf unet3d datagen: {} files of ~{:.1f} MiB on {} (written by GPU node {})",
                    plan_.mlperf_files, record / (1 << 20), PlacementName(p), testbed_.GpuNodeId(0)));
    std::vector<std::string> gen = {"t0fs", "bench", "mlperf", "training", "datagen"};
    gen.insert(gen.end(), shape.begin(), shape.end());
    ASSIGN_OR_RETURN(auto made, RunClients(std::string("mlperf-datagen-") + PlacementName(p), {0},
                                           [&](uint32_t) { return gen; }));
    (void)made;
    Say(fmt::format("MLPerf unet3d h100 search up to {} accelerators, O_DIRECT, {}", plan_.mlperf_max,
                    PlacementName(p)));
    std::vector<std::string> search = {"t0fs", "bench", "mlperf", "training", "search"};
    search.insert(search.end(), shape.begin(), shape.end());
    search.insert(search.end(), {"--max", std::to_string(plan_.mlperf_max), "--epochs", "1", "--steps",
                                 std::to_string(plan_.mlperf_steps), "--odirect", "--drop-caches",
                                 "fadvise", "--results-dir", out_dir_ + "/logs/mlperf"});
    ASSIGN_OR_RETURN(auto runs, RunClients(std::string("mlperf-search-") + PlacementName(p), {0},
                                           [&](uint32_t) { return search; }));
    acc.m[pi] = Combine(runs, "", "x_max_accelerators", 1);
    io.m[pi] = Combine(runs, "", "x_io", 1 / kGB);
    acc.m[pi].traffic_bps = io.m[pi].traffic_bps = io.m[pi].value * kGB;
    Say(fmt::format("  {:.0f} accelerators, {:.3f} GB/s", acc.m[pi].value, io.m[pi].value));
  }
  results_.rows.push_back(acc);
  results_.rows.push_back(io);
  return Status::Ok();
}

Status Experiment::VerifyAll() {
  for (Placement p : {Placement::kTier0, Placement::kNetworked}) {
    for (uint32_t idx = 0; idx < testbed_.GpuNodes(); ++idx) {
      Say(fmt::format("verifying GPU node {}'s {} data (every block read back and checked)",
                      testbed_.GpuNodeId(idx), PlacementName(p)));
      auto argv = BenchIo(Dir(p, idx), "read", "1M", false);
      argv.push_back("--verify");
      ASSIGN_OR_RETURN(auto runs, RunClients(std::string("verify-") + PlacementName(p), {idx},
                                             [&](uint32_t) { return argv; }));
      const PhaseResult* phase = PhaseOf(runs[0].set, "read");
      VerifyCheck check{p, testbed_.GpuNodeId(idx), phase ? phase->last_done.bytes : 0,
                        phase ? phase->verify_errors : 1};
      results_.verified.push_back(check);
      if (check.errors != 0 || check.bytes == 0) {
        return Status(StatusCode::kCorruption,
                      fmt::format("verify of GPU node {}'s {} data failed", check.gpu_node, PlacementName(p)));
      }
    }
  }
  return Status::Ok();
}

Status Experiment::RemoveData() {
  auto runs = RunClients("remove", {0}, [&](uint32_t idx) {
    return std::vector<std::string>{"rm", "-rf", testbed_.MountOf(idx) + top_};
  });
  return runs.status();
}

}  // namespace t0fs::bench::tier0
