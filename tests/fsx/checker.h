// The check after every step: the size by fstat (and by stat of the path
// after one step in 16 and after every io_uring batch) equals the model's, and the
// content does — the whole file (CheckMode::kFull), or the ranges the op
// touched plus one random range (kRange, with the whole file when asked).
// Its random choices come from a stream of its own, so the check mode never
// changes the op sequence of a seed.
#pragma once

#include <cstdint>
#include <optional>
#include <random>
#include <vector>

#include "config.h"
#include "failure.h"
#include "model.h"
#include "op.h"
#include "test_file.h"

namespace t0fs::fsx {

class Checker {
 public:
  Checker(const Config& config, TestFile& file);

  std::optional<Failure> AfterStep(const Op& op, const Model& model, bool whole_file);
  uint64_t bytes_checked() const { return bytes_checked_; }

 private:
  std::optional<Failure> CheckSize(const Op& op, const Model& model);
  std::optional<Failure> CheckRange(uint64_t offset, uint64_t length, const Model& model);

  const Config& config_;
  TestFile& file_;
  std::mt19937_64 rng_;
  std::vector<uint8_t> read_;
  uint64_t bytes_checked_ = 0;
};

}  // namespace t0fs::fsx
