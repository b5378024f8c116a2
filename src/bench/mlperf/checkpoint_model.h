// The checkpointing workload's byte counts and file layout (spec §3.1), from
// DLIO's size model: parameters
//   params = 2·V·H + L·(H + H·(H + 2·kv) + H² + H + 3·F·H) + H,  kv = (H / A)·KV
// (integer head size); model state fp16 (2 B/param) split by tensor (TP)
// and pipeline (PP) parallelism, and by data parallelism (DP) under ZeRO-3;
// optimizer state fp32 per rank (3n + 15H)·4 B, n = params // (DP·TP·PP).
// Files per checkpoint, in <folder>/<model>/global_epoch1_step<k>/:
//   ZeRO-3 (8B, 70B): zero_pp_rank_<dp>_mp_rank_<mp>_{model,optim}_states.pt per rank;
//   ZeRO-1 (405B, 1T): layer_<i>-model_<mp>_model_states.pt per layer owned, by
//   DP-rank-0 ranks only; zero_pp_rank_<dp>_mp_rank_<mp>_optim_states.pt by every rank.
// Layers 1..L are split over PP stages (remainder to the first stages); stage 0
// also owns layer 0 (embedding V·H/TP), the last stage L+1 (lm_head) and L+2 (norm H).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace t0fs::bench::mlperf {

struct LlmConfig {
  std::string name;
  uint64_t layers = 0, hidden = 0, ffn = 0, heads = 0, kv_heads = 0, vocab = 128256;
  uint32_t tp = 1, pp = 1, dp = 1;  // CLOSED parallelism (ranks = tp·pp·dp)
  int zero_stage = 3;
  uint32_t closed_ranks() const { return tp * pp * dp; }
};

Result<LlmConfig> LookupLlm(std::string_view name);
uint64_t NumParameters(const LlmConfig& llm);

// llama3-1t: DLIO's formula (≈15,427 GiB; default) or mlpstorage's table
// (2,571 + 15,426 GiB ≈ 18 TB): the two disagree (spec §3.1).
enum class OneTSize { kFormula, kTable };

struct CheckpointFile {
  std::string name;
  uint64_t bytes = 0;
  bool model = false;  // model state (else optimizer)
};

struct CheckpointPlan {
  LlmConfig llm;
  uint32_t ranks = 0;          // ranks that run
  uint32_t tp = 1, pp = 1, dp = 1;
  bool subset = false;         // ranks 0..ranks-1 of the full (CLOSED) layout
  std::vector<std::vector<CheckpointFile>> files;  // per rank
  uint64_t model_bytes = 0;
  uint64_t optimizer_bytes = 0;
  uint64_t total_bytes() const { return model_bytes + optimizer_bytes; }
  uint64_t RankBytes(uint32_t rank) const;
};

// `ranks` = 0 means the CLOSED count. Without `subset`, ranks must be a
// multiple of TP·PP (DP = ranks / (TP·PP)); with it, the layout is the full
// CLOSED one and only ranks 0..ranks-1 write.
Result<CheckpointPlan> PlanCheckpoint(const LlmConfig& llm, uint32_t ranks, bool subset,
                                      OneTSize one_t = OneTSize::kFormula);

}  // namespace t0fs::bench::mlperf
