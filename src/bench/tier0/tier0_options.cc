#include "bench/tier0/tier0_options.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

#include "bench/option_values.h"
#include "common/host_name.h"

namespace t0fs::bench::tier0 {
namespace {

Status Invalid(std::string message) {
  return Status(StatusCode::kInvalidArgument, std::move(message));
}

std::vector<std::string> SplitList(const std::string& text) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string::npos) comma = text.size();
    if (comma > start) parts.push_back(text.substr(start, comma - start));
    start = comma + 1;
  }
  return parts;
}

Result<uint64_t> ParseId(const std::string& text, const std::string& what) {
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos ||
      text.size() > 9 || std::stoull(text) == 0) {
    return Invalid(fmt::format("{}: '{}' is not a node id (1, 2, ...)", what, text));
  }
  return std::stoull(text);
}

}  // namespace

bool HostMount::IsLocal() const {
  if (host == "local" || host == "localhost" || host == "127.0.0.1") return true;
  return host == HostName();
}

Result<uint64_t> ParseLinkRate(const std::string& text) {
  size_t digits = 0;
  while (digits < text.size() && std::isdigit(static_cast<unsigned char>(text[digits]))) ++digits;
  std::string unit = text.substr(digits);
  for (auto& c : unit) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  uint64_t scale = 0;
  if (unit == "bit") scale = 1;
  if (unit == "kbit") scale = 1000;
  if (unit == "mbit") scale = 1000 * 1000;
  if (unit == "gbit") scale = 1000 * 1000 * 1000;
  if (digits == 0 || digits > 6 || scale == 0) {
    return Invalid(fmt::format(
        "--link: '{}' is not a rate (a number and bit, kbit, mbit or gbit: 1gbit, 500mbit)", text));
  }
  uint64_t bits = std::stoull(text.substr(0, digits)) * scale;
  if (bits < 1000 * 1000 || bits > 400ULL * 1000 * 1000 * 1000) {
    return Invalid(fmt::format("--link: {} is outside 1mbit..400gbit", text));
  }
  return bits;
}

std::string BurstFor(uint64_t bits_per_s) {
  return bits_per_s >= 10ULL * 1000 * 1000 * 1000 ? "4mb" : "256kb";
}

Result<std::vector<HostMount>> ParseGpuMounts(const std::string& text) {
  std::vector<HostMount> mounts;
  for (const auto& item : SplitList(text)) {
    size_t eq = item.find('=');
    size_t colon = item.find(':', eq == std::string::npos ? 0 : eq);
    if (eq == std::string::npos || colon == std::string::npos || colon == eq + 1 ||
        colon + 1 >= item.size() || item[colon + 1] != '/') {
      return Invalid(fmt::format(
          "--gpu-mounts: '{}' is not NODE_ID=HOST:/absolute/mount (HOST 'local' for this machine)",
          item));
    }
    HostMount m;
    ASSIGN_OR_RETURN(m.node_id, ParseId(item.substr(0, eq), "--gpu-mounts"));
    m.host = item.substr(eq + 1, colon - eq - 1);
    m.mount = item.substr(colon + 1);
    for (const auto& other : mounts) {
      if (other.node_id == m.node_id) {
        return Invalid(fmt::format("--gpu-mounts: node {} is listed twice", m.node_id));
      }
    }
    mounts.push_back(std::move(m));
  }
  if (mounts.empty()) return Invalid("--gpu-mounts: no GPU node given");
  return mounts;
}

Result<std::vector<uint64_t>> ParseNodeIds(const std::string& text) {
  std::vector<uint64_t> ids;
  for (const auto& item : SplitList(text)) {
    ASSIGN_OR_RETURN(uint64_t id, ParseId(item, "--storage-node-ids"));
    ids.push_back(id);
  }
  if (ids.empty()) return Invalid("--storage-node-ids: no storage node given");
  return ids;
}

