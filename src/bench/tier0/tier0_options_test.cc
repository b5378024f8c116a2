#include "bench/tier0/tier0_options.h"

#include <gtest/gtest.h>

#include "bench/tier0/hosts_testbed.h"
#include "bench/tier0/tier0_report.h"

namespace t0fs::bench::tier0 {
namespace {

TEST(Tier0Options, LinkRates) {
  EXPECT_EQ(*ParseLinkRate("1gbit"), 1000000000ULL);
  EXPECT_EQ(*ParseLinkRate("10Gbit"), 10000000000ULL);
  EXPECT_EQ(*ParseLinkRate("500mbit"), 500000000ULL);
  for (const char* bad : {"", "gbit", "10", "10gb", "1.5gbit", "-1gbit", "500kbit", "999gbit"}) {
    EXPECT_FALSE(ParseLinkRate(bad).ok()) << bad;
  }
  EXPECT_EQ(BurstFor(*ParseLinkRate("1gbit")), "256kb");
  EXPECT_EQ(BurstFor(*ParseLinkRate("10gbit")), "4mb");
}

TEST(Tier0Options, PlanDefaultsAndQuick) {
  Tier0Options opts;
  auto full = MakePlan(opts);
  ASSERT_TRUE(full.ok()) << full.status().ToString();
  EXPECT_EQ(full->size, 1ULL << 30);
  EXPECT_EQ(full->threads, 4u);
  EXPECT_EQ(full->link_burst, "4mb");
  EXPECT_EQ(full->mlperf_files, 6u * 7 * 16);  // 6 steps of batch 7 at the largest probe
  opts.quick = true;
  auto quick = MakePlan(opts);
  ASSERT_TRUE(quick.ok());
  EXPECT_EQ(quick->size, 8ULL << 20);
  EXPECT_DOUBLE_EQ(quick->runtime_s, 1);
}

TEST(Tier0Options, BadInput) {
  Tier0Options opts;
  opts.gpu_nodes = 0;
  EXPECT_FALSE(MakePlan(opts).ok());
  opts = {};
  opts.size = "12Q";
  EXPECT_FALSE(MakePlan(opts).ok());
  opts = {};
  opts.size = "1M";  // less than 1 MiB per thread
  EXPECT_FALSE(MakePlan(opts).ok());
  opts = {};
  opts.link = "fast";
  EXPECT_FALSE(MakePlan(opts).ok());
  opts = {};
  opts.hosts = true;  // needs --meta, --secret-file, --gpu-mounts, --storage-node-ids
  EXPECT_FALSE(MakePlan(opts).ok());
}

TEST(Tier0Options, HostsMode) {
  auto mounts = ParseGpuMounts("1=local:/mnt/a,2=gpu2:/mnt/t0fs");
  ASSERT_TRUE(mounts.ok());
  ASSERT_EQ(mounts->size(), 2u);
  EXPECT_TRUE((*mounts)[0].IsLocal());
  EXPECT_EQ((*mounts)[1].host, "gpu2");
  EXPECT_EQ((*mounts)[1].mount, "/mnt/t0fs");
  for (const char* bad : {"", "1=local", "x=local:/m", "1=:/m", "1=h:rel", "1=h:/a,1=h:/b"}) {
    EXPECT_FALSE(ParseGpuMounts(bad).ok()) << bad;
  }
  Tier0Options opts;
  opts.hosts = true;
  opts.meta = "m:7700";
  opts.secret_file = "s";
  opts.gpu_mounts = "1=local:/mnt/a";
  opts.storage_node_ids = "1";  // a GPU node cannot also be the storage node
  EXPECT_FALSE(MakePlan(opts).ok());
  opts.storage_node_ids = "2";
  auto plan = MakePlan(opts);
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->gpu_nodes, 1u);
  EXPECT_EQ(plan->storage_nodes, 1u);
  EXPECT_EQ(ShellQuote("it's"), "'it'\\''s'");
}

TEST(Tier0Report, ImprovementAndLimit) {
  Row bw{"Seq read", "GB/s"};
  bw.m[0].value = 4.4;
  bw.m[1].value = 1.0;
  EXPECT_EQ(Improvement(bw), "4.40x");
  Row lat{"Write latency", "ms"};
  lat.higher_better = false;
  lat.m[0].value = 4.26;
  lat.m[1].value = 9.72;
  EXPECT_EQ(Improvement(lat), "-56 % (2.28x)");
  Row none{"x", "GB/s"};
  EXPECT_EQ(Improvement(none), "n/a");

  MachineFacts facts;
  facts.disk_read_bps = 1e9;
  facts.link_bps = 125e6;
  facts.storage_links = 1;
  bw.m[1].traffic_bps = 120e6;  // 96 % of a 1 Gbit/s link, 12 % of the disk
  bw.m[1].machine_busy_pct = 30;
  EXPECT_EQ(LikelyLimit(bw, Placement::kNetworked, facts), "link 96 %");
  bw.m[0].traffic_bps = 0.9e9;  // Tier 0 has no link
  bw.m[0].machine_busy_pct = 50;
  EXPECT_EQ(LikelyLimit(bw, Placement::kTier0, facts), "disk 90 %");
}

}  // namespace
}  // namespace t0fs::bench::tier0
