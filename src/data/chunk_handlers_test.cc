// ChunkRead over loopback RPC against a chunk store of this process: the
// reply a client that verifies gets (bytes straight from the chunk file, and
// the blocks' checksums) and the one a client that does not gets (bytes the
// node checked), at the chunk's end, unaligned, and over a damaged block.
#include "data/chunk_handlers.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <random>
#include <thread>

#include "common/capability.h"
#include "common/chunk_file.h"
#include "data/volume.h"
#include "rpc/channel.h"
#include "rpc/proto/data.pb.h"
#include "rpc/server.h"

namespace t0fs::data {
namespace {

using Bytes = std::vector<std::byte>;

const std::string kSecret(64, 's');
const std::string kCapKey(32, 'k');
const ChunkId kChunk(7);
constexpr uint64_t kVolume = 1;

class ChunkHandlersTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("t0fs-chunk-handlers-" + std::to_string(::getpid()));
    auto opened = Volume::Open(dir_);
    ASSERT_TRUE(opened.ok()) << opened.status().ToString();
    store_.AddVolume(VolumeId(kVolume), dir_);
    gate_.SetKey(kCapKey);
    rpc::ServerOptions options;
    options.name = "data";
    options.secret = kSecret;
    options.listen = {*rpc::Endpoint::Parse("127.0.0.1:0")};
    server_ = std::make_unique<rpc::Server>(options,
                                            MakeChunkHandlers(store_, config_, gate_, scrubber_));
    ASSERT_TRUE(server_->Start().ok());
    rpc::ClientOptions client;
    client.secret = kSecret;
    channel_ = std::make_unique<rpc::Channel>(server_->bound(0), client);
  }
  void TearDown() override {
    channel_.reset();
    server_->Stop();
    std::filesystem::remove_all(dir_);
  }

  // ChunkRead of [offset, offset + length) into `out` (resized to what came).
  Status Read(uint64_t offset, uint32_t length, bool client_verifies, Bytes* out,
              pb::ChunkReadRsp* rsp) {
    pb::ChunkReadReq req;
    req.set_chunk(kChunk.value());
    req.set_volume(kVolume);
    req.set_offset(offset);
    req.set_length(length);
    req.set_client_verifies(client_verifies);
    Capability cap = SignCapability(kCapKey, kChunk, kCapRead, WallMillis() + 600000);
    req.mutable_cap()->set_mac(cap.mac);
    req.mutable_cap()->set_expiry_ms(cap.expiry_ms);
    req.mutable_cap()->set_rights(cap.rights);
    out->assign(length, std::byte{0xee});
    size_t got = 0;
    Status st = channel_->Call<rpc::Method::kChunkRead>(
        req, rsp, {.reply_payload = *out, .reply_payload_len = &got});
    out->resize(got);
    return st;
  }

  std::string dir_;
  ChunkStore store_{64};
  DataConfig config_;
  CapabilityGate gate_{Duration{std::chrono::seconds(5)}};
  Scrubber scrubber_{store_, 0, Duration{std::chrono::seconds(1)}};
  std::unique_ptr<rpc::Server> server_;
  std::unique_ptr<rpc::Channel> channel_;
};

Bytes Random(size_t n) {
  std::mt19937_64 rng(n);
  Bytes out(n);
  for (std::byte& b : out) b = static_cast<std::byte>(rng());
  return out;
}

