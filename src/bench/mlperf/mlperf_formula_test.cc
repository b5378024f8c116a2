// Every formula against hand-computed cases from the spec.
#include <gtest/gtest.h>

#include <cmath>

#include "bench/mlperf/au_metrics.h"
#include "bench/mlperf/checkpoint_model.h"
#include "bench/mlperf/sizing.h"
#include "bench/mlperf/training_config.h"
#include "bench/mlperf/training_search.h"

namespace t0fs::bench::mlperf {
namespace {

TEST(MlperfSizing, Unet3dByStepsAndByMemory) {
  // unet3d h100, 8 accelerators, 2 hosts of 128 GiB:
  //   by memory: 5 * 2 * 128 * 2^30 / 146600628 = 9375.3 -> 9375
  //   by steps:  500 * 8 * 7 / 1 = 28000
  SizingInput in{146600628, 1, 7, 8, 2, 128};
  Sizing s = ComputeSizing(in);
  EXPECT_EQ(s.files_by_memory, 9375u);
  EXPECT_EQ(s.files_by_steps, 28000u);
  EXPECT_EQ(s.required_files, 28000u);
  EXPECT_EQ(s.suggested_subfolders, 3u);  // 28000 > 10,000 files
  EXPECT_DOUBLE_EQ(s.total_bytes, 28000.0 * 146600628);
  // One accelerator, 512 GiB: memory dominates: 5 * 512 * 2^30 / 146600628 = 18750.6
  Sizing m = ComputeSizing({146600628, 1, 7, 1, 1, 512});
  EXPECT_EQ(m.files_by_memory, 18750u);
  EXPECT_EQ(m.files_by_steps, 3500u);
  EXPECT_EQ(m.required_files, 18750u);
}

TEST(MlperfSizing, Resnet50SamplesPerFile) {
  // resnet50: 1251 samples/file of 114660.07 B, batch 400, 16 accelerators, 1 x 64 GiB:
  //   by steps: 500 * 16 * 400 // 1251 = 3,200,000 // 1251 = 2557 (2557.95)
  //   by memory: 5 * 64 * 2^30 / (1251 * 114660.07) = 2395.4 -> 2395
  Sizing s = ComputeSizing({114660.07, 1251, 400, 16, 1, 64});
  EXPECT_EQ(s.files_by_steps, 2557u);
  EXPECT_EQ(s.files_by_memory, 2395u);
  EXPECT_EQ(s.required_files, 2557u);
  EXPECT_EQ(s.suggested_subfolders, 0u);
}

TEST(MlperfAu, BlockFormulasPerEdition) {
  // 4 steps of batch 7: compute 0.3 s each, proc[0] = 1.0 s (first load 0.7 s),
  // block 2.5 s. AU = (0.3 * 3) / (2.5 - 1.0) = 0.6.
  std::vector<double> compute = {0.3, 0.3, 0.3, 0.3};
  std::vector<double> proc = {1.0, 0.4, 0.4, 0.4};
  BlockMetrics v1 = ComputeBlock(compute, proc, 2.5, 7, Edition::k1_0);
  BlockMetrics v2 = ComputeBlock(compute, proc, 2.5, 7, Edition::k2_0);
  BlockMetrics v3 = ComputeBlock(compute, proc, 2.5, 7, Edition::k3_0);
  EXPECT_NEAR(v1.au, 0.6, 1e-12);
  EXPECT_NEAR(v2.au, 0.6, 1e-12);
  EXPECT_NEAR(v3.au, 0.6, 1e-12);
  EXPECT_NEAR(v1.throughput, 4 * 7 / 2.5, 1e-12);          // N*batch/T = 11.2
  EXPECT_NEAR(v2.throughput, (4 - 2) * 7 / 1.5, 1e-12);    // 9.333
  EXPECT_NEAR(v3.throughput, (4 - 1) * 7 / 1.5, 1e-12);    // 14.0
  // Empty windows give 0, never a division by zero.
  EXPECT_EQ(ComputeBlock({}, {}, 1.0, 7, Edition::k3_0).throughput, 0);
  std::vector<double> one = {0.3};
  EXPECT_EQ(ComputeBlock(one, one, 0.3, 7, Edition::k3_0).throughput, 0);
  EXPECT_EQ(ComputeBlock(one, one, 0.3, 7, Edition::k2_0).throughput, 0);
}

TEST(MlperfAu, AggregationOverRanksAndEpochs) {
  // Two ranks, two epochs: AU mean over ranks, throughput sum over ranks,
  // then mean (and population stdev) over epochs; MiB/s from the record length.
  std::vector<std::vector<BlockMetrics>> ranks = {
      {{0.9, 10, 5}, {0.8, 12, 5}},
      {{0.7, 20, 5}, {1.0, 14, 5}},
  };
  RunMetrics m = AggregateRun(ranks, 1048576.0 * 2, 0.85);
  ASSERT_EQ(m.au_pct.size(), 2u);
  EXPECT_NEAR(m.au_pct[0], 80, 1e-9);
  EXPECT_NEAR(m.au_pct[1], 90, 1e-9);
  EXPECT_NEAR(m.au_mean_pct, 85, 1e-9);
  EXPECT_NEAR(m.au_stdev_pct, 5, 1e-9);
  EXPECT_NEAR(m.throughput[0], 30, 1e-9);
  EXPECT_NEAR(m.throughput[1], 26, 1e-9);
  EXPECT_NEAR(m.throughput_mean, 28, 1e-9);
  EXPECT_NEAR(m.io_mean_mib, 56, 1e-9);  // 28 samples/s x 2 MiB
  EXPECT_TRUE(m.pass);                   // 85 >= 85
  EXPECT_FALSE(AggregateRun(ranks, 1, 0.86).pass);
  // Step-weighted block combination: (0.5*1 + 1.0*3) / 4.
  std::vector<BlockMetrics> blocks = {{0.5, 4, 1}, {1.0, 8, 3}};
  BlockMetrics c = CombineBlocks(blocks);
  EXPECT_NEAR(c.au, 0.875, 1e-12);
  EXPECT_NEAR(c.throughput, 7, 1e-12);
}

TEST(MlperfConfig, ReferenceParameters) {
  auto u = LookupWorkload("unet3d", "h100");
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(u->batch_size, 7u);
  EXPECT_DOUBLE_EQ(u->computation_time, 0.323);
  EXPECT_EQ(u->read_threads, 4u);
  EXPECT_TRUE(IsClosed(*u, Edition::k2_0));
  EXPECT_FALSE(IsClosed(*u, Edition::k3_0));
  auto r = LookupWorkload("retinanet", "mi355");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->batch_size, 32u);
  EXPECT_DOUBLE_EQ(r->min_au, 0.85);
  EXPECT_EQ(r->epochs, 8u);
  EXPECT_FALSE(LookupWorkload("resnet50", "b200").ok());
}

// Checkpoint byte counts: the spec's table (GiB), and exact per-rank optimizer bytes.
TEST(MlperfCheckpoint, ByteCountsPerModel) {
  const double gib = 1073741824.0;
  struct Case {
    const char* name;
    uint32_t ranks;
    uint64_t params;
    double model_gib, optim_gib;
    uint64_t optim_per_rank;
  } cases[] = {
      {"llama3-8b", 8, 8030261248ULL, 15.0, 89.7, 12045637632ULL},
      {"llama3-70b", 64, 69882617856ULL, 130.2, 781.0, 13103482368ULL},
      {"llama3-405b", 512, 405853388800ULL, 756.0, 4536.2, 9513171840ULL},
      {"llama3-1t", 1024, 1183035102480ULL, 2203.7, 13222.9, 13865244924ULL},
  };
  for (const auto& c : cases) {
    auto llm = LookupLlm(c.name);
    ASSERT_TRUE(llm.ok());
    EXPECT_EQ(NumParameters(*llm), c.params) << c.name;
    auto plan = PlanCheckpoint(*llm, 0, false);
    ASSERT_TRUE(plan.ok()) << plan.status().ToString();
    EXPECT_EQ(plan->ranks, c.ranks);
    EXPECT_NEAR(plan->model_bytes / gib, c.model_gib, 0.06) << c.name;
    EXPECT_NEAR(plan->optimizer_bytes / gib, c.optim_gib, 0.06) << c.name;
    EXPECT_EQ(plan->optimizer_bytes, c.optim_per_rank * c.ranks) << c.name;
    // Model state is the layers' fp16 bytes, with DLIO's per-layer split: the
    // two norms of every layer and the final norm (H each) are not divided by
    // TP, so each of the TP ranks holds a copy: 2 x (params + (TP-1)(2HL + H)).
    const uint64_t h = llm->hidden, extra = (llm->tp - 1) * (2 * h * llm->layers + h);
    EXPECT_EQ(plan->model_bytes, 2 * (c.params + extra)) << c.name;
  }
}

TEST(MlperfCheckpoint, FileLayout) {
  auto l8 = PlanCheckpoint(*LookupLlm("llama3-8b"), 0, false);
  ASSERT_TRUE(l8.ok());
  ASSERT_EQ(l8->files[3].size(), 2u);
  EXPECT_EQ(l8->files[3][0].name, "zero_pp_rank_3_mp_rank_0_model_states.pt");
  EXPECT_EQ(l8->files[3][1].name, "zero_pp_rank_3_mp_rank_0_optim_states.pt");
  EXPECT_NEAR(l8->RankBytes(0) / 1073741824.0, 13.09, 0.01);
  // 405B (ZeRO-1, PP 32): DP-0 ranks write one file per owned layer; 126 layers
  // over 32 stages: stages 0..29 own 4, 30..31 own 3; stage 0 adds layer 0.
  auto l405 = PlanCheckpoint(*LookupLlm("llama3-405b"), 0, false);
  ASSERT_TRUE(l405.ok());
  EXPECT_EQ(l405->files[0].size(), 5u + 1);  // layers 0..4 + optimizer
  EXPECT_EQ(l405->files[0][0].name, "layer_0-model_0_model_states.pt");
  EXPECT_EQ(l405->files[0].back().name, "zero_pp_rank_0_mp_rank_0_optim_states.pt");
  EXPECT_EQ(l405->files[256].size(), 1u);  // DP rank 1: optimizer only
  EXPECT_EQ(l405->files[256][0].name, "zero_pp_rank_1_mp_rank_0_optim_states.pt");
  // Last stage (pp 31, ranks 248..255): layers 124..126 + lm_head 127 + norm 128.
  EXPECT_EQ(l405->files[255].size(), 5u + 1);
  EXPECT_EQ(l405->files[255][0].name, "layer_124-model_255_model_states.pt");
  EXPECT_NEAR(l405->RankBytes(256) / 1073741824.0, 8.86, 0.01);
  EXPECT_NEAR(l405->RankBytes(0) / 1073741824.0, 12.32, 0.01);
  // Subset: 8 ranks of the 70B CLOSED layout write 8 x 14.24 GiB = 114 GiB.
  auto sub = PlanCheckpoint(*LookupLlm("llama3-70b"), 8, true);
  ASSERT_TRUE(sub.ok());
  EXPECT_NEAR(sub->total_bytes() / 1073741824.0, 113.9, 0.1);
  // Files per checkpoint: ZeRO-3 two per rank; ZeRO-1 one per (layer index, TP
  // rank) over the L + 3 layer indices, plus one optimizer file per rank.
  auto files_of = [](const CheckpointPlan& p) {
    size_t n = 0;
    for (const auto& f : p.files) n += f.size();
    return n;
  };
  EXPECT_EQ(files_of(*l8), 16u);
  EXPECT_EQ(files_of(*PlanCheckpoint(*LookupLlm("llama3-70b"), 0, false)), 128u);
  EXPECT_EQ(files_of(*l405), 129u * 8 + 512);
  EXPECT_EQ(files_of(*PlanCheckpoint(*LookupLlm("llama3-1t"), 0, false)), 131u * 8 + 1024);
  // Subset of the large ZeRO-1 models: ranks 0..7 are PP stage 0 (with the
  // embedding): 405B 98.54 GiB, 1T 143.72 GiB (the rules' table: 94 / 161 GB,
  // rows withdrawn in v3.0; docs/mlperf.md).
  auto s405 = PlanCheckpoint(*LookupLlm("llama3-405b"), 8, true);
  ASSERT_TRUE(s405.ok());
  EXPECT_NEAR(s405->total_bytes() / 1073741824.0, 98.54, 0.01);
  auto s1t = PlanCheckpoint(*LookupLlm("llama3-1t"), 8, true);
  ASSERT_TRUE(s1t.ok());
  EXPECT_NEAR(s1t->total_bytes() / 1073741824.0, 143.72, 0.01);
  // OPEN rank counts must be multiples of TP x PP.
  EXPECT_FALSE(PlanCheckpoint(*LookupLlm("llama3-70b"), 12, false).ok());
  // 1T: formula (default) vs mlpstorage's table (2571 + 15426 GiB).
  auto t = PlanCheckpoint(*LookupLlm("llama3-1t"), 0, false, OneTSize::kTable);
  ASSERT_TRUE(t.ok());
  EXPECT_NEAR(t->model_bytes / 1073741824.0, 2571, 0.5);
  EXPECT_NEAR(t->optimizer_bytes / 1073741824.0, 15426, 0.5);
}

TEST(MlperfSearch, DoublingThenBisection) {
  // Passes up to 11 accelerators.
  auto probe = [](uint32_t n) -> Result<SearchProbe> {
    SearchProbe p;
    p.pass = n <= 11;
    p.throughput = 10.0 * n;
    return p;
  };
  auto out = SearchMaxAccelerators(1, 64, probe);
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(out->best.accelerators, 11u);
  EXPECT_DOUBLE_EQ(out->best.throughput, 110);
  std::vector<uint32_t> order;
  for (const auto& p : out->probes) order.push_back(p.accelerators);
  EXPECT_EQ(order, (std::vector<uint32_t>{1, 2, 4, 8, 16, 12, 10, 11}));
  // Even the minimum fails: 0.
  auto none = SearchMaxAccelerators(1, 8, [](uint32_t) -> Result<SearchProbe> {
    return SearchProbe{};
  });
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->best.accelerators, 0u);
  // Everything passes: the maximum.
  auto all = SearchMaxAccelerators(3, 20, [](uint32_t) -> Result<SearchProbe> {
    SearchProbe p;
    p.pass = true;
    return p;
  });
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->best.accelerators, 20u);
}

}  // namespace
}  // namespace t0fs::bench::mlperf
