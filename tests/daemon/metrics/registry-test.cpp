// The metric registry against the Prometheus text exposition format (version 0.0.4): HELP and
// TYPE lines, label escaping, cumulative histogram buckets with le="+Inf", _sum and _count, and
// values in their shortest form.
#include "metrics/registry.h"

#include <gtest/gtest.h>

#include <limits>
#include <thread>

namespace nurl::metrics {
namespace {

TEST(Registry, ExpositionFormat) {
  Registry r;
  r.declare("x_requests_total", Registry::Type::counter, "Requests.\nTwo lines \\ here.");
  r.declare("x_depth", Registry::Type::gauge, "Depth.");
  r.declare("x_seconds", Registry::Type::histogram, "Latency.", {0.1, 1});
  r.add("x_requests_total", {{"route", "/a\"b\\c\nd"}, {"status", "200"}}, 2);
  r.add("x_requests_total", {{"route", "/a\"b\\c\nd"}, {"status", "200"}});
  r.set("x_depth", {}, 1.5);
  r.observe("x_seconds", {}, 0.05);
  r.observe("x_seconds", {}, 0.5);
  r.observe("x_seconds", {}, 7);
  EXPECT_EQ(r.exposition(),
            "# HELP x_requests_total Requests.\\nTwo lines \\\\ here.\n"
            "# TYPE x_requests_total counter\n"
            "x_requests_total{route=\"/a\\\"b\\\\c\\nd\",status=\"200\"} 3\n"
            "# HELP x_depth Depth.\n"
            "# TYPE x_depth gauge\n"
            "x_depth 1.5\n"
            "# HELP x_seconds Latency.\n"
            "# TYPE x_seconds histogram\n"
            "x_seconds_bucket{le=\"0.1\"} 1\n"
            "x_seconds_bucket{le=\"1\"} 2\n"
            "x_seconds_bucket{le=\"+Inf\"} 3\n"
            "x_seconds_sum 7.55\n"
            "x_seconds_count 3\n");
}

TEST(Registry, SetAllReplacesEverySeries) {
  Registry r;
  r.declare("m_bytes", Registry::Type::gauge, "Bytes.");
  r.set_all("m_bytes", {{{{"model", "a"}}, 1}, {{{"model", "b"}}, 2}});
  r.set_all("m_bytes", {{{{"model", "b"}}, 3}});
  EXPECT_EQ(r.exposition(), "# HELP m_bytes Bytes.\n# TYPE m_bytes gauge\nm_bytes{model=\"b\"} 3\n");
}

TEST(Registry, ConcurrentUpdatesAllCount) {
  Registry r;
  r.declare("c_total", Registry::Type::counter, "C.");
  std::vector<std::thread> ts;
  for (int t = 0; t < 4; ++t)
    ts.emplace_back([&] {
      for (int i = 0; i < 10000; ++i) r.add("c_total", {});
    });
  for (auto& t : ts) t.join();
  EXPECT_NE(r.exposition().find("c_total 40000\n"), std::string::npos);
}

TEST(Registry, Values) {
  EXPECT_EQ(format_value(0), "0");
  EXPECT_EQ(format_value(12345678901.0), "12345678901");
  EXPECT_EQ(format_value(0.1), "0.1");
  EXPECT_EQ(format_value(std::numeric_limits<double>::infinity()), "+Inf");
}

}  // namespace
}  // namespace nurl::metrics
