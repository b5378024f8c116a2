// AlignedBuffer: page-aligned heap memory for I/O.
//
// Why aligned: on this class of machine copy_to_user into a destination that
// is not 32-byte aligned runs ~4x slower (docs/performance.md), and O_DIRECT
// needs block alignment. Every I/O buffer in t0fs comes from here.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace t0fs {

inline constexpr size_t kPageSize = 4096;

// Move-only; not thread-safe. Contents are uninitialised after construction.
class AlignedBuffer {
 public:
  AlignedBuffer() = default;
  explicit AlignedBuffer(size_t size);
  // `size` bytes in transparent huge pages where the kernel gives them
  // (2 MiB-aligned and madvise(MADV_HUGEPAGE); plain pages otherwise): for
  // a buffer the kernel pins on every use, a huge page is one page-table
  // entry and one reference count per pin instead of 512 (the FUSE reply
  // buffer, docs/performance.md). Costs up to 2 MiB less `size` unused.
  static AlignedBuffer HugePages(size_t size);
  AlignedBuffer(AlignedBuffer&& o) noexcept;
  AlignedBuffer& operator=(AlignedBuffer&& o) noexcept;
  AlignedBuffer(const AlignedBuffer&) = delete;
  AlignedBuffer& operator=(const AlignedBuffer&) = delete;
  ~AlignedBuffer();

  std::byte* data() { return data_; }
  const std::byte* data() const { return data_; }
  size_t size() const { return size_; }
  std::span<std::byte> span() { return {data_, size_}; }
  // Grows to at least `size` bytes (contents are not preserved).
  void Reserve(size_t size);

 private:
  std::byte* data_ = nullptr;
  size_t size_ = 0;
};

inline uint64_t AlignDown(uint64_t v, uint64_t a) { return v - v % a; }
inline uint64_t AlignUp(uint64_t v, uint64_t a) { return AlignDown(v + a - 1, a); }

}  // namespace t0fs
