#include "metrics/op_metrics.h"

#include <cctype>
#include <cstring>
#include <map>

#include <fmt/format.h>

namespace t0fs::metrics {
namespace {

// kNotFound -> not_found.
std::string SnakeCase(std::string_view enum_name) {
  std::string out;
  for (size_t char_idx = 1; char_idx < enum_name.size(); ++char_idx) {
    char c = enum_name[char_idx];
    if (std::isupper(static_cast<unsigned char>(c))) {
      if (char_idx > 1) out.push_back('_');
      out.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
    } else {
      out.push_back(c);
    }
  }
  return out;
}

const std::map<StatusCode, std::string>& ResultLabels() {
  static const std::map<StatusCode, std::string> labels = [] {
    std::map<StatusCode, std::string> m;
#define T0FS_RESULT_LABEL(name, number, err, text) \
  m.emplace(StatusCode::name, StatusCode::name == StatusCode::kOk ? "ok" : SnakeCase(#name));
    T0FS_STATUS_CODES(T0FS_RESULT_LABEL)
#undef T0FS_RESULT_LABEL
    return m;
  }();
  return labels;
}

}  // namespace

std::string ErrnoLabel(int err) {
  if (err == 0) return "ok";
  const char* name = ::strerrorname_np(err);
  if (name == nullptr) return fmt::format("errno_{}", err);
  std::string out(name);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string SnakeCaseName(std::string_view name) {
  std::string out;
  for (size_t char_idx = 0; char_idx < name.size(); ++char_idx) {
    char c = name[char_idx];
    bool upper = std::isupper(static_cast<unsigned char>(c));
    // A word starts at an upper-case letter that follows a lower-case one or
    // a digit, or that starts a capitalised word after an acronym ("HTTPServer").
    if (upper && char_idx > 0) {
      char prev = name[char_idx - 1];
      bool next_lower = char_idx + 1 < name.size() && std::islower(static_cast<unsigned char>(name[char_idx + 1]));
      if (std::islower(static_cast<unsigned char>(prev)) || std::isdigit(static_cast<unsigned char>(prev)) ||
          (std::isupper(static_cast<unsigned char>(prev)) && next_lower)) {
        out.push_back('_');
      }
    }
    out.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  }
  return out;
}

std::string_view ResultLabel(StatusCode code) {
  const auto& labels = ResultLabels();
  auto it = labels.find(code);
  return it == labels.end() ? std::string_view("unknown") : std::string_view(it->second);
}

OpMetrics::OpMetrics(Family<Counter>* ops, Family<Histogram>* latency, std::string_view op,
                     std::string_view label)
    : ops_(ops), label_(label), op_(op) {
  if (ops_ != nullptr) ok_ = &ops_->With({{label_, op_}, {"result", "ok"}});
  if (latency != nullptr) latency_ = &latency->With({{label_, op_}});
}

void OpMetrics::CountSlow(StatusCode code) {
  Counter& counter = ops_->With({{label_, op_}, {"result", ResultLabel(code)}});
  counter.Inc();
  std::lock_guard lock(mu_);
  const Entry& entry = entries_.emplace_back(Entry{code, &counter});
  slots_[Slot(code)].store(&entry, std::memory_order_release);
}

}  // namespace t0fs::metrics
