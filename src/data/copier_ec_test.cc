// The copier's erasure-coding commands end to end: an encode cuts a replica
// into cells written over loopback RPC to a chunk service of this process,
// and a rebuild reads them back, skipping lost and stale cells. Each cell
// sits on a volume of its own, as it would on a node of its own.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <random>
#include <thread>

#include "common/capability.h"
#include "data/chunk_handlers.h"
#include "data/copier.h"
#include "data/volume.h"
#include "ec/cells.h"
#include "ec/stripe_layout.h"
#include "rpc/server.h"

namespace t0fs::data {
namespace {

using Bytes = std::vector<std::byte>;

const std::string kSecret(64, 's');
const std::string kCapKey(32, 'k');
constexpr uint32_t kK = 3, kM = 2;
constexpr uint64_t kUnit = 4096;
constexpr uint64_t kReplicaVolume = 1;
constexpr uint64_t kRebuildVolume = 9;
constexpr uint64_t kVersion = 5;
const ChunkId kChunk(42);

// Cell i lives on volume 2 + i.
uint64_t VolumeOfCell(uint32_t cell) {
  return 2 + cell;
}

class CopierEcTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ =
        std::filesystem::temp_directory_path() / ("t0fs-copier-ec-" + std::to_string(::getpid()));
    for (uint64_t volume = 1; volume <= kRebuildVolume; ++volume) {
      const std::string dir = dir_ + "/v" + std::to_string(volume);
      auto opened = Volume::Open(dir);
      ASSERT_TRUE(opened.ok()) << opened.status().ToString();
      store_.AddVolume(VolumeId(volume), dir);
    }
    gate_.SetKey(kCapKey);
    rpc::ServerOptions options;
    options.name = "data";
    options.secret = kSecret;
    options.listen = {*rpc::Endpoint::Parse("127.0.0.1:0")};
    server_ = std::make_unique<rpc::Server>(options,
                                            MakeChunkHandlers(store_, config_, gate_, scrubber_));
    ASSERT_TRUE(server_->Start().ok());
    address_ = server_->bound(0).ToString();
    rpc::ClientOptions peer;
    peer.secret = kSecret;
    peer.role = "data";
    copier_ = std::make_unique<Copier>(store_, peer, 1, 0);
  }
  void TearDown() override {
    copier_.reset();
    server_->Stop();
    std::filesystem::remove_all(dir_);
  }

  // The command's cells, every one of the k + m, with capabilities of `rights`.
  void AddCells(pb::NodeCommand& cmd, uint32_t rights) {
    cmd.mutable_ec()->set_k(kK);
    cmd.mutable_ec()->set_m(kM);
    cmd.mutable_ec()->set_unit(kUnit);
    for (uint32_t i = 0; i < kK + kM; ++i) {
      pb::EcCell* cell = cmd.add_ec_cells();
      cell->set_cell(i);
      cell->set_node(100 + i);
      cell->set_address(address_);
      cell->set_volume(VolumeOfCell(i));
      Capability cap =
          SignCapability(kCapKey, ec::CellChunkId(kChunk, i), rights, WallMillis() + 600000);
      cell->mutable_cap()->set_mac(cap.mac);
      cell->mutable_cap()->set_expiry_ms(cap.expiry_ms);
      cell->mutable_cap()->set_rights(cap.rights);
    }
  }

