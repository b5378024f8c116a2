// Registry: the set of metric families one daemon exposes, and the renderer
// of a scrape in the Prometheus text format 0.0.4.
//
// Each daemon owns one Registry (there is no global one, so an in-process
// cluster of several services keeps their numbers apart), hands it to its
// components at construction, and serves it with a MetricsServer.
//
// Registration validates names once and aborts on a programming error: a bad
// metric or label name, a counter not ending in _total (or another type
// ending in it), a histogram with a label named "le", or a name that clashes
// with another family (including a histogram's _bucket/_sum/_count series).
// Adding a family that already exists with the same type, labels (and
// buckets) returns the existing one, so two components may share a family.
//
// Lifetime: family references stay valid until Remove(name) or the
// registry's destruction. A callback may reference daemon state: Remove() it
// (or stop the server) before that state dies; Remove() waits for a scrape
// in progress.
//
// Thread safety: every method may be called from any thread. Families are
// rendered in name order and children in label-value order, so two scrapes
// of the same values are byte-identical.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <set>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <vector>

#include "metrics/family.h"

namespace t0fs::metrics {

class Registry {
 public:
  Registry() = default;
  Registry(const Registry&) = delete;
  Registry& operator=(const Registry&) = delete;

  Family<Counter>& AddCounter(std::string_view name, std::string_view help,
                              std::vector<std::string> label_names = {});
  Family<DoubleCounter>& AddDoubleCounter(std::string_view name, std::string_view help,
                                          std::vector<std::string> label_names = {});
  Family<Gauge>& AddGauge(std::string_view name, std::string_view help,
                          std::vector<std::string> label_names = {});
  // `bounds`: finite, strictly increasing upper bounds; +Inf is implicit.
  Family<Histogram>& AddHistogram(std::string_view name, std::string_view help,
                                  std::vector<std::string> label_names = {},
                                  std::vector<double> bounds = DefaultLatencyBuckets());

  // A family whose samples `fn` emits at each scrape; `type` is kCounter or
  // kGauge. Registering the same name twice is an error.
  void AddCallback(MetricType type, std::string_view name, std::string_view help,
                   std::vector<std::string> label_names, CollectFn fn);
  // An unlabelled gauge whose value `fn` returns at each scrape.
  void AddGaugeFn(std::string_view name, std::string_view help, std::function<double()> fn);

  // Removes a family; false if there is none. References to it dangle after.
  bool Remove(std::string_view name);

  // The whole exposition, in the text format 0.0.4.
  std::string Render() const;

 private:
  template <typename T>
  Family<T>& Add(MetricType type, std::string_view name, std::string_view help,
                 std::vector<std::string> label_names, typename Family<T>::Factory factory,
                 const std::vector<double>* bounds);
  // Validates names and clashes; returns the existing family of that name or null.
  FamilyBase* Check(MetricType type, std::string_view name,
                    const std::vector<std::string>& label_names) const;
  void Insert(std::unique_ptr<FamilyBase> family);

  // Guards families_, histogram_bounds_ and series_names_. Shared while
  // rendering (callbacks run under it), exclusive to add or remove.
  mutable std::shared_mutex mu_;
  std::map<std::string, std::unique_ptr<FamilyBase>, std::less<>> families_;
  std::map<std::string, std::vector<double>, std::less<>> histogram_bounds_;
  // Every sample name in use (a histogram's name, _bucket, _sum, _count).
  std::set<std::string, std::less<>> series_names_;
};

}  // namespace t0fs::metrics
