#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <vector>

#include "data/chunk_store.h"
#include "data/chunk_store_fixture.h"
#include "data/orphan_sweep.h"
#include "data/removed_log.h"

// Removal on a data node: tombstones against stale writers (kept across a
// restart by RemovedLog), and removals deferred for a chunk placed again.
namespace t0fs::data {
namespace {

TEST_F(ChunkStoreTest, RemoveDropsAnUnnamedChunk) {
  auto fds = store_.OpenLocal(VolumeId(3), ChunkId(42), true, true, false, true);
  ASSERT_TRUE(fds.ok());
  ASSERT_TRUE(store_.Remove(VolumeId(3), ChunkId(42)).ok());
  EXPECT_EQ(store_.UnnamedCount(), 0u);
  EXPECT_FALSE(Named(dir_, ChunkId(42)));
  // A lazy open that is not a writer's, or direct, takes the named path.
  EXPECT_FALSE(
      store_.OpenLocal(VolumeId(3), ChunkId(43), true, true, /*direct=*/true, true)->unnamed);
  EXPECT_TRUE(Named(dir_, ChunkId(43)));
  EXPECT_EQ(store_.OpenLocal(VolumeId(3), ChunkId(44), false, false, false, true).status().code(),
            StatusCode::kDataNoChunk);
}

// A removed chunk left every layout (or this node's replica was dropped):
// a writer whose cached layout still has it at version 0 must not create
// it again as a file no layout names. A copy meta places here ends that;
// an erasure-coded cell is written again at each version.
TEST_F(ChunkStoreTest, ARemovedChunkIsNotCreatedAgainByAStaleWriter) {
  std::vector<std::byte> data(100, std::byte{7});
  auto held = store_.OpenLocal(VolumeId(3), ChunkId(60), true, true, false, /*lazy=*/true);
  ASSERT_TRUE(held.ok() && held->unnamed);
  ASSERT_TRUE(store_.Write(VolumeId(3), ChunkId(61), 0, data, 1, false).ok());
  ASSERT_TRUE(store_.Remove(VolumeId(3), ChunkId(60)).ok());
  ASSERT_TRUE(store_.Remove(VolumeId(3), ChunkId(61)).ok());
  for (ChunkId id : {ChunkId(60), ChunkId(61)}) {
    EXPECT_EQ(store_.Write(VolumeId(3), id, 0, data, 1, false).code(), StatusCode::kStale)
        << id.value();
    EXPECT_EQ(store_.Truncate(VolumeId(3), id, 10, 1).code(), StatusCode::kStale) << id.value();
    EXPECT_EQ(store_.OpenLocal(VolumeId(3), id, true, true, false, true).status().code(),
              StatusCode::kStale)
        << id.value();
    EXPECT_EQ(store_.OpenLocal(VolumeId(3), id, true, true, false).status().code(),
              StatusCode::kStale)
        << id.value();
  }
  // The unnamed files handed out before the removal get no name.
  EXPECT_EQ(store_.Adopt(VolumeId(3), ChunkId(60), held->data.get(), held->crc.get()).code(),
            StatusCode::kStale);
  EXPECT_FALSE(Named(dir_, ChunkId(60)));
  EXPECT_FALSE(Named(dir_, ChunkId(61)));
  EXPECT_EQ(store_.ChunkCount(VolumeId(3)), 0u);
  // Meta places a replica here again: a copy, then writes as any chunk.
  auto temp = store_.CreateTemp(VolumeId(3), ChunkId(61));
  ASSERT_TRUE(temp.ok());
  ASSERT_TRUE((*temp)->Write(0, data, 1).ok());
  temp->reset();
  ASSERT_TRUE(store_.CommitTemp(VolumeId(3), ChunkId(61)).ok());
  EXPECT_TRUE(store_.Write(VolumeId(3), ChunkId(61), 0, data, 2, false, 1).ok());
  // A cell of an erasure-coded chunk is written again at its next version.
  const ChunkId cell(ChunkId(62).value() | uint64_t{2} << 56);
  ASSERT_TRUE(store_.Write(VolumeId(3), cell, 0, data, 3, false).ok());
  ASSERT_TRUE(store_.Remove(VolumeId(3), cell).ok());
  EXPECT_TRUE(store_.Write(VolumeId(3), cell, 0, data, 4, false).ok());
}

// A removal meta queued reaches the node in a heartbeat reply; meta may
// withdraw it and place the chunk here again before the node acts on it
// (a repair copy, an erasure-coded cell): a removal queued before the
// chunk's files were placed here is deferred, one queued after is done.
TEST_F(ChunkStoreTest, ARemovalQueuedBeforeTheChunkWasPlacedAgainIsDeferred) {
  using Clock = std::chrono::steady_clock;
  std::vector<std::byte> data(100, std::byte{7});
  const auto place_copy = [&](ChunkId chunk) {
    auto temp = store_.CreateTemp(VolumeId(3), chunk);
    ASSERT_TRUE(temp.ok());
    ASSERT_TRUE((*temp)->Write(0, data, 2).ok());
    temp->reset();
    ASSERT_TRUE(store_.CommitTemp(VolumeId(3), chunk).ok());
  };
  ASSERT_TRUE(store_.Write(VolumeId(3), ChunkId(90), 0, data, 1, false).ok());
  const Clock::time_point before = Clock::now();
  ASSERT_TRUE(store_.Remove(VolumeId(3), ChunkId(90), before).ok());  // nothing placed since
  EXPECT_FALSE(Named(dir_, ChunkId(90)));

  const Clock::time_point queued = Clock::now();
  place_copy(ChunkId(90));  // withdrawn and placed again while the reply travelled
  EXPECT_EQ(store_.Remove(VolumeId(3), ChunkId(90), queued).code(), StatusCode::kTryAgain);
  EXPECT_TRUE(Named(dir_, ChunkId(90)));
  auto stat = store_.Stat(VolumeId(3), ChunkId(90));
  ASSERT_TRUE(stat.ok()) << stat.status().ToString();
  EXPECT_EQ(stat->version, 2u);
  // Queued again after the copy (meta wants it gone after all): done.
  ASSERT_TRUE(store_.Remove(VolumeId(3), ChunkId(90), Clock::now()).ok());
  EXPECT_FALSE(Named(dir_, ChunkId(90)));

  // An erasure-coded cell written anew likewise, also over files still
  // there (an encode at a new version).
  const ChunkId cell(ChunkId(91).value() | uint64_t{1} << 56);
  ASSERT_TRUE(store_.Write(VolumeId(3), cell, 0, data, 3, false).ok());
  const Clock::time_point cell_queued = Clock::now();
  ASSERT_TRUE(store_.Write(VolumeId(3), cell, 0, data, 4, false).ok());
  EXPECT_EQ(store_.Remove(VolumeId(3), cell, cell_queued).code(), StatusCode::kTryAgain);
  EXPECT_TRUE(Named(dir_, cell));
  // A lazily opened chunk named later (Adopt) counts from its naming.
  auto held = store_.OpenLocal(VolumeId(3), ChunkId(92), true, true, false, /*lazy=*/true);
  ASSERT_TRUE(held.ok() && held->unnamed);
  const Clock::time_point named_queued = Clock::now();
  ASSERT_TRUE(store_.Adopt(VolumeId(3), ChunkId(92), held->data.get(), held->crc.get()).ok());
  EXPECT_EQ(store_.Remove(VolumeId(3), ChunkId(92), named_queued).code(), StatusCode::kTryAgain);
  // A reply older than the placements remembered cannot tell: deferred.
  ASSERT_TRUE(store_.Write(VolumeId(3), ChunkId(93), 0, data, 1, false).ok());
  EXPECT_EQ(store_
                .Remove(VolumeId(3), ChunkId(93),
                        Clock::now() - ChunkStore::kPlacedMemory - std::chrono::seconds(1))
                .code(),
            StatusCode::kTryAgain);
  EXPECT_TRUE(Named(dir_, ChunkId(93)));
  // Without a queue time (a client's removal), as before.
  ASSERT_TRUE(store_.Remove(VolumeId(3), ChunkId(93)).ok());
  EXPECT_FALSE(Named(dir_, ChunkId(93)));
}

// The list of removed chunks outlives the process: the volume keeps it
// (RemovedLog), and a placement recorded there ends a chunk's refusal.
TEST_F(ChunkStoreTest, ARestartedStoreStillRefusesRemovedChunks) {
  std::vector<std::byte> data(100, std::byte{7});
  for (uint64_t id : {70, 71}) {
    ASSERT_TRUE(store_.Write(VolumeId(3), ChunkId(id), 0, data, 1, false).ok());
    ASSERT_TRUE(store_.Remove(VolumeId(3), ChunkId(id)).ok());
  }
  auto temp = store_.CreateTemp(VolumeId(3), ChunkId(71));  // meta places 71 here again
  ASSERT_TRUE(temp.ok());
  ASSERT_TRUE((*temp)->Write(0, data, 2).ok());
  temp->reset();
  ASSERT_TRUE(store_.CommitTemp(VolumeId(3), ChunkId(71)).ok());
  ASSERT_TRUE(store_.Remove(VolumeId(3), ChunkId(71)).ok());
  temp = store_.CreateTemp(VolumeId(3), ChunkId(71));  // and again after a second removal
  ASSERT_TRUE(temp.ok());
  ASSERT_TRUE((*temp)->Write(0, data, 2).ok());
  temp->reset();
  ASSERT_TRUE(store_.CommitTemp(VolumeId(3), ChunkId(71)).ok());

  ChunkStore restarted(4);
  restarted.AddVolume(VolumeId(3), dir_);
  EXPECT_EQ(restarted.Write(VolumeId(3), ChunkId(70), 0, data, 1, false).code(),
            StatusCode::kStale);
  EXPECT_EQ(restarted.OpenLocal(VolumeId(3), ChunkId(70), true, true, false, true).status().code(),
            StatusCode::kStale);
  EXPECT_TRUE(restarted.Write(VolumeId(3), ChunkId(71), 0, data, 3, false).ok());
  EXPECT_TRUE(restarted.Write(VolumeId(3), ChunkId(72), 0, data, 1, false).ok());  // never removed
}

// The chunk ids of `log`'s removals at `now_ms`, oldest first.
std::vector<uint64_t> LoadedIds(const RemovedLog& log, int64_t now_ms) {
  std::vector<uint64_t> ids;
  for (const RemovedLog::Removal& r : log.Load(now_ms)) ids.push_back(r.chunk.value());
  return ids;
}

TEST(RemovedLog, KeepsTheLastMemoryAcrossRotationsAndSkipsATornRecord) {
  const std::string dir =
      std::filesystem::temp_directory_path() / ("t0fs-removed-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const int64_t minute = 60 * 1000;
  {
    RemovedLog log(dir, std::chrono::minutes(15), /*capacity=*/100);
    ASSERT_TRUE(log.Append(ChunkId(1), false, 0).ok());
    ASSERT_TRUE(log.Append(ChunkId(2), false, 10 * minute).ok());
    ASSERT_TRUE(log.Append(ChunkId(3), false, 20 * minute).ok());  // rotates first
    ASSERT_TRUE(log.Append(ChunkId(4), false, 21 * minute).ok());
    ASSERT_TRUE(log.Append(ChunkId(4), true, 22 * minute).ok());  // placed again
    ASSERT_TRUE(log.Append(ChunkId(5), false, 23 * minute).ok());
  }
  {
    std::ofstream torn(dir + "/" + RemovedLog::kName, std::ios::binary | std::ios::app);
    torn.write("\x01\x02\x03", 3);  // a crash mid-append
  }
  RemovedLog log(dir, std::chrono::minutes(15), 100);
  EXPECT_EQ(LoadedIds(log, 24 * minute), (std::vector<uint64_t>{2, 3, 5}));  // 1 is 24 min old
  EXPECT_EQ(LoadedIds(log, 30 * minute), (std::vector<uint64_t>{3, 5}));
  // Appends after a torn record stay readable.
  ASSERT_TRUE(log.Append(ChunkId(6), false, 30 * minute).ok());
  EXPECT_EQ(LoadedIds(log, 30 * minute), (std::vector<uint64_t>{3, 5, 6}));
  std::filesystem::remove_all(dir);
}

TEST(RemovedLog, PastItsCapacityTheOldestAreForgotten) {
  const std::string dir =
      std::filesystem::temp_directory_path() / ("t0fs-removed-cap-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  RemovedLog log(dir, std::chrono::minutes(15), /*capacity=*/2);
  for (uint64_t id = 1; id <= 5; ++id) ASSERT_TRUE(log.Append(ChunkId(id), false, id).ok());
  EXPECT_EQ(LoadedIds(log, 10), (std::vector<uint64_t>{3, 4, 5}));
  std::filesystem::remove_all(dir);
}

// The orphan sweep offers every named chunk file once, in id order, a page
// at a time, and stops between pages when asked to.
TEST_F(ChunkStoreTest, TheOrphanSweepOffersEveryNamedFileOncePageByPage) {
  std::vector<std::byte> data(10, std::byte{1});
  for (uint64_t id = 1; id <= 25; ++id) {
    ASSERT_TRUE(store_.Write(VolumeId(3), ChunkId(id * 3), 0, data, 1, false).ok());
  }
  auto unnamed = store_.OpenLocal(VolumeId(3), ChunkId(200), true, true, false, /*lazy=*/true);
  ASSERT_TRUE(unnamed.ok() && unnamed->unnamed);  // no name: not offered
  std::vector<std::vector<ChunkId>> pages;
  auto queue = [&](VolumeId volume, const std::vector<ChunkId>& files) -> Result<uint64_t> {
    EXPECT_EQ(volume, VolumeId(3));
    pages.push_back(files);
    return std::count_if(files.begin(), files.end(),
                         [](ChunkId c) { return c.value() > 60; });  // meta's verdict
  };
  auto swept = SweepVolume(store_, VolumeId(3), 10, queue, [] { return false; });
  ASSERT_TRUE(swept.ok()) << swept.status().ToString();
  EXPECT_EQ(swept->offered, 25u);
  EXPECT_EQ(swept->queued, 5u);  // 63 .. 75
  ASSERT_EQ(pages.size(), 3u);
  EXPECT_EQ(pages[2].size(), 5u);
  std::vector<ChunkId> all;
  for (const auto& p : pages) all.insert(all.end(), p.begin(), p.end());
  for (size_t i = 0; i < all.size(); ++i) EXPECT_EQ(all[i], ChunkId((i + 1) * 3));

  // Asked to stop after the first page; a failing meta ends the sweep.
  pages.clear();
  swept = SweepVolume(store_, VolumeId(3), 10, queue, [&] { return !pages.empty(); });
  ASSERT_TRUE(swept.ok());
  EXPECT_EQ(swept->offered, 10u);
  auto failing = [](VolumeId, const std::vector<ChunkId>&) -> Result<uint64_t> {
    return Status(StatusCode::kRpcTimeout, "meta is away");
  };
  EXPECT_EQ(SweepVolume(store_, VolumeId(3), 10, failing, [] { return false; }).status().code(),
            StatusCode::kRpcTimeout);
  EXPECT_EQ(SweepVolume(store_, VolumeId(9), 10, queue, [] { return false; }).status().code(),
            StatusCode::kDataNoVolume);
}

}  // namespace
}  // namespace t0fs::data
