#include "op.h"

#include <fmt/format.h>

#include <algorithm>

namespace t0fs::fsx {

const char* KindName(OpKind kind) {
  switch (kind) {
    case OpKind::kWrite:
      return "write";
    case OpKind::kRead:
      return "read";
    case OpKind::kMapWrite:
      return "mapwrite";
    case OpKind::kMapRead:
      return "mapread";
    case OpKind::kTruncate:
      return "truncate";
    case OpKind::kFallocate:
      return "fallocate";
    case OpKind::kCopyRange:
      return "copy_range";
    case OpKind::kSync:
      return "sync";
    case OpKind::kReopen:
      return "reopen";
    case OpKind::kOpenSecond:
      return "open_second";
    case OpKind::kCloseSecond:
      return "close_second";
    case OpKind::kRewrite:
      return "rewrite";
    case OpKind::kUringBatch:
      return "uring";
    case OpKind::kCount:
      break;
  }
  return "?";
}

const char* FallocName(FallocMode mode) {
  switch (mode) {
    case FallocMode::kAllocate:
      return "0";
    case FallocMode::kKeepSize:
      return "KEEP_SIZE";
    case FallocMode::kPunchHole:
      return "PUNCH_HOLE|KEEP_SIZE";
    case FallocMode::kZeroRange:
      return "ZERO_RANGE";
    case FallocMode::kZeroRangeKeepSize:
      return "ZERO_RANGE|KEEP_SIZE";
    case FallocMode::kCount:
      break;
  }
  return "?";
}

namespace {
std::string Span(uint64_t offset, uint64_t length) {
  return fmt::format("0x{:x} len 0x{:x} (to 0x{:x})", offset, length, offset + length);
}
}  // namespace

std::string Describe(const Op& op) {
  std::string args;
  switch (op.kind) {
    case OpKind::kWrite:
    case OpKind::kRead:
    case OpKind::kMapRead:
      args = Span(op.offset, op.length);
      break;
    case OpKind::kMapWrite:
      args = Span(op.offset, op.length) + (op.flag ? " msync" : "");
      break;
    case OpKind::kTruncate:
      args = fmt::format("to 0x{:x} ({})", op.offset,
                         op.offset == 0                ? "zero"
                         : op.offset < op.size_before  ? "down"
                         : op.offset == op.size_before ? "same"
                                                       : "up");
      break;
    case OpKind::kFallocate:
      args = fmt::format("{} {}", FallocName(op.falloc), Span(op.offset, op.length));
      break;
    case OpKind::kCopyRange:
      args = fmt::format("from 0x{:x} to 0x{:x} len 0x{:x}{}", op.offset, op.dest, op.length,
                         op.offset < op.dest + op.length && op.dest < op.offset + op.length
                             ? " (overlapping)"
                             : "");
      break;
    case OpKind::kSync:
      args = op.flag ? "fdatasync" : "fsync";
      break;
    case OpKind::kReopen:
      args = op.flag ? "O_TRUNC" : "";
      break;
    case OpKind::kRewrite:
      args = fmt::format("truncate(0) + write len 0x{:x}{}", op.length,
                         op.flag ? ", main fd closed" : ", main fd open");
      break;
    case OpKind::kUringBatch:
      for (const UringIo& io : op.batch) {
        args += fmt::format("{}{} {}", args.empty() ? "" : "; ", io.write ? "W" : "R",
                            Span(io.offset, io.length));
      }
      if (op.flag) args += "; fsync";
      break;
    case OpKind::kOpenSecond:
    case OpKind::kCloseSecond:
    case OpKind::kCount:
      break;
  }
  return fmt::format("{} {}{}{} [size 0x{:x}]", op.step, KindName(op.kind), args.empty() ? "" : " ",
                     args, op.size_before) +
         (op.fd_slot != 0 ? " fd1" : "");
}

std::vector<Range> TouchedRanges(const Op& op) {
  switch (op.kind) {
    case OpKind::kWrite:
    case OpKind::kRead:
    case OpKind::kMapWrite:
    case OpKind::kMapRead:
    case OpKind::kFallocate:
      return {{op.offset, op.length}};
    case OpKind::kCopyRange:
      return {{op.offset, op.length}, {op.dest, op.length}};
    case OpKind::kTruncate: {
      // The page around the old and the new end of file.
      uint64_t low = std::min(op.offset, op.size_before);
      uint64_t high = std::max(op.offset, op.size_before);
      uint64_t start = low > 4096 ? low - 4096 : 0;
      return {{start, high - start + 4096}};
    }
    case OpKind::kRewrite:
      return {{0, op.length + 4096}};
    case OpKind::kUringBatch: {
      std::vector<Range> ranges;
      for (const UringIo& io : op.batch) ranges.push_back({io.offset, io.length});
      return ranges;
    }
    default:
      return {};
  }
}

}  // namespace t0fs::fsx
