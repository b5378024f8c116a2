#include "bench/mlperf/formats.h"

namespace t0fs::bench::mlperf {

uint64_t ContainerBytes(Container container, const FileShape& shape) {
  switch (container) {
    case Container::kNpz: return NpzBytes(shape);
    case Container::kTfRecord: return TfRecordBytes(shape);
    case Container::kRaw: return shape.PayloadBytes();
  }
  return 0;
}

Status WriteSampleFile(Container container, const FileShape& shape, FileSink& sink,
                       std::string* index) {
  switch (container) {
    case Container::kNpz: return WriteNpz(shape, sink);
    case Container::kTfRecord: return WriteTfRecord(shape, sink, index);
    case Container::kRaw: return sink.AppendRandom(shape.PayloadBytes());
  }
  return Status(StatusCode::kInvalidArgument, "unknown container");
}

}  // namespace t0fs::bench::mlperf
