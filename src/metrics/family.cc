#include "metrics/family.h"

#include <algorithm>

#include <fmt/format.h>

#include "common/logging.h"
#include "metrics/names.h"
#include "metrics/text_format.h"

namespace t0fs::metrics {
namespace {

void AppendChild(std::string& out, const std::string& name, const std::string& labels,
                 const Counter& c) {
  AppendSample(out, name, "", labels, "", c.Value());
}

void AppendChild(std::string& out, const std::string& name, const std::string& labels,
                 const DoubleCounter& c) {
  AppendSample(out, name, "", labels, "", c.Value());
}

void AppendChild(std::string& out, const std::string& name, const std::string& labels,
                 const Gauge& g) {
  AppendSample(out, name, "", labels, "", g.Value());
}

void AppendChild(std::string& out, const std::string& name, const std::string& labels,
                 const Histogram& h) {
  Histogram::Snapshot snap = h.Collect();
  const std::vector<std::string>& le = h.buckets().le;
  for (size_t bucket_idx = 0; bucket_idx < snap.cumulative.size(); ++bucket_idx) {
    AppendSample(out, name, "_bucket", labels, le[bucket_idx], snap.cumulative[bucket_idx]);
  }
  AppendSample(out, name, "_sum", labels, "", snap.sum);
  AppendSample(out, name, "_count", labels, "", snap.count);
}

}  // namespace

std::string_view TypeName(MetricType type) {
  switch (type) {
    case MetricType::kCounter:
      return "counter";
    case MetricType::kGauge:
      return "gauge";
    case MetricType::kHistogram:
      return "histogram";
  }
  return "untyped";
}

std::vector<std::string> FamilyBase::LabelValues(std::initializer_list<Label> labels) const {
  CheckValueCount(labels.size());
  std::vector<std::string> values(label_names_.size());
  std::vector<bool> seen(label_names_.size());
  for (const auto& [label, value] : labels) {
    auto it = std::find(label_names_.begin(), label_names_.end(), label);
    if (it == label_names_.end()) {
      Die(fmt::format("{}: unknown label '{}' (labels: {})", name_, label,
                      fmt::join(label_names_, ", ")));
    }
    size_t label_idx = static_cast<size_t>(it - label_names_.begin());
    if (seen[label_idx]) Die(fmt::format("{}: label '{}' given twice", name_, label));
    seen[label_idx] = true;
    values[label_idx] = value;
  }
  return values;
}

void FamilyBase::CheckValueCount(size_t count) const {
  if (count != label_names_.size()) {
    Die(fmt::format("{}: {} label values given, the family has {} labels ({})", name_, count,
                    label_names_.size(), fmt::join(label_names_, ", ")));
  }
}

void FamilyBase::AppendHeader(std::string& out) const {
  metrics::AppendHeader(out, name_, help_, TypeName(type_));
}

template <typename T>
T& Family<T>::WithValues(std::vector<std::string> values) {
  CheckValueCount(values.size());
  std::lock_guard lock(mu_);
  auto it = children_.find(values);
  if (it == children_.end()) {
    Child child{RenderLabels(label_names_, values), factory_()};
    it = children_.emplace(std::move(values), std::move(child)).first;
  }
  return *it->second.metric;
}

template <typename T>
void Family<T>::Render(std::string& out) const {
  std::lock_guard lock(mu_);
  if (children_.empty()) return;
  AppendHeader(out);
  for (const auto& [values, child] : children_) {
    AppendChild(out, name_, child.labels_text, *child.metric);
  }
}

template class Family<Counter>;
template class Family<DoubleCounter>;
template class Family<Gauge>;
template class Family<Histogram>;

void CallbackFamily::Render(std::string& out) const {
  SampleSink sink;
  try {
    fn_(sink);
  } catch (const std::exception& e) {
    LOG_ERROR("metrics: collecting {} threw: {}", name_, e.what());
    return;
  }
  auto& samples = sink.samples_;
  std::stable_sort(samples.begin(), samples.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  bool header = false;
  for (size_t sample_idx = 0; sample_idx < samples.size(); ++sample_idx) {
    const auto& [values, value] = samples[sample_idx];
    if (values.size() != label_names_.size()) {
      LOG_ERROR("metrics: {} emitted {} label values for {} labels; sample dropped", name_,
                values.size(), label_names_.size());
      continue;
    }
    if (sample_idx > 0 && samples[sample_idx - 1].first == values) {
      LOG_ERROR("metrics: {} emitted labels {{{}}} twice; repeat dropped", name_,
                RenderLabels(label_names_, values));
      continue;
    }
    if (!header) {
      AppendHeader(out);
      header = true;
    }
    AppendSample(out, name_, "", RenderLabels(label_names_, values), "", value);
  }
}

}  // namespace t0fs::metrics
