// Registry: metric families (counter, gauge, histogram) with labelled series, rendered in the
// Prometheus text exposition format (version 0.0.4). Families are declared once at setup; series
// appear on first use. Thread-safe: one mutex, held only to update a number or to render.
#pragma once

#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace nurl::metrics {

// Label name/value pairs, in a fixed order per family.
using Labels = std::vector<std::pair<std::string, std::string>>;

class Registry {
 public:
  enum class Type { counter, gauge, histogram };

  // Histograms take their buckets' upper bounds, ascending (+Inf is implicit). Names must match
  // [a-zA-Z_:][a-zA-Z0-9_:]*; counters end in _total.
  void declare(const std::string& name, Type type, const std::string& help, std::vector<double> buckets = {});

  void add(const std::string& name, const Labels& labels, double v = 1);  // counter (v >= 0)
  void set(const std::string& name, const Labels& labels, double v);      // gauge
  // Gauge: replaces every series of the family (e.g. one per resident model).
  void set_all(const std::string& name, const std::vector<std::pair<Labels, double>>& series);
  void observe(const std::string& name, const Labels& labels, double v);  // histogram

  // "# HELP", "# TYPE" and the samples of every family, in declaration order.
  std::string exposition() const;

 private:
  struct Series {
    double value = 0;             // counter, gauge
    std::vector<uint64_t> counts;  // histogram: one per bucket (not cumulative) + the +Inf bucket
    double sum = 0;
    uint64_t count = 0;
  };
  struct Family {
    std::string name, help;
    Type type = Type::counter;
    std::vector<double> buckets;
    std::map<Labels, Series> series;
  };
  Series& series_locked(const std::string& name, const Labels& labels, Family** family);

  mutable std::mutex mu_;
  std::vector<Family> families_;
  std::map<std::string, size_t> index_;
  Family scratch_;  // where updates of undeclared names go (a bug, asserted in debug builds)
};

// A sample value as the exposition format writes it: shortest round-trip form, +Inf, -Inf, NaN.
std::string format_value(double v);

}  // namespace nurl::metrics
