#include "bench/report_html.h"

#include <gtest/gtest.h>

#include <set>
#include <vector>

#include "bench/sweep_workload.h"
#include "bench/test_util.h"

namespace t0fs::bench {
namespace {

// Checks the markup is well-formed: every element closed in order.
bool WellFormed(const std::string& html, std::string* why) {
  std::vector<std::string> stack;
  size_t pos = 0;
  while ((pos = html.find('<', pos)) != std::string::npos) {
    size_t end = html.find('>', pos);
    if (end == std::string::npos) {
      *why = "unterminated tag";
      return false;
    }
    std::string tag = html.substr(pos + 1, end - pos - 1);
    pos = end + 1;
    if (tag.empty()) continue;
    if (tag[0] == '!') continue;  // DOCTYPE
    if (tag.back() == '/') continue;  // self-closed
    if (tag[0] == '/') {
      std::string name = tag.substr(1);
      if (stack.empty() || stack.back() != name) {
        *why = "unexpected </" + name + "> (open: " + (stack.empty() ? "" : stack.back()) + ")";
        return false;
      }
      stack.pop_back();
      continue;
    }
    std::string name = tag.substr(0, tag.find_first_of(" \t\n"));
    stack.push_back(name);
  }
  if (!stack.empty()) {
    *why = "unclosed <" + stack.back() + ">";
    return false;
  }
  return true;
}

size_t Count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t pos = s.find(what); pos != std::string::npos; pos = s.find(what, pos + 1)) ++n;
  return n;
}

TEST(Report, SelfContainedWellFormedOneChartPerFigure) {
  std::vector<ResultSet> sets = {SampleSet("networked <nfs>", 400e6, 30000, 3),
                                 SampleSet("tier0 & t0fs", 900e6, 10000, 3)};
  std::string html = RenderHtmlReport(sets, "A \"test\" report");
  std::string why;
  EXPECT_TRUE(WellFormed(html, &why)) << why;
  EXPECT_EQ(html.find("http://"), std::string::npos);
  EXPECT_EQ(html.find("https://"), std::string::npos);
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("<link"), std::string::npos);
  std::set<std::pair<std::string, std::string>> figures;
  for (const auto& s : sets[0].Summarize()) figures.insert({s.phase, s.figure.name});
  EXPECT_EQ(Count(html, "class=\"figure-chart\""), figures.size());
  EXPECT_EQ(Count(html, "class=\"latency-chart\""), 2u);  // read and write
  // The comparison: bandwidth +125 % (better), latency lower (better).
  EXPECT_NE(html.find("Comparison against networked &lt;nfs&gt;"), std::string::npos);
  EXPECT_NE(html.find("+125.0 %"), std::string::npos);
  EXPECT_NE(html.find("-57."), std::string::npos);  // latency mean 34995 -> 14995 ns
  EXPECT_EQ(html.find("class=\"num worse\""), std::string::npos);
  EXPECT_NE(html.find("class=\"num better\""), std::string::npos);
}

TEST(Report, SingleSetHasNoComparison) {
  std::string html = RenderHtmlReport({SampleSet("only", 1e8, 1000, 1)}, "r");
  EXPECT_EQ(html.find("Comparison"), std::string::npos);
  std::string why;
  EXPECT_TRUE(WellFormed(html, &why)) << why;
}

TEST(Report, SweepGetsACurveAndPeakFigures) {
  ResultSet set;
  set.kind = "sweep";
  set.label = "sweep";
  RunResult run;
  nlohmann::json curve = nlohmann::json::array();
  std::vector<std::pair<uint32_t, double>> w;
  for (uint32_t t : {1u, 2u, 4u}) {
    curve.push_back({{"threads", t}, {"write_children_see", 1e8 * t}, {"write_parent_sees", 9e7 * t},
                     {"read_children_see", 2e8}, {"read_parent_sees", 1.9e8}});
    w.emplace_back(t, 1e8 * t);
  }
  run.extra["curve"] = curve;
  run.extra["write"] = {{"children_see", ToJson(AnalyzeCurve(w))},
                        {"parent_sees", ToJson(AnalyzeCurve(w))}};
  run.extra["read"] = {{"children_see", ToJson(AnalyzeCurve({{1, 2e8}, {2, 2e8}, {4, 2e8}}))},
                       {"parent_sees", ToJson(AnalyzeCurve({{1, 2e8}, {2, 2e8}, {4, 2e8}}))}};
  set.runs.push_back(run);
  std::string html = RenderHtmlReport({set}, "sweep");
  std::string why;
  EXPECT_TRUE(WellFormed(html, &why)) << why;
  EXPECT_EQ(Count(html, "class=\"curve-chart\""), 1u);
  // write: 2 peaks (no plateau: still rising); read: 2 peaks + 2 plateaus.
  EXPECT_EQ(Count(html, "class=\"figure-chart\""), 6u);
}

TEST(Report, EscapesMarkup) {
  EXPECT_EQ(EscapeXml("<a href=\"x\">&'"), "&lt;a href=&quot;x&quot;&gt;&amp;&#39;");
}

}  // namespace
}  // namespace t0fs::bench
