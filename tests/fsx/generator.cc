#include "generator.h"

#include <algorithm>

namespace t0fs::fsx {

namespace {

// Relative weights. Data ops dominate; the ones that cost a round trip to
// the metadata service or a flush on a distributed file system (sync,
// reopen, a second open, rewrite: milliseconds each on t0fs) are rare, and
// mmap writes (a fault per page and often an msync) fewer than plain writes,
// so that 100k ops fit the CI budget; 100k ops still make 500-1000 of each.
struct Weight {
  OpKind kind;
  unsigned weight;
};
constexpr Weight kWeights[] = {
    {OpKind::kWrite, 300},     {OpKind::kRead, 250},    {OpKind::kMapWrite, 60},
    {OpKind::kMapRead, 60},    {OpKind::kTruncate, 60}, {OpKind::kFallocate, 70},
    {OpKind::kCopyRange, 60},  {OpKind::kSync, 5},      {OpKind::kReopen, 8},
    {OpKind::kOpenSecond, 10}, {OpKind::kRewrite, 5},   {OpKind::kUringBatch, 0},
};
// io_uring mode: the batches replace single reads and writes.
constexpr unsigned kUringBatchWeight = 550;

constexpr uint64_t kBoundaries[] = {4096, 64 << 10, 1 << 20};

uint64_t AlignUp(uint64_t value, uint64_t align) {
  return (value + align - 1) / align * align;
}

}  // namespace

OpGenerator::OpGenerator(const Config& config) : config_(config), rng_(config.seed) {
  const bool mmap = config.mode == IoMode::kBuffered;
  const bool uring = config.mode == IoMode::kUring;
  for (const Weight& w : kWeights) {
    unsigned weight = w.weight;
    if (!mmap && (w.kind == OpKind::kMapWrite || w.kind == OpKind::kMapRead)) weight = 0;
    if (uring && (w.kind == OpKind::kWrite || w.kind == OpKind::kRead)) weight = 0;
    if (uring && w.kind == OpKind::kUringBatch) weight = kUringBatchWeight;
    if (config.without.contains(w.kind)) weight = 0;
    weights_[static_cast<size_t>(w.kind)] = weight;
    weight_total_ += weight;
  }
  if (weight_total_ == 0) {  // --without took every kind: syncs only
    weights_[static_cast<size_t>(OpKind::kSync)] = weight_total_ = 1;
  }
}

uint64_t OpGenerator::Uniform(uint64_t low, uint64_t high) {
  if (high <= low) return low;
  // mt19937_64's output is fixed by the standard (unlike the distributions),
  // so a seed means the same sequence with any standard library.
  return low + rng_() % (high - low + 1);
}

OpKind OpGenerator::PickKind() {
  uint64_t pick = Uniform(0, weight_total_ - 1);
  for (size_t kind = 0; kind < weights_.size(); ++kind) {
    if (pick < weights_[kind]) return static_cast<OpKind>(kind);
    pick -= weights_[kind];
  }
  return OpKind::kWrite;
}

uint64_t OpGenerator::PickOffset(uint64_t size) {
  const uint64_t max = config_.max_size - 1;
  uint64_t choice = Uniform(0, 99);
  if (choice < 50) return Uniform(0, max);
  if (choice < 75) return Uniform(0, std::min(size, max));
  // Near the end of file or a boundary, where off-by-one and chunk-edge bugs live.
  uint64_t base = size;
  if (choice >= 85) {
    uint64_t unit = kBoundaries[Uniform(0, std::size(kBoundaries) - 1)];
    base = Uniform(0, max / unit) * unit;
  }
  uint64_t delta = Uniform(0, 64);
  uint64_t offset = Chance(50) ? base + delta : (base > delta ? base - delta : 0);
  return std::min(offset, max);
}

uint64_t OpGenerator::PickOffsetInFile(uint64_t size) {
  if (size == 0 || Chance(10)) return PickOffset(size);
  return Uniform(0, size - 1);
}

uint64_t OpGenerator::PickLength() {
  const uint64_t max = config_.max_op_len;
  uint64_t choice = Uniform(0, 99);
  if (choice < 40) return Uniform(1, std::min<uint64_t>(4096, max));
  if (choice < 85 || max < 4096) return Uniform(1, max);
  return Uniform(1, max / 4096) * 4096;
}

uint64_t OpGenerator::Fit(uint64_t offset, uint64_t length) const {
  return std::min(length, config_.max_size - offset);
}

void OpGenerator::AlignForDirect(uint64_t& offset, uint64_t& length) const {
  offset -= offset % kDirectAlign;
  length = std::min(AlignUp(length, kDirectAlign), config_.max_size);
  if (offset + length > config_.max_size) offset = config_.max_size - length;
}

Op OpGenerator::Next(uint64_t step, uint64_t size, bool second_open) {
  Op op;
  op.step = step;
  op.kind = PickKind();
  const bool direct = config_.mode == IoMode::kDirect;
  if (op.kind == OpKind::kMapRead && size == 0) op.kind = OpKind::kMapWrite;
  if (op.kind == OpKind::kOpenSecond && second_open) op.kind = OpKind::kCloseSecond;
  switch (op.kind) {
    case OpKind::kWrite:
    case OpKind::kMapWrite:
    case OpKind::kFallocate:
      op.offset = PickOffset(size);
      op.length = Fit(op.offset, PickLength());
      if (direct && op.kind == OpKind::kWrite) AlignForDirect(op.offset, op.length);
      if (op.kind == OpKind::kMapWrite) op.flag = Chance(25);
      if (op.kind == OpKind::kFallocate) {
        op.falloc =
            static_cast<FallocMode>(Uniform(0, static_cast<uint64_t>(FallocMode::kCount) - 1));
      }
      break;
    case OpKind::kRead:
      op.offset = PickOffsetInFile(size);
      op.length = Fit(op.offset, PickLength());
      if (direct) AlignForDirect(op.offset, op.length);
      break;
    case OpKind::kMapRead:
      op.offset = Uniform(0, size - 1);
      op.length = std::min(PickLength(), size - op.offset);
      break;
    case OpKind::kTruncate: {
      uint64_t choice = Uniform(0, 99);
      if (choice < 40 && size > 0) {
        op.offset = Uniform(0, size - 1);
      } else if (choice < 85) {
        op.offset = Uniform(size, config_.max_size);
      }  // else to zero
      if (Chance(25)) op.offset -= op.offset % 4096;
      break;
    }
    case OpKind::kCopyRange:
      op.offset = PickOffsetInFile(size);
      op.length = PickLength();
      if (Chance(15)) {  // overlapping source and destination
        uint64_t shift = Uniform(0, op.length);
        op.dest = Chance(50) ? op.offset + shift : (op.offset > shift ? op.offset - shift : 0);
        op.dest = std::min(op.dest, config_.max_size - 1);
      } else {
        op.dest = PickOffset(size);
      }
      op.length = Fit(op.dest, Fit(op.offset, op.length));
      if (direct) {
        AlignForDirect(op.offset, op.length);
        op.dest -= op.dest % kDirectAlign;
        if (op.dest + op.length > config_.max_size) op.dest = config_.max_size - op.length;
        // A source range that the end of file cuts inside a block is no
        // longer whole blocks: Linux (ext4) answers EINVAL after copying
        // part of it. Keep the source to whole blocks before the end of file.
        if (op.offset < size && op.offset + op.length > size && size % kDirectAlign != 0) {
          op.length = (size - op.offset) / kDirectAlign * kDirectAlign;
          if (op.length == 0) op.kind = OpKind::kSync;  // nothing whole to copy
        }
      }
      break;
    case OpKind::kSync:
    case OpKind::kReopen:
      op.flag = Chance(op.kind == OpKind::kReopen ? 20 : 50);
      break;
    case OpKind::kRewrite:
      op.length = Uniform(1, std::min(config_.max_size, 4 * config_.max_op_len));
      if (direct) op.length = std::min(AlignUp(op.length, kDirectAlign), config_.max_size);
      op.flag = Chance(50);
      break;
    case OpKind::kUringBatch:
      MakeBatch(op, size);
      break;
    case OpKind::kOpenSecond:
    case OpKind::kCloseSecond:
    case OpKind::kCount:
      break;
  }
  const bool uses_fd = op.kind != OpKind::kReopen && op.kind != OpKind::kRewrite &&
                       op.kind != OpKind::kOpenSecond && op.kind != OpKind::kCloseSecond;
  if (second_open && uses_fd && Chance(50)) op.fd_slot = 1;
  return op;
}

void OpGenerator::MakeBatch(Op& op, uint64_t size) {
  uint64_t count = Uniform(1, 8);
  for (uint64_t io_idx = 0; io_idx < count; ++io_idx) {
    UringIo io;
    // Reads stay inside the file as it was before the batch: a read past
    // EOF racing an extending write of the same batch has no single answer.
    io.write = size == 0 || Chance(50);
    if (io.write) {
      io.offset = PickOffset(size);
      io.length = Fit(io.offset, PickLength());
    } else {
      io.offset = Uniform(0, size - 1);
      io.length = std::min(PickLength(), size - io.offset);
    }
    bool overlaps = std::any_of(op.batch.begin(), op.batch.end(), [&](const UringIo& other) {
      return io.offset < other.offset + other.length && other.offset < io.offset + io.length;
    });
    if (!overlaps) op.batch.push_back(io);
  }
  op.flag = Chance(4);  // an fsync costs 10-30 ms on a distributed file system
}

}  // namespace t0fs::fsx
