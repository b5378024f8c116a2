// TFRecord files of tf.train.Example records, protobuf encoded by hand:
// Example{features=1: Features{feature=1: map<string, Feature>}},
// Feature{bytes_list=1: BytesList{value=1}, int64_list=3: Int64List{value=1 packed}}.
#include <cstring>

#include <fmt/format.h>

#include "bench/mlperf/formats.h"
#include "common/crc32c.h"

namespace t0fs::bench::mlperf {
namespace {

size_t VarintLen(uint64_t v) {
  size_t n = 1;
  while (v >= 0x80) {
    v >>= 7;
    ++n;
  }
  return n;
}
void PutVarint(std::string& s, uint64_t v) {
  while (v >= 0x80) {
    s.push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  s.push_back(static_cast<char>(v));
}
void PutLenField(std::string& s, uint8_t tag, uint64_t len) {
  s.push_back(static_cast<char>(tag));
  PutVarint(s, len);
}

// The serialized Example around the image bytes: prefix + image + suffix.
struct ExampleParts {
  std::string prefix;
  uint64_t image = 0;
  std::string suffix;
  uint64_t size() const { return prefix.size() + image + suffix.size(); }
};

ExampleParts Example(uint64_t image_bytes, uint64_t dimension) {
  uint64_t bytes_list = 1 + VarintLen(image_bytes) + image_bytes;
  uint64_t feature_image = 1 + VarintLen(bytes_list) + bytes_list;
  uint64_t entry_image = 2 + 5 + 1 + VarintLen(feature_image) + feature_image;
  uint64_t int64_list = 1 + 1 + VarintLen(dimension);
  uint64_t feature_size = 1 + VarintLen(int64_list) + int64_list;
  uint64_t entry_size = 2 + 4 + 1 + VarintLen(feature_size) + feature_size;
  uint64_t features = 1 + VarintLen(entry_image) + entry_image + 1 + VarintLen(entry_size) +
                      entry_size;
  ExampleParts p;
  p.image = image_bytes;
  PutLenField(p.prefix, 0x0a, features);       // Example.features
  PutLenField(p.prefix, 0x0a, entry_image);    // Features.feature entry
  PutLenField(p.prefix, 0x0a, 5);              // key
  p.prefix += "image";
  PutLenField(p.prefix, 0x12, feature_image);  // value: Feature
  PutLenField(p.prefix, 0x0a, bytes_list);     // Feature.bytes_list
  PutLenField(p.prefix, 0x0a, image_bytes);    // BytesList.value
  PutLenField(p.suffix, 0x0a, entry_size);
  PutLenField(p.suffix, 0x0a, 4);
  p.suffix += "size";
  PutLenField(p.suffix, 0x12, feature_size);
  PutLenField(p.suffix, 0x1a, int64_list);     // Feature.int64_list
  PutLenField(p.suffix, 0x0a, VarintLen(dimension));  // packed values
  PutVarint(p.suffix, dimension);
  return p;
}

std::string Le(uint64_t v, int bytes) {
  std::string s;
  for (int idx = 0; idx < bytes; ++idx) s.push_back(static_cast<char>((v >> (8 * idx)) & 0xff));
  return s;
}

}  // namespace

uint32_t MaskCrc32c(uint32_t crc) { return ((crc >> 15) | (crc << 17)) + 0xa282ead8u; }

uint64_t TfRecordBytes(const FileShape& shape) {
  ExampleParts ex = Example(shape.dim1 * shape.dim2, shape.dimension);
  return shape.samples * (8 + 4 + ex.size() + 4);
}

Status WriteTfRecord(const FileShape& shape, FileSink& sink, std::string* index) {
  ExampleParts ex = Example(shape.dim1 * shape.dim2, shape.dimension);
  std::string len = Le(ex.size(), 8);
  uint32_t len_crc = MaskCrc32c(Crc32c(std::as_bytes(std::span(len.data(), len.size()))));
  std::string head = len + Le(len_crc, 4);
  for (uint32_t rec = 0; rec < shape.samples; ++rec) {
    uint64_t start = sink.offset();
    RETURN_IF_ERROR(sink.Append(head));
    sink.BeginChecksum(ChecksumKind::kCrc32c);
    RETURN_IF_ERROR(sink.Append(ex.prefix));
    RETURN_IF_ERROR(sink.AppendRandom(ex.image));
    RETURN_IF_ERROR(sink.Append(ex.suffix));
    uint32_t crc = MaskCrc32c(sink.checksum());
    sink.BeginChecksum(ChecksumKind::kNone);
    RETURN_IF_ERROR(sink.Append(Le(crc, 4)));
    if (index != nullptr) *index += fmt::format("{} {}\n", start, sink.offset() - start);
  }
  return Status::Ok();
}

Result<uint64_t> TfRecordScanner::Feed(const std::byte* data, size_t len) {
  uint64_t records = 0;
  while (len > 0) {
    if (skip_ > 0) {
      uint64_t n = std::min<uint64_t>(skip_, len);
      skip_ -= n;
      data += n;
      len -= n;
      if (skip_ == 0) ++records;
      continue;
    }
    size_t n = std::min(len, sizeof(header_) - header_fill_);
    std::memcpy(header_ + header_fill_, data, n);
    header_fill_ += n;
    data += n;
    len -= n;
    if (header_fill_ == sizeof(header_)) {
      uint64_t rec_len = 0;
      std::memcpy(&rec_len, header_, 8);  // little-endian host
      if (rec_len > (uint64_t{1} << 40)) {
        return Status(StatusCode::kCorruption, "not a TFRecord file (record length)");
      }
      header_fill_ = 0;
      skip_ = rec_len + 4;
    }
  }
  return records;
}

}  // namespace t0fs::bench::mlperf
