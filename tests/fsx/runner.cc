#include "runner.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>

#include "checker.h"
#include "executor.h"
#include "generator.h"
#include "mmap_io.h"
#include "pattern.h"
#include "test_file.h"
#include "uring_batch.h"

namespace t0fs::fsx {

namespace {

constexpr uint64_t kWholeFileEvery = 1000;
constexpr uint64_t kProgressEvery = 10000;
constexpr size_t kHistoryShown = 20;

// The ranges op `op` filled with its own pattern (pattern.h).
std::vector<Range> PatternRanges(const Op& op) {
  switch (op.kind) {
    case OpKind::kWrite:
    case OpKind::kMapWrite:
      return {{op.offset, op.length}};
    case OpKind::kRewrite:
      return {{0, op.length}};
    case OpKind::kUringBatch: {
      std::vector<Range> ranges;
      for (const UringIo& io : op.batch) {
        if (io.write) ranges.push_back({io.offset, io.length});
      }
      return ranges;
    }
    default:
      return {};
  }
}

}  // namespace

std::string Runner::Options() const {
  std::string without;
  for (OpKind kind : config_.without)
    without += fmt::format("{}{}", without.empty() ? "" : ",", KindName(kind));
  return fmt::format(
      "--seed {} --mode {} --ops {} --max-size {} --max-op-len {} --check {} "
      "--fallocate-modes {}{}{}",
      config_.seed, ModeName(config_.mode), config_.ops, config_.max_size, config_.max_op_len,
      config_.check == CheckMode::kFull ? "full" : "range",
      config_.falloc == FallocPolicy::kAuto  ? "auto"
      : config_.falloc == FallocPolicy::kAll ? "all"
                                             : "basic",
      without.empty() ? "" : " --without ", without);
}

int Runner::Run() {
  fmt::print("fsx: seed {} mode {} ops {} file {} ({})\n", config_.seed, ModeName(config_.mode),
             config_.ops, config_.path, Options());
  std::fflush(stdout);
  InstallSigbusHandler();
  TestFile file(config_.path, config_.mode);
  if (auto failure = file.OpenMain(true)) {
    fmt::print(stderr, "fsx: cannot start: {}\n", failure->message);
    return 2;
  }
  Ring ring;
  if (config_.mode == IoMode::kUring) {
    if (int err = ring.Init()) {
      fmt::print(stderr, "fsx: cannot start: io_uring_queue_init: {}\n", strerror(err));
      return 2;
    }
  }
  Model model;
  OpGenerator generator(config_);
  Executor executor(config_, file, &ring);
  Checker checker(config_, file);
  history_.reserve(config_.ops);

  start_ = std::chrono::steady_clock::now();
  const uint64_t last =
      config_.replay_to > 0 ? std::min(config_.replay_to, config_.ops) : config_.ops;
  for (uint64_t step = 1; step <= last; ++step) {
    Op op = generator.Next(step, model.size(), file.second_open());
    op.size_before = model.size();
    if (config_.log) fmt::print("{}\n", Describe(op));
    history_.push_back(op);
    ++counts_[static_cast<size_t>(op.kind)];
    const auto op_start = std::chrono::steady_clock::now();
    auto failure = executor.Run(op, model);
    const auto check_start = std::chrono::steady_clock::now();
    if (!failure) {
      failure = checker.AfterStep(op, model, step % kWholeFileEvery == 0 || step == last);
    }
    seconds_[static_cast<size_t>(op.kind)] +=
        std::chrono::duration<double>(check_start - op_start).count();
    check_seconds_ +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - check_start).count();
    if (failure) {
      ReportFailure(step, *failure, Seconds());
      PrintSummary(false, step, Seconds(), executor.skipped(), checker.bytes_checked());
      return 1;
    }
    if (!config_.quiet && step % kProgressEvery == 0) {
      fmt::print("fsx: step {} size 0x{:x}\n", step, model.size());
      std::fflush(stdout);
    }
  }
  // close(2) is where a file system may report a write it failed to store.
  std::optional<Failure> failure = file.CloseSecond();
  if (!failure) failure = file.CloseMain();
  if (failure) {
    ReportFailure(last, *failure, Seconds());
    PrintSummary(false, last, Seconds(), executor.skipped(), checker.bytes_checked());
    return 1;
  }
  const double seconds = Seconds();
  if (last < config_.ops) fmt::print("fsx: stopped after step {} (--replay-to)\n", last);
  PrintSummary(true, last, seconds, executor.skipped(), checker.bytes_checked());
  return 0;
}

