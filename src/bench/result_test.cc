#include "bench/result.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "bench/test_util.h"

namespace t0fs::bench {
namespace {

TEST(Result, JsonRoundTripKeepsEverything) {
  ResultSet set = SampleSet("raw ext4", 500e6, 20000, 3);
  nlohmann::json j = ToJson(set);
  auto back = ResultSetFromJson(nlohmann::json::parse(j.dump()));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(ToJson(*back), j);
  EXPECT_EQ(back->runs[1].phases[0].latency.counts(), set.runs[1].phases[0].latency.counts());
  EXPECT_EQ(back->label, "raw ext4");
}

TEST(Result, JsonSchemaHasFioAndElbenchoViews) {
  nlohmann::json j = ToJson(SampleSet("a", 100e6, 1000, 1));
  EXPECT_EQ(j["format"], "t0fs-bench-result");
  const auto& phase = j["runs"][0]["phases"][0];
  for (const char* key : {"name", "first_done", "last_done", "latency_ns", "cpu", "figures",
                          "peak_rss_bytes", "fio"}) {
    EXPECT_TRUE(phase.contains(key)) << key;
  }
  EXPECT_NEAR(phase["fio"]["bw_bytes"].get<double>(), 100e6, 1);
  EXPECT_TRUE(phase["fio"]["clat_ns"]["percentile"].contains("99.900000"));
  EXPECT_TRUE(j["summary"][0].contains("cv_pct"));
}

TEST(Result, RejectsForeignOrBrokenJson) {
  EXPECT_FALSE(ResultSetFromJson(nlohmann::json::object()).ok());
  nlohmann::json j = ToJson(SampleSet("a", 1e6, 1000, 1));
  j["runs"][0]["phases"][0]["latency_ns"]["buckets"][0][0] = 999999;
  EXPECT_FALSE(ResultSetFromJson(j).ok());
}

TEST(Result, MedianAndCv) {
  EXPECT_EQ(Median({3, 1, 2}), 2);
  EXPECT_EQ(Median({4, 1, 2, 3}), 2.5);
  EXPECT_EQ(CoefficientOfVariation({5}), 0);
  EXPECT_NEAR(CoefficientOfVariation({9, 10, 11}), 10.0, 1e-9);
  ResultSet set = SampleSet("a", 100e6, 1000, 3);
  auto sums = set.Summarize();
  ASSERT_FALSE(sums.empty());
  EXPECT_EQ(sums[0].phase, "read");
  EXPECT_EQ(sums[0].figure.name, "bw");
  EXPECT_NEAR(sums[0].figure.value, 101e6, 1e3);
  EXPECT_EQ(sums[0].runs, 3u);
}

TEST(Result, CsvSchema) {
  std::string csv = ToCsv(SampleSet("a,b", 100e6, 1000, 2));
  std::istringstream in(csv);
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line, "label,kind,workload,run,phase,figure,value,unit,better");
  std::getline(in, line);
  EXPECT_EQ(line.rfind("\"a,b\",io,read 1 MiB,1,read,bw,", 0), 0u) << line;
  EXPECT_NE(csv.find(",median,read,bw,"), std::string::npos);
  EXPECT_NE(csv.find(",cv_pct,read,bw,"), std::string::npos);
}

TEST(Result, WriteFileAtomicLeavesNoTempFile) {
  TempDir dir;
  std::string path = dir.path() + "/r.json";
  ASSERT_TRUE(WriteFileAtomic(path, "{}\n").ok());
  size_t files = 0;
  for (auto& e : std::filesystem::directory_iterator(dir.path())) {
    (void)e;
    ++files;
  }
  EXPECT_EQ(files, 1u);
  EXPECT_FALSE(WriteFileAtomic(dir.path() + "/missing/r.json", "x").ok());
}

TEST(Result, Formatting) {
  EXPECT_EQ(FormatBytesPerSec(1024.0 * 1024 * 512), "512 MiB/s");
  EXPECT_EQ(FormatNanos(1500), "1.50 us");
  EXPECT_EQ(FormatValue(25000, "IOPS"), "25.0k IOPS");
}

}  // namespace
}  // namespace t0fs::bench
