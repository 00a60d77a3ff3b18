#include "metrics/registry.h"

#include <cassert>
#include <charconv>
#include <cmath>

namespace nurl::metrics {

namespace {

std::string escape(const std::string& s, bool quote) {
  std::string out;
  for (char c : s) {
    if (c == '\\') out += "\\\\";
    else if (c == '\n') out += "\\n";
    else if (c == '"' && quote) out += "\\\"";
    else out += c;
  }
  return out;
}

std::string label_text(const Labels& labels, const std::string& extra_name = "", const std::string& extra = "") {
  if (labels.empty() && extra_name.empty()) return "";
  std::string out = "{";
  for (const auto& [k, v] : labels) {
    if (out.size() > 1) out += ",";
    out += k + "=\"" + escape(v, true) + "\"";
  }
  if (!extra_name.empty()) {
    if (out.size() > 1) out += ",";
    out += extra_name + "=\"" + extra + "\"";
  }
  return out + "}";
}

}  // namespace

std::string format_value(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

void Registry::declare(const std::string& name, Type type, const std::string& help, std::vector<double> buckets) {
  std::lock_guard lk(mu_);
  if (index_.count(name)) return;
  index_[name] = families_.size();
  families_.push_back(Family{name, help, type, std::move(buckets), {}});
}

Registry::Series& Registry::series_locked(const std::string& name, const Labels& labels, Family** family) {
  auto it = index_.find(name);
  assert(it != index_.end() && "metric not declared");
  if (it == index_.end()) {  // a bug: the update goes nowhere
    *family = &scratch_;
    return scratch_.series[labels];
  }
  Family& f = families_[it->second];
  *family = &f;
  Series& s = f.series[labels];
  if (f.type == Type::histogram && s.counts.empty()) s.counts.assign(f.buckets.size() + 1, 0);
  return s;
}

void Registry::add(const std::string& name, const Labels& labels, double v) {
  std::lock_guard lk(mu_);
  Family* f;
  series_locked(name, labels, &f).value += v;
}

void Registry::set(const std::string& name, const Labels& labels, double v) {
  std::lock_guard lk(mu_);
  Family* f;
  series_locked(name, labels, &f).value = v;
}

void Registry::set_all(const std::string& name, const std::vector<std::pair<Labels, double>>& series) {
  std::lock_guard lk(mu_);
  auto it = index_.find(name);
  assert(it != index_.end() && "metric not declared");
  if (it == index_.end()) return;
  auto& all = families_[it->second].series;
  all.clear();
  for (const auto& [labels, v] : series) all[labels].value = v;
}

void Registry::observe(const std::string& name, const Labels& labels, double v) {
  std::lock_guard lk(mu_);
  Family* f;
  Series& s = series_locked(name, labels, &f);
  size_t b = 0;
  while (b < f->buckets.size() && v > f->buckets[b]) ++b;
  if (b < s.counts.size()) ++s.counts[b];
  s.sum += v;
  ++s.count;
}

std::string Registry::exposition() const {
  std::lock_guard lk(mu_);
  std::string out;
  for (const auto& f : families_) {
    const char* type = f.type == Type::counter ? "counter" : f.type == Type::gauge ? "gauge" : "histogram";
    out += "# HELP " + f.name + " " + escape(f.help, false) + "\n";
    out += "# TYPE " + f.name + " " + type + "\n";
    for (const auto& [labels, s] : f.series) {
      if (f.type != Type::histogram) {
        out += f.name + label_text(labels) + " " + format_value(s.value) + "\n";
        continue;
      }
      uint64_t cumulative = 0;
      for (size_t b = 0; b <= f.buckets.size(); ++b) {
        cumulative += s.counts[b];
        const std::string le = b < f.buckets.size() ? format_value(f.buckets[b]) : "+Inf";
        out += f.name + "_bucket" + label_text(labels, "le", le) + " " + std::to_string(cumulative) + "\n";
      }
      out += f.name + "_sum" + label_text(labels) + " " + format_value(s.sum) + "\n";
      out += f.name + "_count" + label_text(labels) + " " + std::to_string(s.count) + "\n";
    }
  }
  return out;
}

}  // namespace nurl::metrics
