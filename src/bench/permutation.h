// Permutation: a pseudo-random bijection of [0, n) computed on the fly
// (a 4-round Feistel network on the next even power of two, cycle-walked
// into range), so random I/O touches every block exactly once per pass, as
// fio's random map and elbencho's full-coverage generator do, with O(1)
// memory whatever the dataset size.
// Thread safety: immutable after construction.
#pragma once

#include <cstdint>

namespace t0fs::bench {

class Permutation {
 public:
  Permutation(uint64_t n, uint64_t seed);
  uint64_t size() const { return n_; }
  // The image of `index` (< size()).
  uint64_t operator()(uint64_t index) const;

 private:
  uint64_t Encrypt(uint64_t x) const;

  uint64_t n_;
  unsigned half_bits_;
  uint64_t half_mask_;
  uint64_t keys_[4];
};

}  // namespace t0fs::bench
