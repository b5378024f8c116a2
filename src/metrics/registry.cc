#include "metrics/registry.h"

#include <mutex>

#include <fmt/format.h>

#include "metrics/names.h"

namespace t0fs::metrics {
namespace {

std::vector<std::string> SeriesNames(MetricType type, std::string_view name) {
  if (type != MetricType::kHistogram) return {std::string(name)};
  return {std::string(name), fmt::format("{}_bucket", name), fmt::format("{}_sum", name),
          fmt::format("{}_count", name)};
}

}  // namespace

FamilyBase* Registry::Check(MetricType type, std::string_view name,
                            const std::vector<std::string>& label_names) const {
  if (Status st = ValidateMetricName(name); !st.ok()) Die(st.message());
  bool total = name.ends_with("_total");
  if (type == MetricType::kCounter && !total) {
    Die(fmt::format("counter {}: counter names end in _total", name));
  }
  if (type != MetricType::kCounter && total) {
    Die(fmt::format("{} {}: only counter names end in _total", TypeName(type), name));
  }
  for (size_t label_idx = 0; label_idx < label_names.size(); ++label_idx) {
    const std::string& label = label_names[label_idx];
    if (Status st = ValidateLabelName(label); !st.ok())
      Die(fmt::format("{}: {}", name, st.message()));
    if (type == MetricType::kHistogram && label == "le") {
      Die(fmt::format("histogram {}: label 'le' is reserved for buckets", name));
    }
    for (size_t other_idx = 0; other_idx < label_idx; ++other_idx) {
      if (label_names[other_idx] == label)
        Die(fmt::format("{}: label '{}' listed twice", name, label));
    }
  }
  auto it = families_.find(name);
  if (it != families_.end()) {
    FamilyBase& existing = *it->second;
    if (existing.type() != type || existing.label_names() != label_names) {
      Die(fmt::format("{} registered twice with different types or labels", name));
    }
    return &existing;
  }
  for (const std::string& series : SeriesNames(type, name)) {
    if (series_names_.contains(series)) {
      Die(fmt::format("{}: series name {} clashes with another family", name, series));
    }
  }
  return nullptr;
}

void Registry::Insert(std::unique_ptr<FamilyBase> family) {
  for (std::string& series : SeriesNames(family->type(), family->name())) {
    series_names_.insert(std::move(series));
  }
  std::string name = family->name();
  families_.emplace(std::move(name), std::move(family));
}

template <typename T>
Family<T>& Registry::Add(MetricType type, std::string_view name, std::string_view help,
                         std::vector<std::string> label_names, typename Family<T>::Factory factory,
                         const std::vector<double>* bounds) {
  std::unique_lock lock(mu_);
  if (FamilyBase* existing = Check(type, name, label_names)) {
    auto* same = dynamic_cast<Family<T>*>(existing);
    if (same == nullptr) Die(fmt::format("{} registered twice with different value types", name));
    if (bounds != nullptr && histogram_bounds_.find(name)->second != *bounds) {
      Die(fmt::format("histogram {} registered twice with different buckets", name));
    }
    return *same;
  }
  auto family = std::make_unique<Family<T>>(type, std::string(name), std::string(help),
                                            std::move(label_names), std::move(factory));
  Family<T>& ref = *family;
  if (bounds != nullptr) histogram_bounds_.emplace(std::string(name), *bounds);
  Insert(std::move(family));
  return ref;
}

Family<Counter>& Registry::AddCounter(std::string_view name, std::string_view help,
                                      std::vector<std::string> label_names) {
  return Add<Counter>(
      MetricType::kCounter, name, help, std::move(label_names),
      [] { return std::make_unique<Counter>(); }, nullptr);
}

Family<DoubleCounter>& Registry::AddDoubleCounter(std::string_view name, std::string_view help,
                                                  std::vector<std::string> label_names) {
  return Add<DoubleCounter>(
      MetricType::kCounter, name, help, std::move(label_names),
      [] { return std::make_unique<DoubleCounter>(); }, nullptr);
}

Family<Gauge>& Registry::AddGauge(std::string_view name, std::string_view help,
                                  std::vector<std::string> label_names) {
  return Add<Gauge>(
      MetricType::kGauge, name, help, std::move(label_names),
      [] { return std::make_unique<Gauge>(); }, nullptr);
}

Family<Histogram>& Registry::AddHistogram(std::string_view name, std::string_view help,
                                          std::vector<std::string> label_names,
                                          std::vector<double> bounds) {
  auto buckets = HistogramBuckets::Make(std::move(bounds), name);
  return Add<Histogram>(
      MetricType::kHistogram, name, help, std::move(label_names),
      [buckets] { return std::make_unique<Histogram>(buckets); }, &buckets->bounds);
}

void Registry::AddCallback(MetricType type, std::string_view name, std::string_view help,
                           std::vector<std::string> label_names, CollectFn fn) {
  if (type == MetricType::kHistogram) {
    Die(fmt::format("{}: callback families are counters or gauges", name));
  }
  std::unique_lock lock(mu_);
  if (Check(type, name, label_names) != nullptr) {
    Die(fmt::format("callback family {} registered twice", name));
  }
  Insert(std::make_unique<CallbackFamily>(type, std::string(name), std::string(help),
                                          std::move(label_names), std::move(fn)));
}

void Registry::AddGaugeFn(std::string_view name, std::string_view help,
                          std::function<double()> fn) {
  AddCallback(MetricType::kGauge, name, help, {},
              [fn = std::move(fn)](SampleSink& sink) { sink.Add(fn()); });
}

bool Registry::Remove(std::string_view name) {
  std::unique_lock lock(mu_);
  auto it = families_.find(name);
  if (it == families_.end()) return false;
  for (const std::string& series : SeriesNames(it->second->type(), name)) {
    series_names_.erase(series);
  }
  if (auto bounds = histogram_bounds_.find(name); bounds != histogram_bounds_.end()) {
    histogram_bounds_.erase(bounds);
  }
  families_.erase(it);
  return true;
}

std::string Registry::Render() const {
  std::string out;
  std::shared_lock lock(mu_);
  for (const auto& [name, family] : families_) family->Render(out);
  return out;
}

}  // namespace t0fs::metrics
