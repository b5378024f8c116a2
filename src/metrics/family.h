// Metric families: one metric name, its help, its type and its label names;
// each distinct set of label values is a child (a Counter, Gauge or
// Histogram) created on first use and never destroyed while the family lives.
//
//   auto& ops = registry.AddCounter("t0fs_meta_ops_total", "metadata operations",
//                                   {"op", "result"});
//   Counter& lookups_ok = ops.With({{"op", "lookup"}, {"result", "ok"}});  // once
//   lookups_ok.Inc();                                                       // hot path
//
// With() takes a lock and searches a map: call it once, at setup or the first
// time a label combination appears, and keep the reference (it stays valid
// until the family is removed from its registry). A label set that does not
// name exactly the family's labels is a programming error and aborts.
//
// CallbackFamily holds no children: its function is called at each scrape
// and emits the current samples (chunks per volume, node states, process
// stats). The function runs on the metrics server's thread; it must not
// block for long, must not throw, and must not call into the registry.
//
// Thread safety: With() and the children's methods from any thread.
#pragma once

#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "metrics/counter.h"
#include "metrics/gauge.h"
#include "metrics/histogram.h"

namespace t0fs::metrics {

enum class MetricType { kCounter, kGauge, kHistogram };
std::string_view TypeName(MetricType type);  // "counter", as in # TYPE

// A label name and its value, as passed to With().
using Label = std::pair<std::string_view, std::string_view>;

class FamilyBase {
 public:
  virtual ~FamilyBase() = default;
  FamilyBase(const FamilyBase&) = delete;
  FamilyBase& operator=(const FamilyBase&) = delete;

  const std::string& name() const { return name_; }
  const std::string& help() const { return help_; }
  MetricType type() const { return type_; }
  const std::vector<std::string>& label_names() const { return label_names_; }

  // Appends the family (HELP, TYPE and samples in label-value order) in the
  // text format; appends nothing when it has no samples.
  virtual void Render(std::string& out) const = 0;

 protected:
  FamilyBase(MetricType type, std::string name, std::string help,
             std::vector<std::string> label_names)
      : type_(type),
        name_(std::move(name)),
        help_(std::move(help)),
        label_names_(std::move(label_names)) {}
  // Orders `labels` as label_names(); aborts unless they name each exactly once.
  std::vector<std::string> LabelValues(std::initializer_list<Label> labels) const;
  void CheckValueCount(size_t count) const;
  void AppendHeader(std::string& out) const;

  const MetricType type_;
  const std::string name_;
  const std::string help_;
  const std::vector<std::string> label_names_;
};

// T is Counter, DoubleCounter, Gauge or Histogram.
template <typename T>
class Family final : public FamilyBase {
 public:
  using Factory = std::function<std::unique_ptr<T>()>;
  Family(MetricType type, std::string name, std::string help, std::vector<std::string> label_names,
         Factory factory)
      : FamilyBase(type, std::move(name), std::move(help), std::move(label_names)),
        factory_(std::move(factory)) {}

  // The child for these labels: {{"op", "read"}, {"result", "ok"}}, in any order.
  T& With(std::initializer_list<Label> labels) { return WithValues(LabelValues(labels)); }
  // The child for label values given in the order of label_names().
  T& WithValues(std::vector<std::string> values);

  void Render(std::string& out) const override;

 private:
  struct Child {
    std::string labels_text;  // rendered once: op="read",result="ok"
    std::unique_ptr<T> metric;
  };
  const Factory factory_;
  mutable std::mutex mu_;  // guards children_ (the map, not the children's values)
  std::map<std::vector<std::string>, Child> children_;
};

extern template class Family<Counter>;
extern template class Family<DoubleCounter>;
extern template class Family<Gauge>;
extern template class Family<Histogram>;

// Receives the samples a CallbackFamily's function emits during one scrape.
class SampleSink {
 public:
  // One sample; `values` in the order of the family's label names.
  void Add(std::vector<std::string> values, double value) {
    samples_.emplace_back(std::move(values), value);
  }
  // The sample of a family without labels.
  void Add(double value) { samples_.emplace_back(std::vector<std::string>{}, value); }

 private:
  friend class CallbackFamily;
  std::vector<std::pair<std::vector<std::string>, double>> samples_;
};

using CollectFn = std::function<void(SampleSink&)>;

class CallbackFamily final : public FamilyBase {
 public:
  CallbackFamily(MetricType type, std::string name, std::string help,
                 std::vector<std::string> label_names, CollectFn fn)
      : FamilyBase(type, std::move(name), std::move(help), std::move(label_names)),
        fn_(std::move(fn)) {}

  // Runs the function. Samples with the wrong number of label values, and
  // repeated label values, are dropped and logged (they would make the whole
  // scrape invalid); an exception from the function drops the family.
  void Render(std::string& out) const override;

 private:
  const CollectFn fn_;
};

}  // namespace t0fs::metrics
