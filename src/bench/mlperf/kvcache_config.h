// The KV-cache workload's constants (spec §4): model geometry (bytes per
// token = layers·kv_heads·head_dim·2 (K and V)·2 (fp16)), the CLOSED options
// of the rules (Table KVCache-1), the user personas and QoS mix.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "bench/pattern.h"
#include "common/status.h"

namespace t0fs::bench::mlperf {

struct KvModel {
  std::string name;
  uint32_t layers = 0, kv_heads = 0, head_dim = 0;
  uint64_t BytesPerToken() const { return uint64_t{layers} * kv_heads * head_dim * 2 * 2; }
};
Result<KvModel> LookupKvModel(std::string_view name);

enum class Generation { kNone, kFast, kRealistic };  // 0, 2 ms, 30 ms per token
Result<Generation> ParseGeneration(std::string_view text);
double SecondsPerToken(Generation g);
std::string_view GenerationName(Generation g);

struct KvOption {
  int number = 1;
  std::string model;
  uint32_t users = 0;          // per client
  double duration_s = 300;
  double gpu_gb = 0, cpu_gb = 0;
  uint32_t max_concurrent_allocs = 16;
  Generation generation = Generation::kNone;
};
// CLOSED options 1 (max storage stress), 2 (storage throughput, 4 GB CPU
// tier), 3 (large model).
Result<KvOption> ClosedOption(int number);

struct Persona {
  const char* name;
  uint32_t context_min, context_max;       // tokens
  uint32_t generation_min, generation_max;
  double think_min, think_max;              // seconds
};
const std::array<Persona, 3>& Personas();

struct UserProfile {
  uint32_t id = 0;
  uint32_t persona = 0;
  uint32_t context = 0;     // tokens (the user's maximum)
  uint32_t generation = 0;
  double think_s = 0;
  int priority = 1;         // 3 interactive (15 %), 2 responsive (35 %), 1 batch (50 %)
};
std::vector<UserProfile> MakeUsers(uint32_t count, Rng& rng);
double UniformReal(Rng& rng, double lo, double hi);
uint64_t UniformInt(Rng& rng, uint64_t lo, uint64_t hi);  // inclusive

inline constexpr uint32_t kMaxWorkers = 500;
inline constexpr uint32_t kDecodeBatch = 32;
inline constexpr uint32_t kPrefillOnlyContext = 10000;
inline constexpr double kContinueConversation = 0.8;
inline constexpr uint32_t kMaxTurnsPerConversation = 10;
inline constexpr double kSystemPromptProbability = 0.2;
inline constexpr double kTierFill = 0.8;

}  // namespace t0fs::bench::mlperf
