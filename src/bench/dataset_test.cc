#include "bench/dataset.h"

#include <gtest/gtest.h>

#include <set>

#include "bench/permutation.h"

namespace t0fs::bench {
namespace {

constexpr uint64_t kMiB = 1 << 20;

TEST(Dataset, FioPerThreadFilesEachThreadDoesSize) {
  DatasetSpec s{"/d", false, FileLayout::kPerThreadFiles, Split::kPerThread, 4, 2, 64 * kMiB, kMiB};
  auto plan = PlanDataset(s);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  ASSERT_EQ(plan->files.size(), 8u);
  EXPECT_EQ(plan->files[0].path, "/d/t0fs-bench.0.0");
  EXPECT_EQ(plan->files[7].path, "/d/t0fs-bench.3.1");
  for (const auto& f : plan->files) EXPECT_EQ(f.size, 32 * kMiB);
  for (const auto& share : plan->shares) EXPECT_EQ(share.length, 64 * kMiB);
  EXPECT_EQ(plan->TotalFileBytes(), 4 * 64 * kMiB);
}

TEST(Dataset, ElbenchoSharedSplitOfFilesDividesTheDataset) {
  DatasetSpec s{"/d", false, FileLayout::kPerThreadFiles, Split::kShared, 4, 2, 64 * kMiB, kMiB};
  auto plan = PlanDataset(s);
  ASSERT_TRUE(plan.ok());
  for (const auto& f : plan->files) EXPECT_EQ(f.size, 8 * kMiB);
  EXPECT_EQ(plan->TotalFileBytes(), 64 * kMiB);
}

TEST(Dataset, FioSharedFileEveryThreadCoversTheWholeFile) {
  DatasetSpec s{"/d", false, FileLayout::kSharedFiles, Split::kPerThread, 3, 1, 30 * kMiB, kMiB};
  auto plan = PlanDataset(s);
  ASSERT_TRUE(plan.ok());
  ASSERT_EQ(plan->files.size(), 1u);
  EXPECT_EQ(plan->files[0].path, "/d/t0fs-bench.shared");
  for (const auto& share : plan->shares) {
    ASSERT_EQ(share.segments.size(), 1u);
    EXPECT_EQ(share.segments[0].offset, 0u);
    EXPECT_EQ(share.length, 30 * kMiB);
  }
}

TEST(Dataset, ElbenchoFairShareIsContiguousDisjointAndComplete) {
  // 10 blocks over 3 threads: 3, 3, 4 blocks; ranges tile the file.
  DatasetSpec s{"/f", true, FileLayout::kSharedFiles, Split::kShared, 3, 1, 10 * kMiB, kMiB};
  auto plan = PlanDataset(s);
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->files[0].path, "/f");
  uint64_t next = 0, total = 0;
  for (const auto& share : plan->shares) {
    ASSERT_EQ(share.segments.size(), 1u);
    EXPECT_EQ(share.segments[0].offset, next);
    next += share.segments[0].length;
    total += share.length;
    EXPECT_GE(share.length, 3 * kMiB);
    EXPECT_LE(share.length, 4 * kMiB);
  }
  EXPECT_EQ(total, 10 * kMiB);
}

TEST(Dataset, FairShareAcrossSeveralSharedFiles) {
  DatasetSpec s{"/d", false, FileLayout::kSharedFiles, Split::kShared, 3, 2, 8 * kMiB, kMiB};
  auto plan = PlanDataset(s);
  ASSERT_TRUE(plan.ok());
  ASSERT_EQ(plan->files.size(), 2u);
  // 8 blocks: shares of 2, 3, 3 blocks; thread 1 spans both files.
  EXPECT_EQ(plan->shares[1].segments.size(), 2u);
  Location loc = Locate(plan->shares[1], 2 * kMiB);
  EXPECT_EQ(loc.file, 1u);
  EXPECT_EQ(loc.file_offset, 0u);
}

TEST(Dataset, RejectsTooSmallOrBadSpecs) {
  DatasetSpec s{"/d", false, FileLayout::kPerThreadFiles, Split::kShared, 8, 4, 4 * kMiB, kMiB};
  EXPECT_FALSE(PlanDataset(s).ok());  // 4 MiB over 32 files of 1 MiB blocks
  s.block = 0;
  EXPECT_FALSE(PlanDataset(s).ok());
  DatasetSpec f{"/f", true, FileLayout::kPerThreadFiles, Split::kShared, 1, 1, kMiB, kMiB};
  EXPECT_FALSE(PlanDataset(f).ok());
}

TEST(Permutation, IsABijection) {
  for (uint64_t n : {1ull, 2ull, 3ull, 17ull, 1000ull, 4096ull, 100003ull}) {
    Permutation perm(n, 99);
    std::set<uint64_t> seen;
    for (uint64_t idx = 0; idx < n; ++idx) {
      uint64_t v = perm(idx);
      ASSERT_LT(v, n);
      seen.insert(v);
    }
    EXPECT_EQ(seen.size(), n);
  }
}

TEST(Permutation, LooksShuffled) {
  Permutation perm(10000, 1);
  int in_place = 0;
  for (uint64_t idx = 0; idx < 10000; ++idx) in_place += perm(idx) == idx;
  EXPECT_LT(in_place, 20);
}

}  // namespace
}  // namespace t0fs::bench
