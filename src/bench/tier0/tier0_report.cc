#include "bench/tier0/tier0_report.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace t0fs::bench::tier0 {
namespace {

std::string FormatIn(double value, const std::string& unit) {
  if (unit == "IOPS") return fmt::format("{:.0f}", value);
  if (unit == "accelerators") return fmt::format("{:.0f}", value);
  if (unit == "ms" || unit == "s") return fmt::format("{:.2f}", value);
  return fmt::format("{:.3f}", value);
}

std::string Cpu(double pct) { return pct < 0 ? "n/a" : fmt::format("{:.0f} %", pct); }

}  // namespace

std::string Improvement(const Row& row) {
  double t = row.m[0].value, n = row.m[1].value;
  if (t <= 0 || n <= 0) return "n/a";
  if (row.higher_better) return fmt::format("{:.2f}x", t / n);
  return fmt::format("{:+.0f} % ({:.2f}x)", (t / n - 1) * 100, n / t);
}

std::string LikelyLimit(const Row& row, Placement p, const MachineFacts& facts) {
  const Measurement& m = row.m[static_cast<int>(p)];
  double disk_cap = row.is_iops ? facts.disk_iops : row.is_write ? facts.disk_write_bps : facts.disk_read_bps;
  double disk_load = row.is_iops ? row.m[static_cast<int>(p)].value : m.traffic_bps;
  struct Use {
    const char* what;
    double util;
  };
  std::vector<Use> uses;
  if (disk_cap > 0) uses.push_back({"disk", disk_load / disk_cap});
  if (p == Placement::kNetworked && facts.link_bps > 0) {
    uses.push_back({"link", m.traffic_bps / (facts.link_bps * facts.storage_links)});
  }
  // Our own processes when we can see them: the machine may be busy with
  // other work that does not limit us.
  uses.push_back({"CPU", (m.system_cpu_pct >= 0 ? m.system_cpu_pct : m.machine_busy_pct) / 100});
  auto top = std::max_element(uses.begin(), uses.end(),
                              [](const Use& a, const Use& b) { return a.util < b.util; });
  return fmt::format("{} {:.0f} %", top->what, top->util * 100);
}

std::string RenderTable(const Tier0Results& r, const Tier0Plan& plan) {
  std::string out;
  out += fmt::format("Tier 0 vs networked storage ({})\n", r.testbed);
  out += fmt::format(
      "1 MiB and 4 KiB tests: O_DIRECT (the page cache does not hide the link), {} thread(s) per "
      "client, {} MiB per client, {} s per timed test\n\n",
      plan.threads, plan.size >> 20, plan.runtime_s);
  size_t width = 30;
  for (const auto& row : r.rows) width = std::max(width, row.test.size() + row.unit.size() + 3);
  out += fmt::format("{:<{}} {:>12} {:>12} {:>16} {:>10} {:>10} {:>12} {:>12}\n", "test", width, "Tier 0",
                     "networked", "improvement", "CPU T0", "CPU net", "limit T0*", "limit net*");
  for (const auto& row : r.rows) {
    out += fmt::format("{:<{}} {:>12} {:>12} {:>16} {:>10} {:>10} {:>12} {:>12}\n",
                       row.test + " (" + row.unit + ")", width, FormatIn(row.m[0].value, row.unit),
                       FormatIn(row.m[1].value, row.unit), Improvement(row), Cpu(row.m[0].client_cpu_pct),
                       Cpu(row.m[1].client_cpu_pct), LikelyLimit(row, Placement::kTier0, r.facts),
                       LikelyLimit(row, Placement::kNetworked, r.facts));
  }
  out += fmt::format(
      "\nCPU = client CPU: the bench processes plus the GPU nodes' mount daemons, % of one core, "
      "summed over the clients ({} cores).\n"
      "* limit = estimate: the highest utilisation of disk (raw O_DIRECT: read {:.2f} GB/s, write "
      "{:.2f} GB/s, {:.0f} IOPS 4 KiB), storage link{} and CPU (the experiment's processes, "
      "% of all cores).\n",
      r.facts.cores, r.facts.disk_read_bps / 1e9, r.facts.disk_write_bps / 1e9, r.facts.disk_iops,
      r.facts.link_bps > 0 ? fmt::format(" ({} x {:.2f} GB/s)", r.facts.storage_links, r.facts.link_bps / 1e9)
                           : " (unknown)");
  for (const auto& curve : r.curves) {
    out += fmt::format("\nScaling: {} ({}) by concurrent clients\n", curve.name, curve.unit);
    out += fmt::format("{:>8} {:>12} {:>12} {:>8} {:>10} {:>10}\n", "clients", "Tier 0", "networked",
                       "ratio", "CPU T0", "CPU net");
    for (const auto& pt : curve.points) {
      out += fmt::format("{:>8} {:>12} {:>12} {:>8} {:>10} {:>10}\n", pt.clients,
                         FormatIn(pt.value[0], curve.unit), FormatIn(pt.value[1], curve.unit),
                         pt.value[1] > 0 ? fmt::format("{:.2f}x", pt.value[0] / pt.value[1]) : "n/a",
                         Cpu(pt.cpu_pct[0]), Cpu(pt.cpu_pct[1]));
    }
  }
  out += "\nPlacement (t0fs layout): ";
  for (const auto& proof : r.proofs) {
    std::string nodes;
    for (uint64_t n : proof.replica_nodes) nodes += (nodes.empty() ? "" : ",") + std::to_string(n);
    out += fmt::format("{}{} GPU node {} -> node {}{}", &proof == &r.proofs.front() ? "" : "; ",
                       PlacementName(proof.placement), proof.gpu_node, nodes, proof.ok ? "" : " (WRONG)");
  }
  uint64_t verified = 0, mismatches = 0;
  for (const auto& v : r.verified) verified += v.bytes, mismatches += v.errors;
  if (r.verified.empty()) {
    out += "\nVerified: not run (the experiment stopped before its verify pass)\n";
  } else {
    out += fmt::format("\nVerified: {} MiB read back and checked block by block, {} mismatches\n",
                       verified >> 20, mismatches);
  }
  return out;
}