// 9 MiB plus a partial block: a whole 8 MiB read (many receives), a read
// that ends at the chunk's end (short, a partial last block) and an
// unaligned one (the node checks it, as for a client that does not verify).
TEST_F(ChunkHandlersTest, ClientVerifiedReadsCarryTheirChecksums) {
  const Bytes data = Random((9 << 20) + 1000);
  ASSERT_TRUE(store_.Write(VolumeId(kVolume), kChunk, 0, data, 3, false).ok());
  Bytes got;
  pb::ChunkReadRsp rsp;
  ASSERT_TRUE(Read(1 << 20, 8 << 20, true, &got, &rsp).ok());
  EXPECT_TRUE(rsp.unverified());
  EXPECT_EQ(rsp.version(), 3u);
  ASSERT_EQ(got.size(), size_t{8 << 20});
  EXPECT_EQ(std::memcmp(got.data(), data.data() + (1 << 20), got.size()), 0);
  EXPECT_EQ(rsp.crcs().size(), size_t{(8 << 20) / kChunkBlockSize * 4});
  EXPECT_EQ(VerifyBlocks(got, rsp.crcs()), -1);

  ASSERT_TRUE(Read(9 << 20, 1 << 20, true, &got, &rsp).ok());
  ASSERT_EQ(got.size(), 1000u);
  EXPECT_EQ(rsp.length(), 1000u);
  EXPECT_EQ(std::memcmp(got.data(), data.data() + (9 << 20), 1000), 0);
  EXPECT_EQ(VerifyBlocks(got, rsp.crcs()), -1);

  ASSERT_TRUE(Read(10 << 20, 4096, true, &got, &rsp).ok());  // past the end
  EXPECT_TRUE(got.empty());

  for (auto [offset, length] : {std::pair<uint64_t, uint32_t>{100, 8192}, {4096, 5000}}) {
    ASSERT_TRUE(Read(offset, length, true, &got, &rsp).ok());
    EXPECT_FALSE(rsp.unverified()) << offset << "+" << length;
    EXPECT_TRUE(rsp.crcs().empty());
    ASSERT_EQ(got.size(), length);
    EXPECT_EQ(std::memcmp(got.data(), data.data() + offset, length), 0);
  }
  ASSERT_TRUE(Read(0, 1 << 20, false, &got, &rsp).ok());
  EXPECT_FALSE(rsp.unverified());
  EXPECT_EQ(std::memcmp(got.data(), data.data(), got.size()), 0);
}

// A damaged block goes out as it is to a client that verifies (it finds
// the mismatch against the checksums sent along); asked again without, the
// node refuses the read (kDataChecksum) as it always did.
TEST_F(ChunkHandlersTest, DamageShowsAtTheClientThenAtTheNode) {
  const Bytes data = Random(256 << 10);
  ASSERT_TRUE(store_.Write(VolumeId(kVolume), kChunk, 0, data, 1, false).ok());
  {
    int fd = ::open(ChunkDataPath(dir_, kChunk).c_str(), O_RDWR);
    ASSERT_GE(fd, 0);
    char c = 0;
    ASSERT_EQ(::pread(fd, &c, 1, 70000), 1);
    c ^= 1;
    ASSERT_EQ(::pwrite(fd, &c, 1, 70000), 1);
    ::close(fd);
  }
  Bytes got;
  pb::ChunkReadRsp rsp;
  ASSERT_TRUE(Read(0, 128 << 10, true, &got, &rsp).ok());
  ASSERT_TRUE(rsp.unverified());
  EXPECT_EQ(VerifyBlocks(got, rsp.crcs()), 70000 / kChunkBlockSize);
  Status st = Read(0, 128 << 10, false, &got, &rsp);
  EXPECT_EQ(st.code(), StatusCode::kDataChecksum) << st.ToString();
  // Blocks away from the damage read either way.
  ASSERT_TRUE(Read(128 << 10, 128 << 10, true, &got, &rsp).ok());
  EXPECT_EQ(VerifyBlocks(got, rsp.crcs()), -1);
  ASSERT_TRUE(Read(128 << 10, 128 << 10, false, &got, &rsp).ok());
  EXPECT_EQ(std::memcmp(got.data(), data.data() + (128 << 10), got.size()), 0);
}

// A request that reaches a node before its registration reply (it serves
// its sockets a moment before meta answers: a restart, with clients
// retrying) waits for the key instead of being refused; with no key in
// time it is refused as before.
TEST(CapabilityGateTest, ARequestBeforeTheKeyWaitsForIt) {
  Capability cap = SignCapability(kCapKey, kChunk, kCapRead, WallMillis() + 600000);
  pb::Capability wire;
  wire.set_mac(cap.mac);
  wire.set_expiry_ms(cap.expiry_ms);
  wire.set_rights(cap.rights);
  CapabilityGate gate{Duration{std::chrono::seconds(5)}, std::chrono::milliseconds(10000)};
  std::thread registration([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    gate.SetKey(kCapKey);
  });
  Status st = gate.Check(kChunk.value(), kCapRead, wire);
  registration.join();
  EXPECT_TRUE(st.ok()) << st.ToString();
  CapabilityGate unregistered{Duration{std::chrono::seconds(5)}, std::chrono::milliseconds(50)};
  EXPECT_EQ(unregistered.Check(kChunk.value(), kCapRead, wire).code(),
            StatusCode::kDataBadCapability);
}

}  // namespace
}  // namespace t0fs::data
