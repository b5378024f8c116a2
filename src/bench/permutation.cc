#include "bench/permutation.h"

#include <bit>

#include "bench/pattern.h"

namespace t0fs::bench {

Permutation::Permutation(uint64_t n, uint64_t seed) : n_(n) {
  unsigned bits = n <= 4 ? 2 : static_cast<unsigned>(std::bit_width(n - 1));
  if (bits % 2 != 0) ++bits;
  half_bits_ = bits / 2;
  half_mask_ = (uint64_t{1} << half_bits_) - 1;
  for (int round = 0; round < 4; ++round) keys_[round] = Mix64(seed * 4 + round + 1);
}

uint64_t Permutation::Encrypt(uint64_t x) const {
  uint64_t left = x >> half_bits_;
  uint64_t right = x & half_mask_;
  for (uint64_t key : keys_) {
    uint64_t next = left ^ (Mix64(right ^ key) & half_mask_);
    left = right;
    right = next;
  }
  return (left << half_bits_) | right;
}

uint64_t Permutation::operator()(uint64_t index) const {
  // Cycle walking: the domain is < 4n, so this loops a few times on average.
  uint64_t x = Encrypt(index);
  while (x >= n_) x = Encrypt(x);
  return x;
}

}  // namespace t0fs::bench
