#include "data/chunk_store.h"

#include <unistd.h>

#include <cstring>
#include <filesystem>

#include <gtest/gtest.h>

#include "common/buffer.h"
#include "data/volume.h"

namespace t0fs::data {
namespace {

class ChunkStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("t0fs-store-" + std::to_string(::getpid()));
    auto vol = Volume::Open(dir_);
    ASSERT_TRUE(vol.ok()) << vol.status().ToString();
    store_.AddVolume(VolumeId(3), dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string dir_;
  ChunkStore store_{4};  // tiny cache: exercises eviction
};

TEST_F(ChunkStoreTest, WriteReadStatRemove) {
  std::vector<std::byte> data(5000, std::byte{9});
  for (uint64_t id = 1; id <= 10; ++id) {
    ASSERT_TRUE(store_.Write(VolumeId(3), ChunkId(id), 100, data, id, false).ok());
  }
  EXPECT_EQ(store_.ChunkCount(VolumeId(3)), 10u);
  AlignedBuffer buf(8192);
  uint64_t version = 0;
  auto n = store_.Read(VolumeId(3), ChunkId(2), 0, std::span(buf.data(), 8192), 0, &version);
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(*n, 5100u);
  EXPECT_EQ(version, 2u);
  EXPECT_EQ(store_.Read(VolumeId(3), ChunkId(2), 0, std::span(buf.data(), 10), 3, &version).status().code(),
            StatusCode::kStale);
  auto st = store_.Stat(VolumeId(3), ChunkId(7));
  ASSERT_TRUE(st.ok());
  EXPECT_EQ(st->length, 5100u);
  ASSERT_TRUE(store_.Remove(VolumeId(3), ChunkId(7)).ok());
  ASSERT_TRUE(store_.Remove(VolumeId(3), ChunkId(7)).ok());  // idempotent
  EXPECT_EQ(store_.Stat(VolumeId(3), ChunkId(7)).status().code(), StatusCode::kDataNoChunk);
  EXPECT_EQ(store_.ChunkCount(VolumeId(3)), 9u);
  EXPECT_EQ(store_.Read(VolumeId(4), ChunkId(2), 0, std::span(buf.data(), 10), 0, &version).status().code(),
            StatusCode::kDataNoVolume);
  bool eof = false;
  auto list = store_.List(VolumeId(3), ChunkId(3), 100, &eof);
  ASSERT_TRUE(list.ok());
  EXPECT_TRUE(eof);
  ASSERT_EQ(list->size(), 6u);  // 4,5,6,8,9,10
  EXPECT_EQ((*list)[0].chunk, ChunkId(4));
}

TEST_F(ChunkStoreTest, LocalDescriptorsShareTheFormat) {
  auto fds = store_.OpenLocal(VolumeId(3), ChunkId(11), true, true, false);
  ASSERT_TRUE(fds.ok()) << fds.status().ToString();
  ChunkFile local(ChunkId(11), std::move(fds->data), std::move(fds->crc), false);
  ASSERT_TRUE(local.InitOrValidate().ok());
  std::vector<std::byte> data(10000, std::byte{5});
  ASSERT_TRUE(local.Write(1, data, 4).ok());
  // The service reads what the local client wrote, verified.
  AlignedBuffer buf(16384);
  uint64_t version = 0;
  auto n = store_.Read(VolumeId(3), ChunkId(11), 0, std::span(buf.data(), 16384), 4, &version);
  ASSERT_TRUE(n.ok()) << n.status().ToString();
  EXPECT_EQ(*n, 10001u);
  EXPECT_EQ(buf.data()[5000], std::byte{5});
}

TEST(VolumeTest, IdentityPersistsAndRefusesOtherCluster) {
  std::string dir = std::filesystem::temp_directory_path() / ("t0fs-vol-" + std::to_string(::getpid()));
  {
    auto vol = Volume::Open(dir);
    ASSERT_TRUE(vol.ok());
    ASSERT_TRUE(vol->Bind("cluster-a", NodeId(1), VolumeId(2)).ok());
  }
  auto again = Volume::Open(dir);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->identity().node, NodeId(1));
  EXPECT_EQ(again->identity().volume, VolumeId(2));
  EXPECT_EQ(again->Bind("cluster-b", NodeId(1), VolumeId(2)).code(), StatusCode::kDataWrongCluster);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace t0fs::data
