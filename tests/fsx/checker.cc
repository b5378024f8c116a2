#include "checker.h"

#include <errno.h>
#include <fmt/format.h>
#include <sys/stat.h>

namespace t0fs::fsx {

Checker::Checker(const Config& config, TestFile& file)
    : config_(config), file_(file), rng_(config.seed ^ 0x636865636bULL) {}

std::optional<Failure> Checker::AfterStep(const Op& op, const Model& model, bool whole_file) {
  if (auto failure = CheckSize(op, model)) return failure;
  // Read a little past the end of file too: nothing may come back from there.
  const uint64_t past_end = 4096;
  if (whole_file || config_.check == CheckMode::kFull) {
    return CheckRange(0, model.size() + past_end, model);
  }
  for (const Range& range : TouchedRanges(op)) {
    if (auto failure = CheckRange(range.offset, range.length, model)) return failure;
  }
  const uint64_t offset = rng_() % (model.size() + 1);
  const uint64_t length = 1 + rng_() % config_.max_op_len;
  return CheckRange(offset, length, model);
}

std::optional<Failure> Checker::CheckSize(const Op& op, const Model& model) {
  struct stat st {};
  if (::fstat(file_.fd(0), &st) != 0) return SyscallFailure("check: fstat(fd0)", errno);
  if (static_cast<uint64_t>(st.st_size) != model.size()) {
    return Fail(fmt::format("check: fstat(fd0) size 0x{:x}, the model's is 0x{:x}", st.st_size,
                            model.size()));
  }
  if (op.kind == OpKind::kUringBatch || rng_() % 16 == 0) {
    if (::stat(file_.path().c_str(), &st) != 0) return SyscallFailure("check: stat(path)", errno);
    if (static_cast<uint64_t>(st.st_size) != model.size()) {
      return Fail(fmt::format("check: stat(path) size 0x{:x}, the model's is 0x{:x}", st.st_size,
                              model.size()));
    }
  }
  return std::nullopt;
}

std::optional<Failure> Checker::CheckRange(uint64_t offset, uint64_t length, const Model& model) {
  if (auto failure = file_.ReadRange(0, offset, length, model.size(), read_)) {
    failure->message = "check: " + failure->message;
    return failure;
  }
  bytes_checked_ += read_.size();
  return CompareBytes(fmt::format("check: read of 0x{:x}..0x{:x}", offset, offset + length), offset,
                      model.Read(offset, length), read_);
}

}  // namespace t0fs::fsx