std::string Runner::WhoWrote(const Failure& failure) const {
  if (!failure.bad_offset || failure.actual.empty()) return "";
  const uint64_t offset = *failure.bad_offset;
  if (std::all_of(failure.actual.begin(), failure.actual.end(), [](uint8_t b) { return b == 0; })) {
    return fmt::format("the bytes at 0x{:x} are zeros: a hole where the model has data", offset);
  }
  for (auto it = history_.rbegin(); it != history_.rend(); ++it) {
    for (const Range& range : PatternRanges(*it)) {
      if (offset < range.offset || offset >= range.offset + range.length) continue;
      const uint64_t span =
          std::min<uint64_t>(failure.actual.size(), range.offset + range.length - offset);
      bool match = true;
      for (uint64_t idx = 0; idx < span && match; ++idx) {
        match = PatternByte(it->step, offset + idx) == failure.actual[idx];
      }
      if (match) {
        return fmt::format("the {} wrong byte(s) at 0x{:x} are what step {} wrote: {}", span,
                           offset, it->step, Describe(*it));
      }
    }
  }
  return fmt::format("the bytes at 0x{:x} match no write of the history (copies are not traced)",
                     offset);
}

std::string Runner::ReplayCommand(uint64_t step) const {
  return fmt::format("t0fs_fsx {} {} --replay-to {} --log", config_.path, Options(), step);
}

double Runner::Seconds() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

void Runner::ReportFailure(uint64_t step, const Failure& failure, double seconds) const {
  const Op* op = step > 0 && step <= history_.size() ? &history_[step - 1] : nullptr;
  fmt::print("fsx: FAILED at step {} of {} after {:.1f} s (seed {}, mode {}, file {})\n", step,
             config_.ops, seconds, config_.seed, ModeName(config_.mode), config_.path);
  if (op) fmt::print("fsx: op: {}\n", Describe(*op));
  fmt::print("fsx: {}\n", failure.message);
  if (!failure.detail.empty()) fmt::print("{}", failure.detail);
  if (std::string who = WhoWrote(failure); !who.empty()) fmt::print("fsx: {}\n", who);
  const size_t shown = std::min(history_.size(), kHistoryShown + 1);
  fmt::print("fsx: the last {} ops (the failing one last):\n", shown);
  for (size_t idx = history_.size() - shown; idx < history_.size(); ++idx) {
    fmt::print("  {}\n", Describe(history_[idx]));
  }
  fmt::print("fsx: replay: {}\n", ReplayCommand(step));
  std::fflush(stdout);
}

void Runner::PrintSummary(bool passed, uint64_t steps, double seconds, uint64_t skipped,
                          uint64_t bytes_checked) const {
  std::string kinds;
  for (size_t kind = 0; kind < counts_.size(); ++kind) {
    if (counts_[kind] == 0) continue;
    kinds += fmt::format("{}{} {} ({:.2f} s)", kinds.empty() ? "" : ", ",
                         KindName(static_cast<OpKind>(kind)), counts_[kind], seconds_[kind]);
  }
  fmt::print(
      "fsx: {} {} ops in {:.1f} s (seed {}, mode {}): {}; {} skipped; checks {:.2f} s, {} MiB\n",
      passed ? "passed" : "failed after", steps, seconds, config_.seed, ModeName(config_.mode),
      kinds, skipped, check_seconds_, bytes_checked >> 20);
}

}  // namespace t0fs::fsx
