#include "bench/mlperf/kvcache_config.h"

#include <fmt/format.h>

namespace t0fs::bench::mlperf {

Result<KvModel> LookupKvModel(std::string_view name) {
  if (name == "llama3.1-8b") return KvModel{"llama3.1-8b", 32, 8, 128};
  if (name == "llama3.1-70b-instruct" || name == "llama3.1-70b") {
    return KvModel{"llama3.1-70b-instruct", 80, 8, 128};
  }
  return Status(StatusCode::kInvalidArgument,
                fmt::format("unknown --model '{}' (llama3.1-8b, llama3.1-70b-instruct)", name));
}

Result<Generation> ParseGeneration(std::string_view text) {
  if (text == "none") return Generation::kNone;
  if (text == "fast") return Generation::kFast;
  if (text == "realistic") return Generation::kRealistic;
  return Status(StatusCode::kInvalidArgument,
                fmt::format("unknown --generation '{}' (none, fast, realistic)", text));
}

double SecondsPerToken(Generation g) {
  switch (g) {
    case Generation::kNone: return 0;
    case Generation::kFast: return 0.002;
    case Generation::kRealistic: return 0.030;
  }
  return 0;
}

std::string_view GenerationName(Generation g) {
  switch (g) {
    case Generation::kNone: return "none";
    case Generation::kFast: return "fast";
    case Generation::kRealistic: return "realistic";
  }
  return "?";
}

Result<KvOption> ClosedOption(int number) {
  switch (number) {
    case 1: return KvOption{1, "llama3.1-8b", 200, 300, 0, 0, 16, Generation::kNone};
    case 2: return KvOption{2, "llama3.1-8b", 100, 300, 0, 4, 16, Generation::kNone};
    case 3: return KvOption{3, "llama3.1-70b-instruct", 70, 300, 0, 0, 4, Generation::kNone};
  }
  return Status(StatusCode::kInvalidArgument, "--option must be 1, 2, 3 or all");
}

const std::array<Persona, 3>& Personas() {
  static const std::array<Persona, 3> kPersonas = {{
      {"chatbot", 512, 4096, 50, 200, 0.1, 0.5},
      {"coding", 4096, 25000, 100, 500, 0.2, 1.0},
      {"document", 4096, 16384, 200, 800, 0.3, 1.5},
  }};
  return kPersonas;
}

double UniformReal(Rng& rng, double lo, double hi) {
  return lo + (hi - lo) * (static_cast<double>(rng.Next() >> 11) / 9007199254740992.0);
}

uint64_t UniformInt(Rng& rng, uint64_t lo, uint64_t hi) {
  return hi <= lo ? lo : lo + rng.Below(hi - lo + 1);
}

std::vector<UserProfile> MakeUsers(uint32_t count, Rng& rng) {
  std::vector<UserProfile> users;
  for (uint32_t id = 0; id < count; ++id) {
    UserProfile u;
    u.id = id;
    u.persona = static_cast<uint32_t>(rng.Below(3));
    const Persona& p = Personas()[u.persona];
    u.context = static_cast<uint32_t>(UniformInt(rng, p.context_min, p.context_max));
    u.generation = static_cast<uint32_t>(UniformInt(rng, p.generation_min, p.generation_max));
    u.think_s = UniformReal(rng, p.think_min, p.think_max);
    double q = UniformReal(rng, 0, 1);
    u.priority = q < 0.15 ? 3 : q < 0.50 ? 2 : 1;
    users.push_back(u);
  }
  return users;
}

}  // namespace t0fs::bench::mlperf
