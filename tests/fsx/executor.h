// Applies one op to the file under test and to the model. The model moves
// only by what the file system was allowed to do: where Linux permits two
// answers (copy_file_range of overlapping ranges: EINVAL or a copy) the
// executor accepts either and updates the model to match; fallocate modes
// the policy excludes, or that answered EOPNOTSUPP under `auto`, are
// skipped (the op stays in the sequence, so seeds replay the same).
#pragma once

#include <array>
#include <cstdint>
#include <optional>

#include "config.h"
#include "failure.h"
#include "model.h"
#include "op.h"
#include "test_file.h"
#include "uring_batch.h"

namespace t0fs::fsx {

class Executor {
 public:
  // `ring` is used by kUringBatch ops only (may be null in other modes).
  Executor(const Config& config, TestFile& file, Ring* ring);

  std::optional<Failure> Run(const Op& op, Model& model);
  uint64_t skipped() const { return skipped_; }

 private:
  std::optional<Failure> Write(const Op& op, Model& model);
  std::optional<Failure> Read(const Op& op, const Model& model);
  std::optional<Failure> MapWrite(const Op& op, Model& model);
  std::optional<Failure> MapRead(const Op& op, const Model& model);
  std::optional<Failure> Truncate(const Op& op, Model& model);
  std::optional<Failure> Fallocate(const Op& op, Model& model);
  std::optional<Failure> CopyRange(const Op& op, Model& model);
  std::optional<Failure> Sync(const Op& op);
  std::optional<Failure> Reopen(const Op& op, Model& model);
  std::optional<Failure> Rewrite(const Op& op, Model& model);
  // Whether the policy lets `mode` run (and it has not answered EOPNOTSUPP).
  bool FallocAllowed(FallocMode mode) const;

  const Config& config_;
  TestFile& file_;
  Ring* ring_;
  AlignedBuffer buffer_;  // write patterns (aligned for O_DIRECT)
  std::vector<uint8_t> read_;
  std::array<bool, static_cast<size_t>(FallocMode::kCount)> falloc_refused_{};
  uint64_t skipped_ = 0;
};

}  // namespace t0fs::fsx
