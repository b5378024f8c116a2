#include "metrics/names.h"

#include <cstdio>
#include <cstdlib>

#include <fmt/format.h>

namespace t0fs::metrics {
namespace {

bool IsNameStart(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
bool IsNameChar(char c) {
  return IsNameStart(c) || (c >= '0' && c <= '9');
}

Status CheckChars(std::string_view name, std::string_view what) {
  if (name.empty()) return Status(StatusCode::kInvalidArgument, fmt::format("empty {}", what));
  if (!IsNameStart(name[0])) {
    return Status(StatusCode::kInvalidArgument,
                  fmt::format("{} '{}' must start with a letter or '_'", what, name));
  }
  for (char c : name) {
    if (!IsNameChar(c)) {
      return Status(StatusCode::kInvalidArgument,
                    fmt::format("{} '{}' may hold only letters, digits and '_'", what, name));
    }
  }
  return Status::Ok();
}

}  // namespace

Status ValidateMetricName(std::string_view name) {
  return CheckChars(name, "metric name");
}

Status ValidateLabelName(std::string_view name) {
  RETURN_IF_ERROR(CheckChars(name, "label name"));
  if (name.starts_with("__")) {
    return Status(StatusCode::kInvalidArgument,
                  fmt::format("label name '{}': names starting with '__' are reserved", name));
  }
  return Status::Ok();
}

void Die(std::string_view what) {
  std::fprintf(stderr, "t0fs metrics: %.*s\n", static_cast<int>(what.size()), what.data());
  std::fflush(stderr);
  std::abort();
}

}  // namespace t0fs::metrics
