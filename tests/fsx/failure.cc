#include "failure.h"

#include <fmt/format.h>
#include <string.h>

#include <algorithm>

namespace t0fs::fsx {

Failure SyscallFailure(const std::string& what, int err) {
  const char* name = strerrorname_np(err);
  return Fail(fmt::format("{}: {} ({})", what, name ? name : std::to_string(err), strerror(err)));
}

namespace {

std::string HexRow(uint64_t file_offset, std::span<const uint8_t> bytes, uint64_t from, uint64_t to,
                   uint64_t mark) {
  std::string row;
  for (uint64_t idx = from; idx < to; ++idx) {
    row += idx == mark ? fmt::format("[{:02x}]", bytes[idx]) : fmt::format(" {:02x} ", bytes[idx]);
  }
  return fmt::format("0x{:08x} {}", file_offset + from, row);
}

}  // namespace

std::optional<Failure> CompareBytes(const std::string& what, uint64_t file_offset,
                                    std::span<const uint8_t> expected,
                                    std::span<const uint8_t> actual) {
  const uint64_t common = std::min(expected.size(), actual.size());
  auto [exp_it, act_it] =
      std::mismatch(expected.begin(), expected.begin() + common, actual.begin());
  if (exp_it == expected.begin() + common && expected.size() == actual.size()) return std::nullopt;

  Failure failure;
  const uint64_t first = exp_it - expected.begin();
  if (first == common) {
    failure.message = fmt::format("{}: {} bytes where the model has {} (offset 0x{:x})", what,
                                  actual.size(), expected.size(), file_offset);
    return failure;
  }
  uint64_t differing = 0, last = first;
  for (uint64_t idx = first; idx < common; ++idx) {
    if (expected[idx] != actual[idx]) {
      ++differing;
      last = idx;
    }
  }
  failure.message = fmt::format(
      "{}: content differs at file offset 0x{:x} (expected 0x{:02x}, got 0x{:02x}); {} bytes "
      "differ in 0x{:x}..0x{:x}",
      what, file_offset + first, expected[first], actual[first], differing, file_offset + first,
      file_offset + last + 1);
  const uint64_t from = first >= 16 ? first - 16 : 0;
  const uint64_t to = std::min(common, first + 32);
  for (uint64_t row = from; row < to; row += 16) {
    uint64_t row_end = std::min(to, row + 16);
    failure.detail += "  expected " + HexRow(file_offset, expected, row, row_end, first) + "\n";
    failure.detail += "  actual   " + HexRow(file_offset, actual, row, row_end, first) + "\n";
  }
  if (actual.size() != expected.size()) {
    failure.detail += fmt::format("  and {} bytes came back where the model has {}\n",
                                  actual.size(), expected.size());
  }
  failure.bad_offset = file_offset + first;
  for (uint64_t idx = first; idx < std::min(common, first + 16) && actual[idx] != expected[idx];
       ++idx) {
    failure.actual.push_back(actual[idx]);
  }
  return failure;
}

}  // namespace t0fs::fsx
