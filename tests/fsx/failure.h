// What went wrong in a step: an unexpected syscall answer or content that
// differs from the model. Ops and checks return std::optional<Failure>
// (empty = as the model expected).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace t0fs::fsx {

struct Failure {
  std::string message;  // one line
  std::string detail;   // more lines (a hex dump), may be empty
  // Content mismatches: the first differing file offset and the bytes from
  // there up to the next byte that is right again (at most 16), for the
  // report's "who wrote this" hint.
  std::optional<uint64_t> bad_offset;
  std::vector<uint8_t> actual;
};

inline Failure Fail(std::string message) {
  Failure failure;
  failure.message = std::move(message);
  return failure;
}
// "what failed: EIO (Input/output error)".
Failure SyscallFailure(const std::string& what, int err);
// Empty when `actual` equals `expected`; else where they first differ, how
// many bytes differ, and the bytes around the first difference.
std::optional<Failure> CompareBytes(const std::string& what, uint64_t file_offset,
                                    std::span<const uint8_t> expected,
                                    std::span<const uint8_t> actual);

}  // namespace t0fs::fsx
