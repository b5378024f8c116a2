// Sample sizes as DLIO generates them (spec §2.2): a record is a 2-D uint8
// image of dim = int(sqrt(record_length)) per side; with a standard
// deviation, each file draws two sides max(int(N(dim, sd)), 1), sd =
// record_length_stdev / 2 / sqrt(record_length), from one stream seeded 10
// for the whole dataset (np.random.seed(10); np.random.normal(dim, sd, 2N)).
// The stream is numpy's legacy one, reproduced bit for bit: MT19937 and the
// polar Box-Muller gauss with its cached second value. File i takes draws
// 2i and 2i+1, whichever rank writes it, so sizes do not depend on the
// number of generating ranks.
// Thread safety: one instance per thread.
#pragma once

#include <cstdint>
#include <random>
#include <utility>

namespace t0fs::bench::mlperf {

// numpy.random.RandomState(seed).normal(loc, scale) draws, one by one.
class LegacyNormal {
 public:
  explicit LegacyNormal(uint32_t seed) : mt_(seed) {}
  double Next(double loc, double scale) { return loc + scale * Gauss(); }

 private:
  double Uniform();  // numpy's 53-bit double from two 32-bit outputs
  double Gauss();

  std::mt19937 mt_;
  bool has_gauss_ = false;
  double gauss_ = 0;
};

class RecordDims {
 public:
  static constexpr uint32_t kSeed = 10;
  RecordDims(double record_length, double record_length_stdev);
  uint64_t dimension() const { return dim_; }
  double dimension_stdev() const { return dim_stdev_; }
  // The sides of the next file (files in index order, from file 0).
  std::pair<uint64_t, uint64_t> Next();
  // Skips `files` files.
  void Skip(uint64_t files);

 private:
  uint64_t dim_;
  double dim_stdev_;
  LegacyNormal normal_;
};

}  // namespace t0fs::bench::mlperf
