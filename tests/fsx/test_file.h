// The file under test: its path and the descriptors open on it (the main
// one, and a second one that some ops open beside it), opened with the
// flags of the mode (O_DIRECT in direct mode). Single-threaded.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <optional>
#include <span>
#include <string>

#include "config.h"
#include "failure.h"

namespace t0fs::fsx {

// A descriptor that closes itself; Close() reports what close(2) said.
class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  UniqueFd(UniqueFd&& other) noexcept : fd_(other.Release()) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept;
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  ~UniqueFd();

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  int Release();
  // 0, or the errno of close(2).
  int Close();

 private:
  int fd_ = -1;
};

// Page-aligned bytes (O_DIRECT needs aligned buffers).
class AlignedBuffer {
 public:
  explicit AlignedBuffer(uint64_t size);
  std::span<uint8_t> span() { return {data_.get(), size_}; }
  uint8_t* data() { return data_.get(); }
  uint64_t size() const { return size_; }

 private:
  struct Free {
    void operator()(uint8_t* p) const { std::free(p); }
  };
  std::unique_ptr<uint8_t, Free> data_;
  uint64_t size_;
};

class TestFile {
 public:
  TestFile(std::string path, IoMode mode) : path_(std::move(path)), mode_(mode) {}

  const std::string& path() const { return path_; }
  bool direct() const { return mode_ == IoMode::kDirect; }
  int fd(int slot) const { return slot == 0 ? main_.get() : second_.get(); }
  bool second_open() const { return second_.valid(); }

  // Opens the main descriptor (created if missing; O_TRUNC when `truncate`).
  std::optional<Failure> OpenMain(bool truncate);
  std::optional<Failure> OpenSecond();
  std::optional<Failure> CloseMain();
  std::optional<Failure> CloseSecond();
  // Opens a descriptor with the mode's flags plus `extra`.
  std::optional<Failure> OpenExtra(int extra, UniqueFd& out) const;

  // Reads [offset, offset + length) through descriptor `slot` into `out`
  // (resized to what came back), looping over pieces of at most 1 MiB. In
  // direct mode whole aligned blocks are read around the range. A read
  // shorter than the model's end of file (`size`) is a failure, and so is
  // data past it.
  std::optional<Failure> ReadRange(int slot, uint64_t offset, uint64_t length, uint64_t size,
                                   std::vector<uint8_t>& out);

 private:
  int OpenFlags() const;

  const std::string path_;
  const IoMode mode_;
  UniqueFd main_;
  UniqueFd second_;
  std::unique_ptr<AlignedBuffer> read_buffer_;
};

}  // namespace t0fs::fsx
