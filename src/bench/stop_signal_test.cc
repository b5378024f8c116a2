#include "bench/stop_signal.h"

#include <gtest/gtest.h>
#include <signal.h>

#include <thread>

#include "bench/io_workload.h"
#include "bench/meta_workload.h"
#include "bench/sweep_workload.h"
#include "bench/test_util.h"

namespace t0fs::bench {
namespace {

// Lowers the process-wide flag before and after each test.
class Stop : public ::testing::Test {
 protected:
  void SetUp() override { ResetStopForTest(); }
  void TearDown() override { ResetStopForTest(); }
};

TEST_F(Stop, FlagSignalAndExitCode) {
  EXPECT_FALSE(StopRequested());
  EXPECT_EQ(StopSignal(), 0);
  EXPECT_TRUE(SleepUnlessStopped(0.001));
  RequestStop(SIGINT);
  RequestStop(SIGTERM);  // the first request wins
  EXPECT_TRUE(StopRequested());
  EXPECT_EQ(StopSignalName(), "SIGINT");
  EXPECT_EQ(StopExitCode(), 130);
  EXPECT_FALSE(SleepUnlessStopped(60));  // returns at once
  ResetStopForTest();
  RequestStop(SIGTERM);
  EXPECT_EQ(StopExitCode(), 143);
}

TEST_F(Stop, ASleepEndsWhenTheStopComes) {
  std::thread stopper([] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    RequestStop(SIGTERM);
  });
  // Without the wake-up this would sleep for 10 minutes (the test's timeout).
  EXPECT_FALSE(SleepUnlessStopped(600));
  EXPECT_TRUE(StopRequested(std::chrono::milliseconds(10)));
  stopper.join();
}

TEST_F(Stop, TheWatcherTurnsASignalIntoTheFlag) {
  StopWatcher watcher;  // blocks the stop signals in this thread; takes them
  ::kill(::getpid(), SIGTERM);
  EXPECT_TRUE(StopRequested(std::chrono::seconds(600)));
  EXPECT_EQ(StopSignal(), SIGTERM);
}

TEST_F(Stop, AnIoRunStoppedEarlyReportsWhatRanAndCleansUp) {
  TempDir dir;
  IoSpec spec;
  spec.path = dir.path();
  spec.rw = RwMode::kRead;
  spec.block = 4096;
  spec.threads = 2;
  spec.size = 64 << 10;
  spec.runtime_s = 600;  // a stop, not the clock, ends it
  spec.drop = CacheDropMode::kFadvise;
  std::thread stopper([] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    RequestStop(SIGINT);
  });
  auto run = RunIo(spec, WorldComm());
  stopper.join();
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  EXPECT_TRUE(run->stopped_early);
  EXPECT_EQ(run->cache.done, "fadvise");
  EXPECT_TRUE(std::filesystem::is_empty(dir.path())) << "files left behind";
}

TEST_F(Stop, ASweepAndAMetaRunStopAtOnce) {
  TempDir dir;
  RequestStop(SIGINT);
  SweepSpec sweep;
  sweep.path = dir.path();
  sweep.threads = {1, 2};
  sweep.total = 1 << 20;
  sweep.record = 64 << 10;
  sweep.drop = CacheDropMode::kFadvise;
  auto s = RunSweep(sweep, WorldComm());
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_TRUE(s->stopped_early);
  EXPECT_TRUE(s->extra["curve"].empty());
  MetaSpec meta;
  meta.path = dir.path();
  meta.items = 100000;
  auto m = RunMeta(meta, WorldComm());
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_TRUE(m->stopped_early);
  EXPECT_EQ(m->phases.size(), 1u);  // the first phase ran (cut), the others not
  EXPECT_TRUE(std::filesystem::is_empty(dir.path())) << "files left behind";
}

}  // namespace
}  // namespace t0fs::bench
