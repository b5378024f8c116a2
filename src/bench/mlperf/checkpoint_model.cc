#include "bench/mlperf/checkpoint_model.h"

#include <cmath>

#include <fmt/format.h>

namespace t0fs::bench::mlperf {

Result<LlmConfig> LookupLlm(std::string_view name) {
  //              name          L    H      F      A    KV  V       TP PP  DP  ZeRO
  static const LlmConfig kModels[] = {
      {"llama3-8b", 32, 4096, 14336, 32, 8, 128256, 1, 1, 8, 3},
      {"llama3-70b", 80, 8192, 28672, 128, 8, 128256, 8, 1, 8, 3},
      {"llama3-405b", 126, 16384, 53248, 128, 8, 128256, 8, 32, 2, 1},
      {"llama3-1t", 128, 25872, 98304, 192, 32, 128256, 8, 64, 2, 1},
  };
  for (const auto& m : kModels) {
    if (m.name == name) return m;
  }
  return Status(StatusCode::kInvalidArgument,
                fmt::format("unknown --model '{}' (llama3-8b, llama3-70b, llama3-405b, llama3-1t)",
                            name));
}

uint64_t NumParameters(const LlmConfig& m) {
  const uint64_t h = m.hidden, kv = (m.hidden / m.heads) * m.kv_heads;
  const uint64_t per_layer = h + h * (h + 2 * kv) + h * h + h + 3 * m.ffn * h;
  return 2 * m.vocab * h + m.layers * per_layer + h;
}

// fp16 bytes of layer `index` held by one rank.
static uint64_t LayerBytes(const LlmConfig& m, uint64_t index, uint32_t tp, uint64_t shard) {
  const uint64_t h = m.hidden, f = m.ffn, kv = (m.hidden / m.heads) * m.kv_heads;
  if (index == 0 || index == m.layers + 1) return m.vocab * h / tp / shard * 2;
  if (index == m.layers + 2) return h / shard * 2;
  return (h / shard + h * (h + 2 * kv) / tp / shard + h * h / tp / shard + h / shard +
          2 * h * f / tp / shard + h * f / tp / shard) *
         2;
}

uint64_t CheckpointPlan::RankBytes(uint32_t rank) const {
  uint64_t sum = 0;
  for (const auto& f : files[rank]) sum += f.bytes;
  return sum;
}

Result<CheckpointPlan> PlanCheckpoint(const LlmConfig& llm, uint32_t ranks, bool subset,
                                      OneTSize one_t) {
  CheckpointPlan plan;
  plan.llm = llm;
  plan.tp = llm.tp;
  plan.pp = llm.pp;
  const uint32_t mp = llm.tp * llm.pp;
  if (ranks == 0) ranks = llm.closed_ranks();
  plan.ranks = ranks;
  plan.subset = subset;
  if (subset) {
    plan.dp = llm.dp;
    if (ranks > llm.closed_ranks()) {
      return Status(StatusCode::kInvalidArgument,
                    fmt::format("--subset runs at most the {} ranks of the full layout",
                                llm.closed_ranks()));
    }
  } else {
    if (ranks % mp != 0) {
      return Status(StatusCode::kInvalidArgument,
                    fmt::format("{} needs --ranks to be a multiple of TP×PP = {} (CLOSED: {}); "
                                "or use --subset",
                                llm.name, mp, llm.closed_ranks()));
    }
    plan.dp = ranks / mp;
  }
  if (llm.zero_stage == 3 && llm.pp != 1) {
    return Status(StatusCode::kInternal, "ZeRO-3 needs PP = 1");
  }
  const uint64_t world = static_cast<uint64_t>(plan.dp) * mp;
  const uint64_t params = NumParameters(llm);
  const uint64_t n = params / world;
  const uint64_t optim = (3 * n + 15 * llm.hidden) * 4;
  double model_scale = 1, optim_scale = 1;
  if (llm.name == "llama3-1t" && one_t == OneTSize::kTable) {
    // mlpstorage LLM_SIZE_BY_RANK: (2571, 15426) GiB, model and optimizer.
    model_scale = 2571.0 * 1073741824.0 / (static_cast<double>(params) * 2);
    optim_scale = 15426.0 * 1073741824.0 / (static_cast<double>(optim) * world);
  }
  auto scaled = [](uint64_t bytes, double s) {
    return s == 1 ? bytes : static_cast<uint64_t>(std::llround(static_cast<double>(bytes) * s));
  };
  const uint64_t shard = llm.zero_stage >= 3 ? plan.dp : 1;
  const uint64_t per_stage = llm.layers / llm.pp, rem = llm.layers % llm.pp;
  plan.files.resize(ranks);
  for (uint32_t rank = 0; rank < ranks; ++rank) {
    const uint32_t tp_rank = rank % llm.tp;
    (void)tp_rank;
    const uint32_t pp_rank = (rank / llm.tp) % llm.pp;
    const uint32_t dp_rank = rank / mp;
    const uint32_t mp_rank = rank % mp;
    uint64_t count = per_stage + (pp_rank < rem ? 1 : 0);
    uint64_t start = 1 + pp_rank * per_stage + std::min<uint64_t>(pp_rank, rem);
    uint64_t end = start + count - 1;
    if (pp_rank == 0) start = 0;
    if (pp_rank == llm.pp - 1) end = llm.layers + 2;
    auto& files = plan.files[rank];
    std::string prefix = fmt::format("zero_pp_rank_{}_mp_rank_{}", dp_rank, mp_rank);
    if (llm.zero_stage >= 3) {
      uint64_t bytes = 0;
      for (uint64_t layer = start; layer <= end; ++layer) {
        bytes += LayerBytes(llm, layer, llm.tp, shard);
      }
      files.push_back({prefix + "_model_states.pt", scaled(bytes, model_scale), true});
    } else if (dp_rank == 0) {
      for (uint64_t layer = start; layer <= end; ++layer) {
        files.push_back({fmt::format("layer_{}-model_{}_model_states.pt", layer, mp_rank),
                         scaled(LayerBytes(llm, layer, llm.tp, 1), model_scale), true});
      }
    }
    files.push_back({prefix + "_optim_states.pt", scaled(optim, optim_scale), false});
    for (const auto& f : files) (f.model ? plan.model_bytes : plan.optimizer_bytes) += f.bytes;
  }
  return plan;
}

}  // namespace t0fs::bench::mlperf