Result<Tier0Plan> MakePlan(const Tier0Options& opts) {
  Tier0Plan plan;
  plan.quick = opts.quick;
  plan.keep = opts.keep;
  plan.hosts = opts.hosts;
  plan.out = opts.out;
  if (opts.hosts) {
    if (opts.meta.empty() || opts.secret_file.empty() || opts.gpu_mounts.empty() ||
        opts.storage_node_ids.empty()) {
      return Invalid("--hosts needs --meta, --secret-file, --gpu-mounts and --storage-node-ids");
    }
    ASSIGN_OR_RETURN(plan.mounts, ParseGpuMounts(opts.gpu_mounts));
    ASSIGN_OR_RETURN(plan.storage_node_ids, ParseNodeIds(opts.storage_node_ids));
    for (uint64_t id : plan.storage_node_ids) {
      for (const auto& m : plan.mounts) {
        if (m.node_id == id) {
          return Invalid(fmt::format("node {} is both a GPU node and a storage node", id));
        }
      }
    }
    plan.meta = opts.meta;
    plan.secret_file = opts.secret_file;
    plan.remote_t0fs = opts.remote_t0fs;
    plan.gpu_nodes = static_cast<uint32_t>(plan.mounts.size());
    plan.storage_nodes = static_cast<uint32_t>(plan.storage_node_ids.size());
  } else {
    if (opts.gpu_nodes < 1 || opts.gpu_nodes > 32) return Invalid("--gpu-nodes must be 1..32");
    if (opts.storage_nodes < 1 || opts.storage_nodes > 32) {
      return Invalid("--storage-nodes must be 1..32");
    }
    plan.gpu_nodes = opts.gpu_nodes;
    plan.storage_nodes = opts.storage_nodes;
  }
  // In --hosts mode the link is only used for the limit estimate.
  if (!opts.link.empty()) {
    ASSIGN_OR_RETURN(plan.link_bits_per_s, ParseLinkRate(opts.link));
    plan.link = opts.link;
    plan.link_burst = BurstFor(plan.link_bits_per_s);
  } else if (!opts.hosts) {
    return Invalid("--link: a rate is needed (1gbit, 10gbit)");
  }

  ASSIGN_OR_RETURN(plan.size, ParseSizeOption("--size", opts.size.empty()
                                                            ? (opts.quick ? "8M" : "1G")
                                                            : opts.size));
  plan.threads = opts.threads != 0 ? opts.threads : (opts.quick ? 2 : 4);
  if (plan.threads > 64) return Invalid("--threads must be 1..64");
  if (plan.size < plan.threads * (1ULL << 20)) {
    return Invalid(fmt::format("--size must be at least 1 MiB per thread ({} MiB with {} threads)",
                               plan.threads, plan.threads));
  }
  ASSIGN_OR_RETURN(plan.runtime_s, ParseSecondsOption("--runtime", opts.runtime.empty()
                                                                       ? (opts.quick ? "1s" : "10s")
                                                                       : opts.runtime));
  if (plan.runtime_s <= 0 || plan.runtime_s > 3600) return Invalid("--runtime must be in (0, 1h]");
  plan.ramp_s = opts.quick ? 0 : 1;
  plan.rand_iodepth = opts.quick ? 4 : 16;
  // The AI patterns scale with the dataset; --quick also trims their threads
  // and file counts (256 shards of a few MiB are mostly per-file overhead).
  // The seed patterns at full width need at least 2 GiB (sharded training:
  // 32 threads x 64 files x 1 MiB blocks); --quick: 16 MiB blocks x 4 threads.
  plan.ai_size = opts.quick ? 64ULL << 20 : std::max<uint64_t>(plan.size, 2ULL << 30);
  plan.ai_threads = opts.quick ? 4 : 0;
  plan.ai_files = opts.quick ? 4 : 0;
  ASSIGN_OR_RETURN(plan.chunk_size, ParseSizeOption("--chunk-size", opts.chunk_size));

  plan.mlperf_scale = opts.mlperf_scale != 0 ? opts.mlperf_scale : (opts.quick ? 4096 : 64);
  plan.mlperf_max = opts.mlperf_max != 0 ? opts.mlperf_max : (opts.quick ? 4 : 16);
  if (plan.mlperf_scale > 65536) return Invalid("--mlperf-scale must be 1..65536");
  if (plan.mlperf_max > 1024) return Invalid("--mlperf-max must be 1..1024");
  // unet3d: batch 7. The largest probe must still get `mlperf_steps` steps
  // per epoch: with fewer, the first (unmeasured) step's prefetch hides the
  // reads of the rest and AU says nothing about the storage.
  plan.mlperf_steps = opts.quick ? 2 : 6;
  plan.mlperf_files = plan.mlperf_steps * 7 * plan.mlperf_max;
  return plan;
}

}  // namespace t0fs::bench::tier0
