// The container formats of the training datasets (spec §2.2), written the
// way the reference generator writes them, with random payload:
//  - npz: numpy.savez (a stored zip64 archive) of x = uint8 (d1, d2, samples)
//    and y = int64 labels (samples,);
//  - tfrecord: `samples` tf.train.Example records {image: bytes (d1*d2),
//    size: int64 (dimension)} with TFRecord framing (length, masked CRC-32C
//    of it, data, masked CRC-32C), plus a DALI index "offset size" per line;
//  - raw ("jpeg" in retinanet v3.0): d1*d2*samples random bytes, no header.
// docs/mlperf.md has the byte layouts.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "bench/mlperf/file_sink.h"
#include "bench/mlperf/training_config.h"

namespace t0fs::bench::mlperf {

struct FileShape {
  uint64_t dim1 = 0;
  uint64_t dim2 = 0;
  uint32_t samples = 1;
  uint64_t dimension = 0;  // the configured side (TFRecord "size" feature)
  uint64_t PayloadBytes() const { return dim1 * dim2 * samples; }
};

// Exact size of the file that WriteSampleFile() writes.
uint64_t ContainerBytes(Container container, const FileShape& shape);
// Writes one sample file into `sink` (not finished). For tfrecord,
// `index` receives the DALI index text.
Status WriteSampleFile(Container container, const FileShape& shape, FileSink& sink,
                       std::string* index);

// Format pieces (one file each).
uint64_t NpzBytes(const FileShape& shape);
Status WriteNpz(const FileShape& shape, FileSink& sink);
uint64_t TfRecordBytes(const FileShape& shape);
Status WriteTfRecord(const FileShape& shape, FileSink& sink, std::string* index);
// The npy header numpy writes for a C-order array (version 1.0, 64-byte aligned).
std::string NpyHeader(const std::string& descr, const std::string& shape_repr,
                      uint64_t first_axis);
uint32_t MaskCrc32c(uint32_t crc);

// Counts TFRecord records in a byte stream fed in arbitrary pieces (the
// tf.data reader's view of a file: record boundaries from the framing).
class TfRecordScanner {
 public:
  // Returns the number of records completed by these bytes; an error if a
  // length field is implausible (not a TFRecord file).
  Result<uint64_t> Feed(const std::byte* data, size_t len);
  bool at_boundary() const { return header_fill_ == 0 && skip_ == 0; }

 private:
  std::byte header_[12];
  size_t header_fill_ = 0;
  uint64_t skip_ = 0;  // bytes of data + trailing CRC still to pass
};

}  // namespace t0fs::bench::mlperf
