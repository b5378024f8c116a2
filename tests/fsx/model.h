// What the file must contain: a byte vector as long as the file, changed by
// each op the way POSIX (and Linux for fallocate/copy_file_range) says.
// Single-threaded; owned by the Runner.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "op.h"

namespace t0fs::fsx {

class Model {
 public:
  uint64_t size() const { return data_.size(); }
  std::span<const uint8_t> data() const { return data_; }

  // What a read of [offset, offset + length) returns: clipped at the end of file.
  std::span<const uint8_t> Read(uint64_t offset, uint64_t length) const;
  void Write(uint64_t offset, std::span<const uint8_t> bytes);
  // Grows with zeros or cuts.
  void Truncate(uint64_t size);
  void Fallocate(FallocMode mode, uint64_t offset, uint64_t length);
  // How many bytes copy_file_range of `length` bytes from `source` may
  // copy: the source range is clipped at the end of file.
  uint64_t CopyableBytes(uint64_t source, uint64_t length) const;
  // A copy of `length` (<= CopyableBytes) bytes with memmove semantics.
  void Copy(uint64_t source, uint64_t dest, uint64_t length);

 private:
  void Zero(uint64_t offset, uint64_t length);  // inside the file only

  std::vector<uint8_t> data_;
};

}  // namespace t0fs::fsx
