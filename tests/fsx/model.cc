#include "model.h"

#include <algorithm>
#include <cstring>

namespace t0fs::fsx {

std::span<const uint8_t> Model::Read(uint64_t offset, uint64_t length) const {
  if (offset >= size()) return {};
  return std::span<const uint8_t>(data_).subspan(offset, std::min(length, size() - offset));
}

void Model::Write(uint64_t offset, std::span<const uint8_t> bytes) {
  if (offset + bytes.size() > size()) data_.resize(offset + bytes.size());
  std::copy(bytes.begin(), bytes.end(), data_.begin() + offset);
}

void Model::Truncate(uint64_t size) {
  data_.resize(size);
}

void Model::Zero(uint64_t offset, uint64_t length) {
  if (offset >= size()) return;
  length = std::min(length, size() - offset);
  std::fill_n(data_.begin() + offset, length, 0);
}

void Model::Fallocate(FallocMode mode, uint64_t offset, uint64_t length) {
  switch (mode) {
    case FallocMode::kAllocate:  // data unchanged; the size grows to cover the range
      if (offset + length > size()) data_.resize(offset + length);
      break;
    case FallocMode::kKeepSize:  // blocks only: nothing visible
      break;
    case FallocMode::kPunchHole:
    case FallocMode::kZeroRangeKeepSize:
      Zero(offset, length);
      break;
    case FallocMode::kZeroRange:
      Zero(offset, length);
      if (offset + length > size()) data_.resize(offset + length);
      break;
    case FallocMode::kCount:
      break;
  }
}

uint64_t Model::CopyableBytes(uint64_t source, uint64_t length) const {
  return source >= size() ? 0 : std::min(length, size() - source);
}

void Model::Copy(uint64_t source, uint64_t dest, uint64_t length) {
  if (dest + length > size()) data_.resize(dest + length);
  std::memmove(data_.data() + dest, data_.data() + source, length);
}

}  // namespace t0fs::fsx
