// Produces the op sequence of a run: weighted kinds (metadata-heavy ones
// rarer), offsets biased to the end of file and to page/64 KiB/1 MiB
// boundaries, lengths mostly small. Depends only on the seed, the mode and
// what the model says (size, whether a second descriptor is open), never on
// what the file system answered: the same seed replays the same ops.
#pragma once

#include <array>
#include <cstdint>
#include <random>

#include "config.h"
#include "op.h"

namespace t0fs::fsx {

class OpGenerator {
 public:
  explicit OpGenerator(const Config& config);

  Op Next(uint64_t step, uint64_t size, bool second_open);

 private:
  uint64_t Uniform(uint64_t low, uint64_t high);  // inclusive
  bool Chance(unsigned percent) { return Uniform(0, 99) < percent; }
  OpKind PickKind();
  uint64_t PickOffset(uint64_t size);
  uint64_t PickLength();
  // Offset in [0, size) when there is data, else anywhere.
  uint64_t PickOffsetInFile(uint64_t size);
  // Cuts `length` so that [offset, offset + length) stays below max-size.
  uint64_t Fit(uint64_t offset, uint64_t length) const;
  // Direct mode: 4096-aligned offset and length (whole blocks), below max-size.
  void AlignForDirect(uint64_t& offset, uint64_t& length) const;
  void MakeBatch(Op& op, uint64_t size);

  const Config config_;
  std::mt19937_64 rng_;
  std::array<unsigned, static_cast<size_t>(OpKind::kCount)> weights_{};
  unsigned weight_total_ = 0;
};

}  // namespace t0fs::fsx
