// Library-level end to end on a temporary directory: datagen, a training run
// whose AU responds to the storage, a checkpoint write/read, a KV-cache trial.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include "bench/mlperf/checkpoint_run.h"
#include "bench/mlperf/datagen.h"
#include "bench/mlperf/kvcache_run.h"
#include "bench/mlperf/training_run.h"
#include "bench/test_util.h"

namespace t0fs::bench::mlperf {
namespace {

TrainingWorkload TinyUnet() {
  TrainingWorkload w = *LookupWorkload("unet3d", "h100");
  w.record_length = 64 * 1024;
  w.record_length_stdev = 16 * 1024;
  w.batch_size = 2;
  w.read_threads = 2;
  w.epochs = 2;
  return w;
}

TEST(MlperfRun, DatagenThenTrainingAuRespondsToStorage) {
  TempDir dir;
  TrainingWorkload w = TinyUnet();
  DatagenSpec gen;
  gen.workload = w;
  gen.layout = {dir.path() + "/unet3d", "npz", 16, 0};
  gen.threads = 2;
  gen.engine.buffer_size = 1 << 20;
  gen.fsync = false;
  auto made = RunDatagen(gen, WorldComm());
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  EXPECT_EQ(made->sizes.files, 16u);
  EXPECT_DOUBLE_EQ(made->sizes.bytes, PlanDatasetSizes(w, 16).bytes);

  auto layout = DetectDataset(dir.path() + "/unet3d", "npz");
  ASSERT_TRUE(layout.ok());
  EXPECT_EQ(layout->total_files, 16u);
  TrainingSpec spec;
  spec.workload = w;
  spec.layout = *layout;
  spec.files = 16;
  spec.accelerators = 2;
  spec.drop = CacheDropMode::kFadvise;
  // Compute dwarfs I/O: AU near 100 %.
  spec.workload.computation_time = 0.05;
  auto fast = RunTraining(spec, WorldComm(), nullptr);
  ASSERT_TRUE(fast.ok()) << fast.status().ToString();
  EXPECT_EQ(fast->steps_per_epoch, 4u);  // 16 files / 2 ranks / batch 2
  EXPECT_EQ(fast->samples, 2u * 16);     // every file once per epoch
  EXPECT_DOUBLE_EQ(static_cast<double>(fast->bytes), 2 * made->sizes.bytes);
  EXPECT_GT(fast->metrics.au_mean_pct, 80);
  // Throttled reads (test hook): AU far below 90 %.
  spec.workload.computation_time = 0.002;
  spec.read.delay_per_file_s = 0.03;
  auto slow = RunTraining(spec, WorldComm(), nullptr);
  ASSERT_TRUE(slow.ok());
  EXPECT_LT(slow->metrics.au_mean_pct, 50);
  EXPECT_FALSE(slow->metrics.pass);
}

TEST(MlperfRun, CheckpointWriteThenRead) {
  TempDir dir;
  auto plan = PlanCheckpoint(*LookupLlm("llama3-8b"), 0, false);
  ASSERT_TRUE(plan.ok());
  CheckpointSpec spec;
  spec.plan = *plan;
  spec.folder = dir.path();
  spec.writes = 2;
  spec.reads = 2;
  spec.time_between_s = 0;
  spec.scale = 1e-6;  // 13 GiB per rank -> 16 KiB
  spec.drop = CacheDropMode::kFadvise;
  spec.host_memory_gib = 1;
  auto r = RunCheckpointing(spec, WorldComm(), nullptr);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->writes.size(), 2u);
  EXPECT_EQ(r->reads.size(), 2u);
  EXPECT_EQ(r->files_per_checkpoint, 16u);
  EXPECT_EQ(r->writes[0].rank_seconds.size(), 8u);
  EXPECT_EQ(r->full_bytes_per_checkpoint, plan->total_bytes());
  EXPECT_NE(r->advisory.find("less than 3 x client RAM"), std::string::npos);
  // Files removed afterwards.
  struct stat st {};
  EXPECT_NE(::stat((dir.path() + "/llama3-8b").c_str(), &st), 0);
}

TEST(MlperfRun, KvCacheTrial) {
  TempDir dir;
  KvRunSpec spec;
  spec.option = *ClosedOption(2);  // with a CPU tier
  spec.option.users = 6;
  spec.option.duration_s = 1.5;
  spec.option.cpu_gb = 0.00005;  // ~50 KiB: most entries go to (or spill to) storage
  spec.model = *LookupKvModel(spec.option.model);
  spec.cache_dir = dir.path();
  spec.scale = 1e-4;
  spec.transfer = 1 << 20;
  auto t = RunKvTrial(spec, 1, WorldComm());
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  ASSERT_EQ(t->clients.size(), 1u);
  EXPECT_GT(t->clients[0].requests, 0u);
  EXPECT_GT(t->clients[0].stats.storage_write_bytes, 0u);
  EXPECT_GT(t->StorageTokensPerSec(), 0);
}

}  // namespace
}  // namespace t0fs::bench::mlperf