  pb::CopyResult Run(const pb::NodeCommand& cmd) {
    copier_->Enqueue(cmd);
    for (int tries = 0; tries < 1000; ++tries) {
      auto results = copier_->TakeResults();
      if (!results.empty()) return results.front();
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    ADD_FAILURE() << "command " << cmd.id() << " did not finish";
    return {};
  }

  // A command of `kind` on the chunk at kVersion, run on `volume` with every
  // cell (rights `rights`); ec.length `length`.
  pb::NodeCommand Command(uint64_t id, pb::NodeCommandKind kind, uint64_t volume, uint32_t rights,
                          uint64_t length) {
    pb::NodeCommand cmd;
    cmd.set_id(id);
    cmd.set_kind(kind);
    cmd.set_chunk(kChunk.value());
    cmd.set_volume(volume);
    cmd.set_version(kVersion);
    AddCells(cmd, rights);
    cmd.mutable_ec()->set_length(length);
    return cmd;
  }
  pb::CopyResult Encode(uint64_t id) {
    return Run(Command(id, pb::COMMAND_EC_ENCODE, kReplicaVolume, kCapWrite, 0));
  }
  pb::CopyResult Rebuild(uint64_t id, uint64_t length) {
    return Run(Command(id, pb::COMMAND_COPY, kRebuildVolume, kCapRead, length));
  }
  pb::CopyResult Verify(uint64_t id, uint64_t length) {
    return Run(Command(id, pb::COMMAND_EC_VERIFY, kReplicaVolume, kCapRead, length));
  }

  // A whole chunk file (at most 1 MiB) and its version.
  Bytes ReadAll(uint64_t volume, ChunkId chunk, uint64_t* version) {
    Bytes out(1 << 20);
    auto n = store_.Read(VolumeId(volume), chunk, 0, out, 0, version);
    EXPECT_TRUE(n.ok()) << "chunk " << chunk.value() << " on volume " << volume << ": "
                        << n.status().ToString();
    out.resize(n.ok() ? *n : 0);
    return out;
  }

  std::string dir_;
  ChunkStore store_{64};
  DataConfig config_;
  CapabilityGate gate_{Duration{std::chrono::seconds(5)}};
  Scrubber scrubber_{store_, 0, Duration{std::chrono::seconds(1)}};
  std::unique_ptr<rpc::Server> server_;
  std::string address_;
  std::unique_ptr<Copier> copier_;
};

Bytes Random(size_t n) {
  std::mt19937_64 rng(n);
  Bytes out(n);
  for (std::byte& b : out) b = static_cast<std::byte>(rng());
  return out;
}

// Data cell j by the rule of docs/formats/ec.md: unit u goes to cell u % k.
Bytes DataCellByRule(const Bytes& chunk, uint32_t j) {
  Bytes out;
  for (uint64_t u = j; u * kUnit < chunk.size(); u += kK) {
    const uint64_t end = std::min<uint64_t>(chunk.size(), (u + 1) * kUnit);
    out.insert(out.end(), chunk.begin() + u * kUnit, chunk.begin() + end);
  }
  return out;
}

// Several rows and a short tail; a cell left longer by an older version is
// cut; the chunk comes back from k cells with one lost and one stale.
TEST_F(CopierEcTest, EncodeThenRebuildWithoutLostAndStaleCells) {
  const Bytes chunk = Random(3 * kK * kUnit + kUnit + 777);
  ASSERT_TRUE(store_.Write(VolumeId(kReplicaVolume), kChunk, 0, chunk, kVersion, false).ok());
  const Bytes junk = Random(5 * kUnit);
  ASSERT_TRUE(
      store_.Write(VolumeId(VolumeOfCell(1)), ec::CellChunkId(kChunk, 1), 0, junk, 3, false).ok());

  pb::CopyResult encoded = Encode(1);
  ASSERT_TRUE(encoded.ok()) << encoded.error();
  EXPECT_EQ(encoded.bytes(), chunk.size());
  EXPECT_EQ(encoded.version(), kVersion);
  auto layout = ec::StripeLayout::Make(kK, kUnit);
  ASSERT_TRUE(layout.ok());
  for (uint32_t i = 0; i < kK + kM; ++i) {
    uint64_t version = 0;
    Bytes cell = ReadAll(VolumeOfCell(i), ec::CellChunkId(kChunk, i), &version);
    EXPECT_EQ(version, kVersion) << "cell " << i;
    if (i < kK) {
      EXPECT_EQ(cell, DataCellByRule(chunk, i)) << "cell " << i;
    } else {
      EXPECT_EQ(cell.size(), layout->ParityCellLength(chunk.size())) << "cell " << i;
    }
  }

  // Cell 0 lost, cell 2 moved on to a later version: cells 1, 3, 4 remain.
  ASSERT_TRUE(store_.Remove(VolumeId(VolumeOfCell(0)), ec::CellChunkId(kChunk, 0)).ok());
  ASSERT_TRUE(store_
                  .Write(VolumeId(VolumeOfCell(2)), ec::CellChunkId(kChunk, 2), 0, Random(10),
                         kVersion + 1, false)
                  .ok());
  pb::CopyResult rebuilt = Rebuild(2, chunk.size());
  ASSERT_TRUE(rebuilt.ok()) << rebuilt.error();
  EXPECT_EQ(rebuilt.bytes(), chunk.size());
  uint64_t version = 0;
  EXPECT_EQ(ReadAll(kRebuildVolume, kChunk, &version), chunk);
  EXPECT_EQ(version, kVersion);

  // One more lost: fewer than k cells, the rebuild fails and leaves nothing.
  ASSERT_TRUE(store_.Remove(VolumeId(kRebuildVolume), kChunk).ok());
  ASSERT_TRUE(store_.Remove(VolumeId(VolumeOfCell(3)), ec::CellChunkId(kChunk, 3)).ok());
  pb::CopyResult failed = Rebuild(3, chunk.size());
  EXPECT_FALSE(failed.ok());
  EXPECT_EQ(store_.Stat(VolumeId(kRebuildVolume), kChunk).status().code(),
            StatusCode::kDataNoChunk);
}

// A chunk shorter than one unit: the data cells past its end and the
// cells of an empty chunk exist with no bytes, so a rebuild finds them.
TEST_F(CopierEcTest, ShortAndEmptyChunksLeaveEmptyCells) {
  for (uint64_t length : {uint64_t{100}, uint64_t{0}}) {
    SCOPED_TRACE(length);
    const Bytes chunk = Random(length);
    ASSERT_TRUE(store_.Truncate(VolumeId(kReplicaVolume), kChunk, 0, kVersion).ok());
    ASSERT_TRUE(store_.Write(VolumeId(kReplicaVolume), kChunk, 0, chunk, kVersion, false).ok());
    pb::CopyResult encoded = Encode(10 + length);
    ASSERT_TRUE(encoded.ok()) << encoded.error();
    for (uint32_t i = 0; i < kK + kM; ++i) {
      auto stat = store_.Stat(VolumeId(VolumeOfCell(i)), ec::CellChunkId(kChunk, i));
      ASSERT_TRUE(stat.ok()) << "cell " << i << ": " << stat.status().ToString();
      EXPECT_EQ(stat->length, i == 1 || i == 2 ? 0 : length) << "cell " << i;
      EXPECT_EQ(stat->version, kVersion) << "cell " << i;
    }
    ASSERT_TRUE(store_.Remove(VolumeId(VolumeOfCell(0)), ec::CellChunkId(kChunk, 0)).ok());
    pb::CopyResult rebuilt = Rebuild(20 + length, length);
    ASSERT_TRUE(rebuilt.ok()) << rebuilt.error();
    uint64_t version = 0;
    EXPECT_EQ(ReadAll(kRebuildVolume, kChunk, &version), chunk);
    ASSERT_TRUE(store_.Remove(VolumeId(kRebuildVolume), kChunk).ok());
  }
}

std::vector<uint32_t> BadCells(const pb::CopyResult& r) {
  return {r.bad_cells().begin(), r.bad_cells().end()};
}

// A check that found every cell the code of the data.
void ExpectClean(const pb::CopyResult& r) {
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_TRUE(BadCells(r).empty());
  EXPECT_EQ(r.unread_cells_size(), 0);
}

ChunkId CellId(uint32_t i) {
  return ec::CellChunkId(kChunk, i);
}

// The parity check: cells true to the replica pass; a cell rewritten with
// valid checksums but other bytes (parity or data), a cell gone, one longer
// than its length and one at another version are bad, each named.
TEST_F(CopierEcTest, VerifyNamesCellsThatAreNotTheCodeOfTheReplica) {
  const Bytes chunk = Random(2 * kK * kUnit + 3000);
  ASSERT_TRUE(store_.Write(VolumeId(kReplicaVolume), kChunk, 0, chunk, kVersion, false).ok());
  ASSERT_TRUE(Encode(1).ok());
  ExpectClean(Verify(2, chunk.size()));

  // Parity cell 3: one byte of its second row other, checksummed as written.
  Bytes byte(1, std::byte{0x5a});
  ASSERT_TRUE(
      store_.Write(VolumeId(VolumeOfCell(3)), CellId(3), kUnit + 17, byte, kVersion, false).ok());
  // Data cell 1: one byte past its length.
  auto layout = ec::StripeLayout::Make(kK, kUnit);
  ASSERT_TRUE(layout.ok());
  ASSERT_TRUE(store_
                  .Write(VolumeId(VolumeOfCell(1)), CellId(1),
                         layout->DataCellLength(1, chunk.size()), byte, kVersion, false)
                  .ok());
  pb::CopyResult found = Verify(3, chunk.size());
  ASSERT_TRUE(found.ok()) << found.error();
  EXPECT_EQ(BadCells(found), (std::vector<uint32_t>{1, 3}));

  // Gone and moved on: bad too; a cell whose node does not answer is unread.
  ASSERT_TRUE(Encode(4).ok());
  ASSERT_TRUE(store_.Remove(VolumeId(VolumeOfCell(0)), CellId(0)).ok());
  ASSERT_TRUE(
      store_.Write(VolumeId(VolumeOfCell(4)), CellId(4), 0, byte, kVersion + 1, false).ok());
  pb::NodeCommand cmd = Command(5, pb::COMMAND_EC_VERIFY, kReplicaVolume, kCapRead, chunk.size());
  cmd.mutable_ec_cells(2)->set_address("127.0.0.1:1");  // nothing listens there
  pb::CopyResult mixed = Run(cmd);
  ASSERT_TRUE(mixed.ok()) << mixed.error();
  EXPECT_EQ(BadCells(mixed), (std::vector<uint32_t>{0, 4}));
  EXPECT_EQ(std::vector<uint32_t>(mixed.unread_cells().begin(), mixed.unread_cells().end()),
            (std::vector<uint32_t>{2}));

  // A replica that moved on is not checked against.
  EXPECT_FALSE(Verify(6, chunk.size() + 1).ok());
}

// An offloaded chunk (keep-local=drop: no replica) is checked from its data
// cells: clean when the parity is their code, a parity cell that is not
// is named, and a data cell that cannot be read ends the check (named).
TEST_F(CopierEcTest, VerifyFromTheDataCellsOfAnOffloadedChunk) {
  const Bytes chunk = Random(2 * kK * kUnit + 3000);
  ASSERT_TRUE(store_.Write(VolumeId(kReplicaVolume), kChunk, 0, chunk, kVersion, false).ok());
  ASSERT_TRUE(Encode(1).ok());
  ASSERT_TRUE(store_.Remove(VolumeId(kReplicaVolume), kChunk).ok());
  auto from_cells = [&](uint64_t id) {
    pb::NodeCommand cmd =
        Command(id, pb::COMMAND_EC_VERIFY, kReplicaVolume, kCapRead, chunk.size());
    cmd.set_from_cells(true);
    return Run(cmd);
  };
  EXPECT_FALSE(Verify(2, chunk.size()).ok());  // no replica to check against
  ExpectClean(from_cells(3));

  Bytes byte(1, std::byte{0x5a});
  ASSERT_TRUE(
      store_.Write(VolumeId(VolumeOfCell(kK)), CellId(kK), kUnit + 5, byte, kVersion, false).ok());
  pb::CopyResult found = from_cells(4);
  ASSERT_TRUE(found.ok()) << found.error();
  EXPECT_EQ(BadCells(found), (std::vector<uint32_t>{kK}));

  ASSERT_TRUE(store_.Remove(VolumeId(VolumeOfCell(0)), CellId(0)).ok());
  pb::CopyResult lost = from_cells(5);
  ASSERT_TRUE(lost.ok()) << lost.error();
  EXPECT_EQ(BadCells(lost), (std::vector<uint32_t>{0}));

  // Every data cell must be listed.
  pb::NodeCommand partial =
      Command(6, pb::COMMAND_EC_VERIFY, kReplicaVolume, kCapRead, chunk.size());
  partial.set_from_cells(true);
  partial.mutable_ec_cells()->DeleteSubrange(1, 1);
  EXPECT_FALSE(Run(partial).ok());
}

// A replica at another version than the command's is not encoded.
TEST_F(CopierEcTest, EncodeOfAnotherVersionIsStale) {
  ASSERT_TRUE(
      store_.Write(VolumeId(kReplicaVolume), kChunk, 0, Random(100), kVersion + 1, false).ok());
  pb::CopyResult encoded = Encode(1);
  EXPECT_FALSE(encoded.ok());
  EXPECT_NE(encoded.error().find("version"), std::string::npos) << encoded.error();
}

}  // namespace
}  // namespace t0fs::data
