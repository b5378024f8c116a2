#include "metrics/op_metrics.h"

#include <cctype>
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

std::string_view ResultLabel(StatusCode code) {
  const auto& labels = ResultLabels();
  auto it = labels.find(code);
  return it == labels.end() ? std::string_view("unknown") : std::string_view(it->second);
}

OpMetrics::OpMetrics(Family<Counter>* ops, Family<Histogram>* latency, std::string_view op)
    : ops_(ops), op_(op) {
  if (ops_ != nullptr) ok_ = &ops_->With({{"op", op_}, {"result", "ok"}});
  if (latency != nullptr) latency_ = &latency->With({{"op", op_}});
}

void OpMetrics::CountSlow(StatusCode code) {
  Counter& counter = ops_->With({{"op", op_}, {"result", ResultLabel(code)}});
  counter.Inc();
  std::lock_guard lock(mu_);
  const Entry& entry = entries_.emplace_back(Entry{code, &counter});
  slots_[Slot(code)].store(&entry, std::memory_order_release);
}

}  // namespace t0fs::metrics
