#include "bench/option_values.h"

#include "common/config.h"

namespace t0fs::bench {

Result<uint64_t> ParseSizeOption(const std::string& name, const std::string& text) {
  auto size = ParseByteSize(text);
  if (!size.ok()) return Status(StatusCode::kInvalidArgument, name + ": " + size.status().message());
  return size->bytes;
}

Result<double> ParseSecondsOption(const std::string& name, const std::string& text) {
  auto d = ParseDuration(text);
  if (!d.ok()) return Status(StatusCode::kInvalidArgument, name + ": " + d.status().message());
  return static_cast<double>(d->value.count()) / 1000.0;
}

}  // namespace t0fs::bench
