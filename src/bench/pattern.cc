#include "bench/pattern.h"

#include <algorithm>
#include <cstring>

namespace t0fs::bench {
namespace {

constexpr size_t kWordsPerUnit = kPatternUnit / sizeof(uint64_t);

// The 64 words of the unit starting at `unit_offset` (a multiple of kPatternUnit).
void UnitWords(uint64_t seed, uint64_t file_id, uint64_t unit_offset, uint64_t* words) {
  Rng rng(Mix64(seed ^ Mix64(file_id * 0x2545f4914f6cdd1dULL ^ unit_offset)));
  for (size_t idx = 0; idx < kWordsPerUnit; ++idx) words[idx] = rng.Next();
}

}  // namespace

void FillPattern(std::span<std::byte> buf, uint64_t seed, uint64_t file_id, uint64_t offset) {
  uint64_t words[kWordsPerUnit];
  size_t done = 0;
  while (done < buf.size()) {
    uint64_t pos = offset + done;
    uint64_t unit = pos - pos % kPatternUnit;
    size_t in_unit = static_cast<size_t>(pos - unit);
    size_t take = std::min(kPatternUnit - in_unit, buf.size() - done);
    UnitWords(seed, file_id, unit, words);
    std::memcpy(buf.data() + done, reinterpret_cast<const std::byte*>(words) + in_unit, take);
    done += take;
  }
}

std::optional<uint64_t> CheckPattern(std::span<const std::byte> buf, uint64_t seed,
                                     uint64_t file_id, uint64_t offset) {
  uint64_t words[kWordsPerUnit];
  size_t done = 0;
  while (done < buf.size()) {
    uint64_t pos = offset + done;
    uint64_t unit = pos - pos % kPatternUnit;
    size_t in_unit = static_cast<size_t>(pos - unit);
    size_t take = std::min(kPatternUnit - in_unit, buf.size() - done);
    UnitWords(seed, file_id, unit, words);
    const auto* want = reinterpret_cast<const std::byte*>(words) + in_unit;
    if (std::memcmp(buf.data() + done, want, take) != 0) {
      for (size_t idx = 0; idx < take; ++idx) {
        if (buf[done + idx] != want[idx]) return pos + idx;
      }
    }
    done += take;
  }
  return std::nullopt;
}

void FillRandom(std::span<std::byte> buf, uint64_t seed) {
  Rng rng(Mix64(seed));
  size_t idx = 0;
  for (; idx + 8 <= buf.size(); idx += 8) {
    uint64_t v = rng.Next();
    std::memcpy(buf.data() + idx, &v, 8);
  }
  for (; idx < buf.size(); ++idx) buf[idx] = static_cast<std::byte>(rng.Next());
}

void Scramble(std::span<std::byte> buf, uint64_t offset, uint64_t counter) {
  uint64_t stamp[2] = {Mix64(offset), counter};
  for (size_t pos = 0; pos + sizeof(stamp) <= buf.size(); pos += 4096) {
    std::memcpy(buf.data() + pos, stamp, sizeof(stamp));
    stamp[0] += 4096;
  }
}

}  // namespace t0fs::bench
