#include "bench/report_checks.h"

#include <gtest/gtest.h>

#include "bench/report_html.h"
#include "bench/test_util.h"

namespace t0fs::bench {
namespace {

// A read set whose every run dropped the cache with `done`, leaving `resident`.
ResultSet ReadSet(const std::string& label, const std::string& done, double resident) {
  ResultSet set = SampleSet(label, 500e6, 20000, 2);
  for (auto& run : set.runs) {
    run.cache.requested = "auto";
    run.cache.done = done;
    run.cache.drops = 1;
    run.cache.resident = resident;
    run.cache.files = run.cache.files_checked = 2;
  }
  return set;
}

bool Mentions(const std::vector<std::string>& warnings, const std::string& text) {
  for (const auto& w : warnings) {
    if (w.find(text) != std::string::npos) return true;
  }
  return false;
}

TEST(ReportChecks, ACleanSetHasNoWarning) {
  EXPECT_TRUE(SetWarnings(ReadSet("raw", "sysctl", 0.0)).empty());
  EXPECT_TRUE(SetWarnings(ReadSet("direct", "direct", -1)).empty());
  EXPECT_TRUE(SetWarnings(SampleSet("no reads recorded", 1e9, 1000, 1)).empty());
}

TEST(ReportChecks, ResidencyAboveTheLimitIsFlagged) {
  auto w = SetWarnings(ReadSet("t0fs", "fadvise", 0.97));
  ASSERT_EQ(w.size(), 1u);
  EXPECT_NE(w[0].find("t0fs"), std::string::npos);
  EXPECT_NE(w[0].find("97 %"), std::string::npos);
  EXPECT_NE(w[0].find("still in memory"), std::string::npos);
  // A few percent is noise, not a warning.
  EXPECT_TRUE(SetWarnings(ReadSet("t0fs", "fadvise", kResidentLimit / 2)).empty());
  EXPECT_TRUE(Mentions(SetWarnings(ReadSet("warm", "none", 1.0)), "not dropped"));
}

TEST(ReportChecks, StoppedAndUnrecordedSetsAreFlagged) {
  ResultSet stopped = ReadSet("cut", "sysctl", 0);
  stopped.stopped_by = "SIGINT";
  EXPECT_TRUE(Mentions(SetWarnings(stopped), "stopped early by SIGINT"));
  ResultSet old = ReadSet("old", "unrecorded", -1);
  EXPECT_TRUE(Mentions(SetWarnings(old), "not recorded"));
}

TEST(ReportChecks, DifferentCacheHandlingIsFlaggedOnlyInAComparison) {
  std::vector<ResultSet> alike = {ReadSet("raw", "sysctl", 0), ReadSet("t0fs", "sysctl", 0.01)};
  EXPECT_TRUE(ComparisonWarnings(alike).empty());
  std::vector<ResultSet> differ = {ReadSet("raw", "sysctl", 0), ReadSet("t0fs", "fadvise", 0.01)};
  auto w = ComparisonWarnings(differ);
  ASSERT_EQ(w.size(), 1u);
  EXPECT_NE(w[0].find("differently"), std::string::npos);
  EXPECT_NE(w[0].find("raw: drop_caches"), std::string::npos);
  EXPECT_NE(w[0].find("t0fs: fadvise"), std::string::npos);
  EXPECT_TRUE(ComparisonWarnings({differ[1]}).empty()) << "one set compares with nothing";
  // A set without reads does not take part.
  std::vector<ResultSet> with_writes = {ReadSet("raw", "sysctl", 0),
                                        SampleSet("writes", 1e9, 1000, 1)};
  EXPECT_TRUE(ComparisonWarnings(with_writes).empty());
}

TEST(ReportChecks, AResultWithoutCacheRecordReadsBackAsUnrecorded) {
  nlohmann::json j = ToJson(ReadSet("x", "sysctl", 0));
  for (auto& run : j["runs"]) run.erase("cache");
  auto back = ResultSetFromJson(j);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->Cache().done, "unrecorded");
  // And the recorded fields round-trip.
  ResultSet cut = ReadSet("cut", "fadvise", 0.5);
  cut.stopped_by = "SIGTERM";
  cut.runs.back().stopped_early = true;
  auto again = ResultSetFromJson(ToJson(cut));
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->stopped_by, "SIGTERM");
  EXPECT_TRUE(again->runs.back().stopped_early);
  EXPECT_DOUBLE_EQ(again->Cache().resident, 0.5);
  EXPECT_EQ(ToJson(cut)["stopped_early"], true);
  EXPECT_EQ(ToJson(cut)["cache"]["done"], "fadvise");
}

TEST(ReportChecks, TheHtmlReportShowsTheWarning) {
  std::vector<ResultSet> differ = {ReadSet("raw", "sysctl", 0), ReadSet("t0fs", "fadvise", 0.9)};
  std::string html = RenderHtmlReport(differ, "r");
  EXPECT_NE(html.find("class=\"warning\""), std::string::npos);
  EXPECT_NE(html.find("handled the page cache differently"), std::string::npos);
  EXPECT_NE(html.find("still in memory"), std::string::npos);
  std::string clean =
      RenderHtmlReport({ReadSet("raw", "sysctl", 0), ReadSet("t0fs", "sysctl", 0)}, "r");
  EXPECT_EQ(clean.find("class=\"warning\""), std::string::npos);
}

}  // namespace
}  // namespace t0fs::bench
