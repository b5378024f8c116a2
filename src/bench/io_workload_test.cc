#include "bench/io_workload.h"

#include <fcntl.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>

#include "bench/test_util.h"

namespace t0fs::bench {
namespace {

constexpr uint64_t kKiB = 1024;

IoSpec SmallSpec(const std::string& dir, RwMode rw) {
  IoSpec spec;
  spec.path = dir;
  spec.rw = rw;
  spec.block = 4 * kKiB;
  spec.threads = 2;
  spec.size = 256 * kKiB;
  spec.drop = CacheDropMode::kFadvise;  // not the whole host's cache (auto as root)
  return spec;
}

size_t FilesIn(const std::string& dir) {
  size_t n = 0;
  for (auto& e : std::filesystem::directory_iterator(dir)) {
    (void)e;
    ++n;
  }
  return n;
}

const PhaseResult* Phase(const RunResult& run, const std::string& name) {
  for (const auto& p : run.phases) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

TEST(IoWorkload, MinimumSizeIsTheSmallestThatPlans) {
  // Each layout and split: MinimumIoSize plans, one byte less does not.
  for (FileLayout layout : {FileLayout::kPerThreadFiles, FileLayout::kSharedFiles}) {
    for (Split split : {Split::kPerThread, Split::kShared}) {
      for (uint32_t files : {1u, 3u, 64u}) {
        for (uint32_t threads : {1u, 5u, 32u}) {
          IoSpec spec = SmallSpec("/tmp", RwMode::kRead);
          spec.layout = layout;
          spec.split = split;
          spec.nrfiles = files;
          spec.threads = threads;
          spec.block = 1 << 20;
          uint64_t minimum = MinimumIoSize(spec, 1);
          spec.size = minimum;
          EXPECT_TRUE(PlanIoDataset(spec, 1).ok());
          DatasetSpec ds;
          ds.path = "/tmp";
          ds.layout = layout;
          ds.split = split;
          ds.nrfiles = files;
          ds.threads = threads;
          ds.block = spec.block;
          ds.size = minimum;
          EXPECT_TRUE(PlanDataset(ds).ok()) << minimum;
          ds.size = minimum - 1;
          EXPECT_FALSE(PlanDataset(ds).ok()) << minimum;
          spec.size = minimum - 1;
          auto small = PlanIoDataset(spec, 1);
          ASSERT_FALSE(small.ok());
          EXPECT_NE(small.status().message().find("smallest valid size is --size " +
                                                  SizeArgument(minimum)),
                    std::string::npos)
              << small.status().message();
        }
      }
    }
  }
  EXPECT_EQ(SizeArgument(uint64_t{2} << 30), "2G");
  EXPECT_EQ(SizeArgument(uint64_t{1536} << 20), "1536M");
  EXPECT_EQ(SizeArgument(4097), "4097");
}

TEST(IoWorkload, ByteAndOpCountsForEachMode) {
  for (RwMode rw : {RwMode::kRead, RwMode::kWrite, RwMode::kRandRead, RwMode::kRandWrite}) {
    TempDir dir;
    IoSpec spec = SmallSpec(dir.path(), rw);
    auto run = RunIo(spec, WorldComm());
    ASSERT_TRUE(run.ok()) << RwModeName(rw) << ": " << run.status().ToString();
    ASSERT_EQ(run->phases.size(), 1u);
    const PhaseResult& p = run->phases[0];
    // fio semantics: each of 2 threads moves --size.
    EXPECT_EQ(p.last_done.bytes, 2 * 256 * kKiB) << RwModeName(rw);
    EXPECT_EQ(p.last_done.ops, 2 * 64u);
    EXPECT_EQ(p.latency.count(), 2 * 64u);
    EXPECT_LE(p.first_done.bytes, p.last_done.bytes);
    EXPECT_GT(p.Find("bw")->value, 0);
    EXPECT_EQ(FilesIn(dir.path()), 0u) << "files left behind";
  }
}

TEST(IoWorkload, SharedSplitMovesTheDatasetOnce) {
  TempDir dir;
  IoSpec spec = SmallSpec(dir.path(), RwMode::kWrite);
  spec.split = Split::kShared;
  spec.layout = FileLayout::kSharedFiles;
  spec.layout_given = true;
  spec.threads = 3;
  spec.keep = true;
  auto run = RunIo(spec, WorldComm());
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  EXPECT_EQ(run->phases[0].last_done.bytes, 256 * kKiB);
  EXPECT_EQ(std::filesystem::file_size(dir.path() + "/t0fs-bench.shared"), 256 * kKiB);
}

TEST(IoWorkload, RandRwSplitsReadsAndWrites) {
  TempDir dir;
  IoSpec spec = SmallSpec(dir.path(), RwMode::kRandRW);
  spec.rwmixread = 70;
  spec.engine.kind = EngineKind::kUring;
  spec.iodepth = 8;
  auto run = RunIo(spec, WorldComm());
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  const PhaseResult* r = Phase(*run, "read");
  const PhaseResult* w = Phase(*run, "write");
  ASSERT_TRUE(r && w);
  EXPECT_EQ(r->last_done.ops + w->last_done.ops, 2 * 64u);
  EXPECT_GT(r->last_done.ops, w->last_done.ops);
}

TEST(IoWorkload, UringDirectTimeBasedWithRamp) {
  TempDir dir;
  IoSpec spec = SmallSpec(dir.path(), RwMode::kRandRead);
  spec.engine.kind = EngineKind::kUring;
  spec.iodepth = 4;
  spec.direct = true;
  spec.runtime_s = 0.3;
  spec.ramp_s = 0.1;
  auto run = RunIo(spec, WorldComm());
  if (!run.ok() && run.status().message().find("O_DIRECT") != std::string::npos) {
    GTEST_SKIP() << "no O_DIRECT on the temp file system";
  }
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  const PhaseResult& p = run->phases[0];
  EXPECT_GT(p.last_done.ops, 0u);
  EXPECT_EQ(p.latency.count(), p.last_done.ops);
  EXPECT_NEAR(p.last_done.elapsed_s, 0.3, 0.25);
}

TEST(IoWorkload, VerifyPassesThenCatchesACorruptedByte) {
  TempDir dir;
  IoSpec write = SmallSpec(dir.path(), RwMode::kWrite);
  write.verify = true;
  write.keep = true;
  ASSERT_TRUE(RunIo(write, WorldComm()).ok());
  IoSpec read = SmallSpec(dir.path(), RwMode::kRandRead);
  read.verify = true;
  read.keep = true;
  ASSERT_TRUE(RunIo(read, WorldComm()).ok());
  // Flip one byte of thread 1's file.
  std::string victim = dir.path() + "/t0fs-bench.1.0";
  int fd = ::open(victim.c_str(), O_RDWR);
  ASSERT_GE(fd, 0);
  unsigned char byte = 0;
  ASSERT_EQ(::pread(fd, &byte, 1, 100000), 1);
  byte ^= 0x40;
  ASSERT_EQ(::pwrite(fd, &byte, 1, 100000), 1);
  ::close(fd);
  auto bad = RunIo(read, WorldComm());
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kCorruption);
  EXPECT_NE(bad.status().message().find("offset 100000"), std::string::npos)
      << bad.status().message();
}

TEST(IoWorkload, ClearErrors) {
  IoSpec spec = SmallSpec("/nonexistent-dir/sub", RwMode::kRead);
  auto missing = RunIo(spec, WorldComm());
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("no such file or directory"), std::string::npos);
  IoSpec full = SmallSpec("/dev/full", RwMode::kWrite);
  full.threads = 1;
  auto nospace = RunIo(full, WorldComm());
  ASSERT_FALSE(nospace.ok());
  EXPECT_EQ(nospace.status().code(), StatusCode::kNoSpace) << nospace.status().ToString();
  IoSpec ramp = SmallSpec("/tmp", RwMode::kRead);
  ramp.ramp_s = 1;
  EXPECT_FALSE(ValidateIoSpec(ramp).ok());
  IoSpec native = SmallSpec("/tmp", RwMode::kRead);
  native.engine.kind = EngineKind::kNative;
  if (!EngineAvailable(EngineKind::kNative)) {
    Status st = ValidateIoSpec(native);
    EXPECT_NE(st.message().find("not in this build"), std::string::npos);
  } else {
    EXPECT_FALSE(FindT0fsMount("/tmp").ok());
  }
}

TEST(IoWorkload, MergeRanksIsExactForHistograms) {
  PhaseResult a = SamplePhase("read", 1e8, 1000);
  PhaseResult b = SamplePhase("read", 3e8, 5000);
  b.first_done.elapsed_s = 1.0;
  PhaseResult m = MergeRankPhases({a, b});
  Histogram both = a.latency;
  both.Merge(b.latency);
  EXPECT_EQ(m.latency.counts(), both.counts());
  EXPECT_EQ(m.last_done.bytes, a.last_done.bytes + b.last_done.bytes);
  EXPECT_EQ(m.first_done.elapsed_s, 1.0);
  EXPECT_EQ(m.workers, 4u);
  EXPECT_DOUBLE_EQ(m.cpu.user_s, 1.0);
}

}  // namespace
}  // namespace t0fs::bench