nlohmann::json ToSummaryJson(const Tier0Results& r, const Tier0Plan& plan) {
  using nlohmann::json;
  json rows = json::array();
  for (const auto& row : r.rows) {
    json per = json::object();
    for (Placement p : {Placement::kTier0, Placement::kNetworked}) {
      const Measurement& m = row.m[static_cast<int>(p)];
      per[PlacementName(p)] = {{"value", m.value},
                               {"traffic_bytes_per_s", m.traffic_bps},
                               {"client_cpu_pct", m.client_cpu_pct},
                               {"machine_busy_pct", m.machine_busy_pct},
                               {"experiment_cpu_pct_of_machine", m.system_cpu_pct},
                               {"limit_estimate", LikelyLimit(row, p, r.facts)}};
    }
    rows.push_back({{"test", row.test}, {"unit", row.unit}, {"higher_is_better", row.higher_better},
                    {"improvement", Improvement(row)}, {"tier0", per["tier0"]},
                    {"networked", per["networked"]}});
  }
  json curves = json::array();
  for (const auto& c : r.curves) {
    json pts = json::array();
    for (const auto& pt : c.points) {
      pts.push_back({{"clients", pt.clients}, {"tier0", pt.value[0]}, {"networked", pt.value[1]},
                     {"tier0_client_cpu_pct", pt.cpu_pct[0]}, {"networked_client_cpu_pct", pt.cpu_pct[1]}});
    }
    curves.push_back({{"name", c.name}, {"unit", c.unit}, {"points", pts}});
  }
  json proofs = json::array();
  for (const auto& p : r.proofs) {
    proofs.push_back({{"placement", PlacementName(p.placement)}, {"gpu_node", p.gpu_node}, {"file", p.file},
                      {"replica_nodes", p.replica_nodes}, {"ok", p.ok}});
  }
  json verified = json::array();
  for (const auto& v : r.verified) {
    verified.push_back({{"placement", PlacementName(v.placement)}, {"gpu_node", v.gpu_node},
                        {"bytes", v.bytes}, {"errors", v.errors}});
  }
  return {{"format", "t0fs-tier0-vs-networked"},
          {"format_version", 1},
          {"mode", plan.hosts ? "hosts" : "namespaces"},
          {"testbed", r.testbed},
          {"params",
           {{"gpu_nodes", plan.gpu_nodes}, {"storage_nodes", plan.storage_nodes}, {"link", plan.link},
            {"size_per_client", plan.size}, {"threads", plan.threads}, {"runtime_s", plan.runtime_s},
            {"quick", plan.quick}, {"direct_io", true}, {"mlperf_record_scale", plan.mlperf_scale}}},
          {"facts",
           {{"disk_read_bytes_per_s", r.facts.disk_read_bps}, {"disk_write_bytes_per_s", r.facts.disk_write_bps},
            {"disk_read_iops_4k", r.facts.disk_iops}, {"cores", r.facts.cores},
            {"link_bytes_per_s", r.facts.link_bps}, {"storage_links", r.facts.storage_links}}},
          {"rows", rows},
          {"curves", curves},
          {"placement_proofs", proofs},
          {"verified", verified}};
}

ResultSet ToResultSet(const Tier0Results& r, Placement p, const ResultSet& header) {
  ResultSet set = header;
  set.label = p == Placement::kTier0 ? "Tier 0" : "networked";
  RunResult run;
  auto phase = [&](const std::string& name, double value, const std::string& unit, bool higher,
                   double cpu) {
    PhaseResult ph;
    ph.name = name;
    ph.has_bytes = false;
    // Report units: bandwidth in B/s and times in ns, as every bench result.
    double v = value;
    std::string u = unit;
    if (unit == "GB/s") v *= 1e9, u = "B/s";
    if (unit == "ms") v *= 1e6, u = "ns";
    if (unit == "accelerators") u = "";
    ph.figures.push_back({"x_value", v, u, higher ? Better::kHigher : Better::kLower, name});
    if (cpu >= 0) ph.figures.push_back({"x_client_cpu", cpu, "%", Better::kLower, "Client CPU"});
    run.phases.push_back(std::move(ph));
  };
  int pi = static_cast<int>(p);
  for (const auto& row : r.rows) phase(row.test, row.m[pi].value, row.unit, row.higher_better, row.m[pi].client_cpu_pct);
  for (const auto& c : r.curves) {
    for (const auto& pt : c.points) {
      phase(fmt::format("Scaling: {}, {} client(s)", c.name, pt.clients), pt.value[pi], c.unit, true,
            pt.cpu_pct[pi]);
    }
  }
  set.runs.push_back(std::move(run));
  return set;
}

}  // namespace t0fs::bench::tier0
