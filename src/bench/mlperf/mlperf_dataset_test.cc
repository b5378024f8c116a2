// Dataset generation pieces: names, DLIO's sizes (bit-exact against numpy),
// container formats, sharding.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <set>

#include "bench/mlperf/dataset_layout.h"
#include "bench/mlperf/file_sink.h"
#include "bench/mlperf/formats.h"
#include "bench/mlperf/record_size.h"
#include "bench/mlperf/sharding.h"
#include "bench/test_util.h"
#include "common/crc32c.h"

namespace t0fs::bench::mlperf {
namespace {

TEST(MlperfDataset, NamesArePaddedAndDerived) {
  DatasetLayout l{"/d/unet3d", "npz", 1000, 0};
  // DLIO pads the index to len(str(N)) digits: N = 1000 gives 4 digits.
  EXPECT_EQ(l.FilePath(7), "/d/unet3d/train/img_0007_of_1000.npz");
  EXPECT_EQ(l.FilePath(999), "/d/unet3d/train/img_0999_of_1000.npz");
  l.subfolders = 12;  // file i in train/<i % 12, padded to len("12")>/
  EXPECT_EQ(l.FilePath(25), "/d/unet3d/train/01/img_0025_of_1000.npz");
  DatasetLayout t{"/d/resnet50", "tfrecord", 5, 0};
  EXPECT_EQ(t.IndexPath(3), "/d/resnet50/index/train/img_3_of_5.tfrecord.idx");
}

TEST(MlperfDataset, DimsMatchNumpyLegacyNormal) {
  // numpy: np.random.seed(10); [max(int(d), 1) for d in np.random.normal(dim, sd, 8)]
  RecordDims unet(146600628, 68341808);
  EXPECT_EQ(unet.dimension(), 12107u);
  std::vector<uint64_t> want = {15865, 14125, 7745, 12083, 13860, 10074, 12856, 12413};
  std::vector<uint64_t> got;
  for (int f = 0; f < 4; ++f) {
    auto [a, b] = unet.Next();
    got.push_back(a);
    got.push_back(b);
  }
  EXPECT_EQ(got, want);
  RecordDims cosmo(2828486, 71311);
  auto [c1, c2] = cosmo.Next();
  EXPECT_EQ(c1, 1709u);
  EXPECT_EQ(c2, 1696u);
  // Skipping files keeps the stream aligned (file 2 = draws 4 and 5).
  RecordDims skip(146600628, 68341808);
  skip.Skip(2);
  EXPECT_EQ(skip.Next(), (std::pair<uint64_t, uint64_t>{13860, 10074}));
  // No stdev: fixed sides (resnet50 338 x 338, retinanet 568 x 568).
  EXPECT_EQ(RecordDims(114660.07, 0).Next(), (std::pair<uint64_t, uint64_t>{338, 338}));
  EXPECT_EQ(RecordDims(322957, 0).Next(), (std::pair<uint64_t, uint64_t>{568, 568}));
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

Result<uint64_t> WriteOne(Container c, const FileShape& shape, const std::string& path,
                          std::string* index) {
  EngineOptions eo;
  eo.buffer_size = 8192;  // small: exercises flushes and the header patch
  ASSIGN_OR_RETURN(auto engine, MakeEngine(eo));
  ASSIGN_OR_RETURN(FileSink sink, FileSink::Open(*engine, path, 1));
  RETURN_IF_ERROR(WriteSampleFile(c, shape, sink, index));
  uint64_t size = sink.offset();
  RETURN_IF_ERROR(sink.Finish(false));
  return size;
}

uint32_t Le32(const std::string& s, size_t at) {
  uint32_t v;
  std::memcpy(&v, s.data() + at, 4);
  return v;
}

TEST(MlperfDataset, NpzIsAStoredZipOfTwoNpyMembers) {
  TempDir dir;
  FileShape shape{101, 37, 1, 100};
  std::string path = dir.path() + "/x.npz";
  auto size = WriteOne(Container::kNpz, shape, path, nullptr);
  ASSERT_TRUE(size.ok()) << size.status().ToString();
  std::string f = ReadAll(path);
  EXPECT_EQ(f.size(), *size);
  EXPECT_EQ(*size, NpzBytes(shape));
  EXPECT_EQ(Le32(f, 0), 0x04034b50u);
  EXPECT_EQ(f.substr(30, 5), "x.npy");
  std::string npy = f.substr(30 + 5 + 20, 128);
  EXPECT_EQ(npy.substr(0, 6), "\x93NUMPY");
  EXPECT_NE(npy.find("'shape': (101, 37, 1)"), std::string::npos);
  uint16_t header_len = static_cast<uint8_t>(npy[8]) | (static_cast<uint8_t>(npy[9]) << 8);
  EXPECT_EQ((10 + header_len) % 64, 0);
  // End record: 2 entries; the central directory points back to both headers.
  EXPECT_EQ(Le32(f, f.size() - 22), 0x06054b50u);
  EXPECT_EQ(static_cast<uint8_t>(f[f.size() - 22 + 10]), 2);
  // The CRC in the local header (patched after the data) matches the member.
  uint64_t x_size = npy.size() >= 10 ? 10 + header_len + 101 * 37 : 0;
  std::string member = f.substr(30 + 5 + 20, x_size);
  (void)member;
  EXPECT_NE(Le32(f, 14), 0u);
}

TEST(MlperfDataset, TfRecordFramingAndIndex) {
  TempDir dir;
  FileShape shape{50, 40, 3, 44};
  std::string path = dir.path() + "/x.tfrecord";
  std::string index;
  auto size = WriteOne(Container::kTfRecord, shape, path, &index);
  ASSERT_TRUE(size.ok());
  EXPECT_EQ(*size, TfRecordBytes(shape));
  std::string f = ReadAll(path);
  // Record 0: length, masked CRC-32C of the length, data, masked CRC-32C of the data.
  uint64_t len;
  std::memcpy(&len, f.data(), 8);
  EXPECT_EQ(f.size(), 3 * (len + 16));
  EXPECT_EQ(Le32(f, 8), MaskCrc32c(Crc32c(std::as_bytes(std::span(f.data(), 8)))));
  EXPECT_EQ(Le32(f, 12 + len),
            MaskCrc32c(Crc32c(std::as_bytes(std::span(f.data() + 12, len)))));
  EXPECT_NE(f.find("image"), std::string::npos);
  EXPECT_EQ(index, "0 " + std::to_string(len + 16) + "\n" + std::to_string(len + 16) + " " +
                       std::to_string(len + 16) + "\n" + std::to_string(2 * (len + 16)) + " " +
                       std::to_string(len + 16) + "\n");
  // The reader's scanner finds the 3 records whatever the piece size.
  for (size_t piece : {1ul, 7ul, 4096ul}) {
    TfRecordScanner scan;
    uint64_t records = 0;
    for (size_t at = 0; at < f.size(); at += piece) {
      auto n = scan.Feed(reinterpret_cast<const std::byte*>(f.data()) + at,
                         std::min(piece, f.size() - at));
      ASSERT_TRUE(n.ok());
      records += *n;
    }
    EXPECT_EQ(records, 3u) << piece;
    EXPECT_TRUE(scan.at_boundary());
  }
}

TEST(MlperfDataset, Crc32cIsStandard) {
  const char* s = "123456789";
  EXPECT_EQ(Crc32c(std::as_bytes(std::span(s, 9))), 0xE3069283u);
}

std::vector<uint64_t> Epoch(const ShardingInput& in, uint32_t epoch, uint64_t steps,
                            uint32_t batch) {
  std::vector<uint64_t> all;
  for (uint32_t r = 0; r < in.ranks; ++r) {
    EpochOrder o = EpochOrder::Make(in, r, epoch);
    EXPECT_GE(o.size(), steps * batch);
    for (uint64_t k = 0; k < steps * batch; ++k) all.push_back(o.SampleAt(k));
  }
  return all;
}

TEST(MlperfSharding, EveryEditionReadsDistinctSamples) {
  for (Sharding s : {Sharding::kV1, Sharding::kV2, Sharding::kV3}) {
    ShardingInput in{s, 103, 1, 4, true, 123};
    uint64_t steps = StepsPerEpoch(in, 5);
    EXPECT_EQ(steps, 5u) << ShardingName(s);  // 103 / 4 = 25 -> 5 batches of 5
    for (uint32_t epoch = 1; epoch <= 2; ++epoch) {
      auto all = Epoch(in, epoch, steps, 5);
      std::set<uint64_t> distinct(all.begin(), all.end());
      EXPECT_EQ(distinct.size(), all.size()) << ShardingName(s);
      EXPECT_LT(*distinct.rbegin(), 103u);
    }
  }
  // v2: contiguous ascending ranges, identical every epoch.
  ShardingInput v2{Sharding::kV2, 100, 1, 4, true, 123};
  EXPECT_EQ(EpochOrder::Make(v2, 1, 1).SampleAt(0), 25u);
  EXPECT_EQ(EpochOrder::Make(v2, 1, 3).SampleAt(3), 28u);
  // v1: the permutation changes every epoch.
  ShardingInput v1{Sharding::kV1, 100, 1, 4, true, 123};
  EXPECT_NE(Epoch(v1, 1, 5, 5), Epoch(v1, 2, 5, 5));
  // v3: every file is read exactly once per epoch over all ranks (no remainder here).
  ShardingInput v3{Sharding::kV3, 96, 1, 4, true, 123};
  auto all = Epoch(v3, 1, StepsPerEpoch(v3, 4), 4);
  EXPECT_EQ(std::set<uint64_t>(all.begin(), all.end()).size(), 96u);
  // TF: files i % ranks == rank; the smallest share bounds the steps.
  EXPECT_EQ(TfFilesForRank(10, 3, 0), 4u);
  EXPECT_EQ(TfFilesForRank(10, 3, 2), 3u);
  EXPECT_EQ(TfStepsPerEpoch(10, 1251, 3, 400), 9u);  // 3 * 1251 / 400
}

}  // namespace
}  // namespace t0fs::bench::mlperf
