#include "executor.h"

#include <errno.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <linux/falloc.h>
#include <unistd.h>

#include <algorithm>

#include "mmap_io.h"
#include "pattern.h"

namespace t0fs::fsx {

namespace {

int FallocFlags(FallocMode mode) {
  switch (mode) {
    case FallocMode::kAllocate:
      return 0;
    case FallocMode::kKeepSize:
      return FALLOC_FL_KEEP_SIZE;
    case FallocMode::kPunchHole:
      return FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE;
    case FallocMode::kZeroRange:
      return FALLOC_FL_ZERO_RANGE;
    case FallocMode::kZeroRangeKeepSize:
      return FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE;
    case FallocMode::kCount:
      break;
  }
  return 0;
}

std::string Fd(int slot) {
  return fmt::format("fd{}", slot);
}

}  // namespace

Executor::Executor(const Config& config, TestFile& file, Ring* ring)
    : config_(config),
      file_(file),
      ring_(ring),
      buffer_(std::max(config.max_size, 4 * config.max_op_len)) {}

std::optional<Failure> Executor::Run(const Op& op, Model& model) {
  switch (op.kind) {
    case OpKind::kWrite:
      return Write(op, model);
    case OpKind::kRead:
      return Read(op, model);
    case OpKind::kMapWrite:
      return MapWrite(op, model);
    case OpKind::kMapRead:
      return MapRead(op, model);
    case OpKind::kTruncate:
      return Truncate(op, model);
    case OpKind::kFallocate:
      return Fallocate(op, model);
    case OpKind::kCopyRange:
      return CopyRange(op, model);
    case OpKind::kSync:
      return Sync(op);
    case OpKind::kReopen:
      return Reopen(op, model);
    case OpKind::kOpenSecond:
      return file_.OpenSecond();
    case OpKind::kCloseSecond:
      return file_.CloseSecond();
    case OpKind::kRewrite:
      return Rewrite(op, model);
    case OpKind::kUringBatch:
      return ring_->RunBatch(file_.fd(op.fd_slot), op, model);
    case OpKind::kCount:
      break;
  }
  return Fail("unknown op (tool bug)");
}

std::optional<Failure> Executor::Write(const Op& op, Model& model) {
  std::span<uint8_t> bytes = buffer_.span().first(op.length);
  FillPattern(op.step, op.offset, bytes);
  const std::string what =
      fmt::format("pwrite({}, 0x{:x}, len 0x{:x})", Fd(op.fd_slot), op.offset, op.length);
  ssize_t n =
      ::pwrite(file_.fd(op.fd_slot), bytes.data(), bytes.size(), static_cast<off_t>(op.offset));
  if (n < 0) return SyscallFailure(what, errno);
  if (static_cast<uint64_t>(n) != op.length) {
    return Fail(fmt::format("{}: short write of {} bytes", what, n));
  }
  model.Write(op.offset, bytes);
  return std::nullopt;
}

std::optional<Failure> Executor::Read(const Op& op, const Model& model) {
  if (auto failure = file_.ReadRange(op.fd_slot, op.offset, op.length, model.size(), read_)) {
    return failure;
  }
  return CompareBytes(
      fmt::format("pread({}, 0x{:x}, len 0x{:x})", Fd(op.fd_slot), op.offset, op.length), op.offset,
      model.Read(op.offset, op.length), read_);
}

std::optional<Failure> Executor::MapWrite(const Op& op, Model& model) {
  const int fd = file_.fd(op.fd_slot);
  if (op.offset + op.length > model.size()) {  // a mapping cannot extend the file
    if (::ftruncate(fd, static_cast<off_t>(op.offset + op.length)) != 0) {
      return SyscallFailure(
          fmt::format("mapwrite: ftruncate({}, 0x{:x})", Fd(op.fd_slot), op.offset + op.length),
          errno);
    }
    model.Truncate(op.offset + op.length);
  }
  std::span<uint8_t> bytes = buffer_.span().first(op.length);
  FillPattern(op.step, op.offset, bytes);
  if (auto failure = fsx::MapWrite(fd, op.offset, bytes, op.flag)) return failure;
  model.Write(op.offset, bytes);
  return std::nullopt;
}

std::optional<Failure> Executor::MapRead(const Op& op, const Model& model) {
  read_.resize(op.length);
  if (auto failure = fsx::MapRead(file_.fd(op.fd_slot), op.offset, read_)) return failure;
  return CompareBytes(fmt::format("mapread 0x{:x} len 0x{:x}", op.offset, op.length), op.offset,
                      model.Read(op.offset, op.length), read_);
}

std::optional<Failure> Executor::Truncate(const Op& op, Model& model) {
  if (::ftruncate(file_.fd(op.fd_slot), static_cast<off_t>(op.offset)) != 0) {
    return SyscallFailure(fmt::format("ftruncate({}, 0x{:x})", Fd(op.fd_slot), op.offset), errno);
  }
  model.Truncate(op.offset);
  return std::nullopt;
}

bool Executor::FallocAllowed(FallocMode mode) const {
  if (config_.falloc == FallocPolicy::kBasic) {
    return mode == FallocMode::kAllocate || mode == FallocMode::kKeepSize;
  }
  return !falloc_refused_[static_cast<size_t>(mode)];
}

std::optional<Failure> Executor::Fallocate(const Op& op, Model& model) {
  if (!FallocAllowed(op.falloc)) {
    ++skipped_;
    return std::nullopt;
  }
  if (::fallocate(file_.fd(op.fd_slot), FallocFlags(op.falloc), static_cast<off_t>(op.offset),
                  static_cast<off_t>(op.length)) != 0) {
    const int err = errno;
    if (err == EOPNOTSUPP && config_.falloc == FallocPolicy::kAuto) {
      fmt::print("fsx: fallocate {} answers EOPNOTSUPP (step {}); not used again\n",
                 FallocName(op.falloc), op.step);
      falloc_refused_[static_cast<size_t>(op.falloc)] = true;
      ++skipped_;
      return std::nullopt;
    }
    return SyscallFailure(fmt::format("fallocate({}, {}, 0x{:x}, len 0x{:x})", Fd(op.fd_slot),
                                      FallocName(op.falloc), op.offset, op.length),
                          err);
  }
  model.Fallocate(op.falloc, op.offset, op.length);
  return std::nullopt;
}

// copy_file_range from the op's descriptor to the main one, looping over
// short copies as cp does. Same-file ranges that overlap may be refused
// (EINVAL, what Linux's generic checks answer) or copied as memmove would;
// Returning 0 while the model has bytes to copy is a failure either way.
std::optional<Failure> Executor::CopyRange(const Op& op, Model& model) {
  uint64_t source = op.offset, dest = op.dest, left = op.length;
  while (left > 0) {
    const uint64_t copyable = model.CopyableBytes(source, left);
    const bool overlapping = copyable > 0 && source < dest + copyable && dest < source + copyable;
    const std::string what = fmt::format("copy_file_range({} 0x{:x} -> fd0 0x{:x}, len 0x{:x})",
                                         Fd(op.fd_slot), source, dest, left);
    loff_t in = static_cast<loff_t>(source), out = static_cast<loff_t>(dest);
    ssize_t n = ::copy_file_range(file_.fd(op.fd_slot), &in, file_.fd(0), &out, left, 0);
    if (n < 0) {
      if (errno == EINVAL && overlapping) return std::nullopt;
      return SyscallFailure(what, errno);
    }
    if (n == 0) {
      if (copyable == 0) return std::nullopt;  // source at or past end of file
      return Fail(
          fmt::format("{}: copied 0 bytes without an error; 0x{:x} were due", what, copyable));
    }
    if (static_cast<uint64_t>(n) > copyable) {
      return Fail(
          fmt::format("{}: copied 0x{:x} bytes, only 0x{:x} lie before the "
                      "end of file",
                      what, n, copyable));
    }
    model.Copy(source, dest, static_cast<uint64_t>(n));
    source += n;
    dest += n;
    left -= n;
  }
  return std::nullopt;
}

std::optional<Failure> Executor::Sync(const Op& op) {
  const int fd = file_.fd(op.fd_slot);
  if ((op.flag ? ::fdatasync(fd) : ::fsync(fd)) != 0) {
    return SyscallFailure(fmt::format("{}({})", op.flag ? "fdatasync" : "fsync", Fd(op.fd_slot)),
                          errno);
  }
  return std::nullopt;
}

std::optional<Failure> Executor::Reopen(const Op& op, Model& model) {
  if (auto failure = file_.CloseSecond()) return failure;
  if (auto failure = file_.CloseMain()) return failure;
  if (auto failure = file_.OpenMain(op.flag)) return failure;
  if (op.flag) model.Truncate(0);
  return std::nullopt;
}

// Python's `with open(p, "r+b") as f: f.truncate(0); f.write(data)`: a new
// descriptor, ftruncate to 0, write() at the file position, close.
std::optional<Failure> Executor::Rewrite(const Op& op, Model& model) {
  if (op.flag) {
    if (auto failure = file_.CloseMain()) return failure;
  }
  UniqueFd fd;
  if (auto failure = file_.OpenExtra(0, fd)) return failure;
  if (::ftruncate(fd.get(), 0) != 0) return SyscallFailure("rewrite: ftruncate(0)", errno);
  model.Truncate(0);
  std::span<uint8_t> bytes = buffer_.span().first(op.length);
  FillPattern(op.step, 0, bytes);
  ssize_t n = ::write(fd.get(), bytes.data(), bytes.size());
  if (n < 0) return SyscallFailure(fmt::format("rewrite: write(len 0x{:x})", op.length), errno);
  if (static_cast<uint64_t>(n) != op.length) {
    return Fail(fmt::format("rewrite: short write of {} of {} bytes", n, op.length));
  }
  model.Write(0, bytes);
  if (int err = fd.Close()) return SyscallFailure("rewrite: close", err);
  if (op.flag) return file_.OpenMain(false);
  return std::nullopt;
}

}  // namespace t0fs::fsx
