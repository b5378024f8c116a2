#include "common/buffer.h"

#include <sys/mman.h>

#include <cstdlib>
#include <new>
#include <utility>

namespace t0fs {

AlignedBuffer::AlignedBuffer(size_t size) { Reserve(size); }

AlignedBuffer::AlignedBuffer(AlignedBuffer&& o) noexcept
    : data_(std::exchange(o.data_, nullptr)), size_(std::exchange(o.size_, 0)) {}

AlignedBuffer& AlignedBuffer::operator=(AlignedBuffer&& o) noexcept {
  if (this != &o) {
    std::free(data_);
    data_ = std::exchange(o.data_, nullptr);
    size_ = std::exchange(o.size_, 0);
  }
  return *this;
}

AlignedBuffer::~AlignedBuffer() { std::free(data_); }

AlignedBuffer AlignedBuffer::HugePages(size_t size) {
  constexpr size_t kHuge = 2u << 20;
  AlignedBuffer buf;
  const size_t rounded = AlignUp(size == 0 ? 1 : size, kHuge);
  buf.data_ = static_cast<std::byte*>(std::aligned_alloc(kHuge, rounded));
  if (buf.data_ == nullptr) throw std::bad_alloc();
  buf.size_ = AlignUp(size == 0 ? 1 : size, kPageSize);
  (void)::madvise(buf.data_, rounded, MADV_HUGEPAGE);  // advice: plain pages when refused
  return buf;
}

void AlignedBuffer::Reserve(size_t size) {
  if (size <= size_) return;
  std::free(data_);
  size_t rounded = AlignUp(size == 0 ? 1 : size, kPageSize);
  data_ = static_cast<std::byte*>(std::aligned_alloc(kPageSize, rounded));
  if (data_ == nullptr) throw std::bad_alloc();
  size_ = rounded;
}

}  // namespace t0fs
