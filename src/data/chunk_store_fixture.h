// The fixture and helpers the ChunkStore tests share (chunk_store_test.cc,
// chunk_store_removal_test.cc): a store over one volume in a temp dir.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "common/chunk_file.h"
#include "data/chunk_store.h"
#include "data/volume.h"

namespace t0fs::data {

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

inline bool Named(const std::string& dir, ChunkId chunk) {
  return std::filesystem::exists(ChunkDataPath(dir, chunk)) ||
         std::filesystem::exists(ChunkCrcPath(dir, chunk));
}

inline ChunkFile ClientFile(ChunkId chunk, LocalFds fds) {
  return ChunkFile(chunk, std::move(fds.data), std::move(fds.crc), false);
}

}  // namespace t0fs::data
