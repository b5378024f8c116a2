// BatchIo (t0fs/batch_io.h) against a two-node cluster in one process: meta
// (SQLite in a temp file), two data services, every chunk on both. A client
// without the local bypass reads through the per-node lanes; one whose node
// is the first data service reads the local chunk files. Checks results
// byte for byte against an in-memory model: a seeded fuzz of batch shapes,
// bad requests among good ones, buffers reused, a node lost mid-batch.
//
// The fuzz prints its seed; T0FS_BATCH_SEED=<seed> replays one.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <random>
#include <thread>

#include "common/buffer.h"
#include "common/chunk_file.h"
#include "common/logging.h"
#include "common/secret.h"
#include "data/data_service.h"
#include "meta/meta_service.h"
#include "t0fs/admin.h"
#include "t0fs/batch_io.h"
#include "t0fs/client.h"

namespace t0fs {
namespace {

namespace fs = std::filesystem;
using client::BatchCompletion;
using client::BatchOp;
using client::BatchRequest;

constexpr uint64_t kChunk = 1 << 20;

std::vector<std::byte> Pattern(size_t len, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<std::byte> out(len);
  for (auto& b : out) b = std::byte(rng());
  return out;
}

// Submits `reqs` and waits for all of them: result by user_data.
std::map<uint64_t, int64_t> RunBatch(client::BatchIo& batch,
                                     const std::vector<BatchRequest>& reqs) {
  std::map<uint64_t, int64_t> results;
  EXPECT_TRUE(batch.Submit(reqs).ok());
  std::vector<BatchCompletion> done(reqs.size() + 1);
  while (results.size() < reqs.size()) {
    auto got = batch.Wait(done, 1, std::chrono::seconds(60));
    EXPECT_TRUE(got.ok()) << got.status().ToString();
    if (!got.ok() || *got == 0) break;  // nothing more in flight: a lost completion
    for (size_t idx = 0; idx < *got; ++idx) {
      EXPECT_TRUE(results.emplace(done[idx].user_data, done[idx].result).second)
          << "completion " << done[idx].user_data << " twice";
    }
  }
  EXPECT_EQ(results.size(), reqs.size());
  EXPECT_EQ(batch.pending(), 0u);
  return results;
}

class BatchIoTest : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    InitLogging("test", "warn");
    dir_ = fs::temp_directory_path() / ("t0fs-batch-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    ASSERT_TRUE(CreateSecret(dir_ + "/secret").ok());
    meta::MetaConfig cfg;
    cfg.listen = "127.0.0.1:0";
    cfg.db = dir_ + "/meta.db";
    cfg.secret_file = dir_ + "/secret";
    cfg.chunk_size.bytes = kChunk;
    cfg.local_chunk_size.bytes = kChunk;
    auto meta = meta::MetaService::Start(cfg);
    ASSERT_TRUE(meta.ok()) << meta.status().ToString();
    meta_ = std::move(meta).value();
    for (int idx = 0; idx < 2; ++idx) {
      data::DataConfig dcfg;
      dcfg.meta = meta_->endpoint().ToString();
      dcfg.secret_file = dir_ + "/secret";
      dcfg.listen = "127.0.0.1:0";
      dcfg.volumes = {dir_ + "/vol" + std::to_string(idx)};
      dcfg.heartbeat.value = std::chrono::milliseconds(200);
      auto data = data::DataService::Start(dcfg);
      ASSERT_TRUE(data.ok()) << data.status().ToString();
      data_[idx] = std::move(data).value();
    }
    for (int tries = 0; tries < 100 && !(data_[0]->registered() && data_[1]->registered());
         ++tries) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    ASSERT_TRUE(data_[0]->registered() && data_[1]->registered());
    // Every chunk on both nodes.
    auto secret = LoadSecret(dir_ + "/secret");
    ASSERT_TRUE(secret.ok());
    auto admin =
        client::AdminClient::Open({.meta = meta_->endpoint().ToString(), .secret = *secret});
    ASSERT_TRUE(admin.ok()) << admin.status().ToString();
    auto base = (*admin)->GetObjective(kRootInode);
    ASSERT_TRUE(base.ok()) << base.status().ToString();
    auto two = client::ParseObjective({"replicas=2"}, *base);
    ASSERT_TRUE(two.ok()) << two.status().ToString();
    auto set = (*admin)->SetObjective(kRootInode, *two, /*recursive=*/false);
    ASSERT_TRUE(set.ok()) << set.status().ToString();
    // GetParam(): the local bypass, this client on the first data node.
    client_ = Connect(GetParam());
    ASSERT_NE(client_, nullptr);
  }

  void TearDown() override {
    client_.reset();
    for (auto& data : data_) {
      if (data) data->Stop();
    }
    if (meta_) meta_->Stop();
    fs::remove_all(dir_);
  }

  std::unique_ptr<client::Client> Connect(bool bypass) {
    client::ClientOptions opts;
    opts.meta = meta_->endpoint().ToString();
    opts.secret_file = dir_ + "/secret";
    opts.local_bypass = bypass;
    opts.node_id = data_[0]->node().value();
    opts.retry_timeout.value = std::chrono::seconds(20);
    auto c = client::Client::Connect(opts);
    EXPECT_TRUE(c.ok()) << c.status().ToString();
    return c.ok() ? std::move(c).value() : nullptr;
  }

  void WriteFile(const std::string& path, std::span<const std::byte> bytes) {
    auto f = client_->CreatePath(path, 0644);
    ASSERT_TRUE(f.ok()) << f.status().ToString();
    ASSERT_TRUE((*f)->Write(0, bytes).ok());
    ASSERT_TRUE((*f)->Close().ok());
  }

  std::unique_ptr<client::File> Open(const std::string& path, int flags) {
    auto f = client_->OpenPath(path, flags);
    EXPECT_TRUE(f.ok()) << f.status().ToString();
    return f.ok() ? std::move(f).value() : nullptr;
  }

  // Callers declare the registered memory first: a BatchIo waits for its
  // requests when destroyed, so it must go before that memory does.
  std::unique_ptr<client::BatchIo> OpenBatch() {
    auto batch = client_->OpenBatchIo({});
    EXPECT_TRUE(batch.ok()) << batch.status().ToString();
    return batch.ok() ? std::move(batch).value() : nullptr;
  }

  std::string dir_;
  std::unique_ptr<meta::MetaService> meta_;
  std::unique_ptr<data::DataService> data_[2];
  std::unique_ptr<client::Client> client_;
};

INSTANTIATE_TEST_SUITE_P(Paths, BatchIoTest, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? "LocalBypass" : "Remote"; });

TEST_P(BatchIoTest, RandomBatchesMatchAModel) {
  uint64_t seed = std::random_device{}();
  if (const char* env = std::getenv("T0FS_BATCH_SEED")) seed = std::strtoull(env, nullptr, 10);
  SCOPED_TRACE("T0FS_BATCH_SEED=" + std::to_string(seed));
  std::printf("batch fuzz: T0FS_BATCH_SEED=%llu\n", static_cast<unsigned long long>(seed));
  std::mt19937_64 rng(seed);
  auto below = [&](uint64_t n) { return std::uniform_int_distribution<uint64_t>(0, n - 1)(rng); };

  const uint64_t size = 3 * kChunk + kChunk / 2 + 777;
  std::vector<std::byte> model = Pattern(size, static_cast<uint32_t>(seed));
  WriteFile("/fuzz", model);
  auto file = Open("/fuzz", O_RDWR);
  ASSERT_NE(file, nullptr);
  // One slot of memory per request of a batch, reused by every batch.
  constexpr size_t kSlots = 64, kSlot = kChunk + kChunk / 4;
  AlignedBuffer memory(kSlots * kSlot);
  auto batch = OpenBatch();
  ASSERT_NE(batch, nullptr);
  auto buffer = batch->RegisterBuffer(memory.span());
  ASSERT_TRUE(buffer.ok()) << buffer.status().ToString();

  for (int round = 0; round < 24; ++round) {
    SCOPED_TRACE("batch " + std::to_string(round));
    const size_t count = 1 + below(kSlots);
    std::vector<BatchRequest> reqs;
    std::vector<std::pair<uint64_t, uint64_t>> written;  // this batch's write ranges
    std::vector<std::pair<uint64_t, uint64_t>> used;     // and every range
    auto overlaps = [](const auto& ranges, uint64_t lo, uint64_t hi) {
      return std::any_of(ranges.begin(), ranges.end(),
                         [&](const auto& r) { return lo < r.second && r.first < hi; });
    };
    for (size_t slot = 0; slot < count; ++slot) {
      // Small, then up to a chunk and a quarter; often right at a chunk boundary.
      uint64_t length = below(4) == 0 ? 1 + below(kSlot) : 1 + below(64 << 10);
      uint64_t offset =
          below(3) == 0 ? (1 + below(3)) * kChunk - below(length + 1) : below(size + (64 << 10));
      const bool write = below(3) == 0;
      if (write) {
        if (offset >= size) continue;
        length = std::min(length, size - offset);  // the model's size stays fixed
        if (overlaps(used, offset, offset + length)) continue;
        written.emplace_back(offset, offset + length);
      } else if (overlaps(written, offset, offset + length)) {
        continue;
      }
      used.emplace_back(offset, offset + length);
      const uint64_t buffer_offset = below(kSlot - length + 1);
      std::byte* at = memory.data() + slot * kSlot + buffer_offset;
      if (write) {
        for (uint64_t idx = 0; idx < length; ++idx) at[idx] = std::byte(rng());
      } else {
        std::memset(at, 0xee, length);  // what a read fails to fill shows
      }
      reqs.push_back({.file = file.get(),
                      .op = write ? BatchOp::kWrite : BatchOp::kRead,
                      .offset = offset,
                      .length = length,
                      .buffer = *buffer,
                      .buffer_offset = slot * kSlot + buffer_offset,
                      .user_data = reqs.size()});
    }
    auto results = RunBatch(*batch, reqs);
    for (const BatchRequest& req : reqs) {
      const std::byte* at = memory.data() + req.buffer_offset;
      const int64_t got = results[req.user_data];
      if (req.op == BatchOp::kWrite) {
        ASSERT_EQ(got, static_cast<int64_t>(req.length))
            << "write of " << req.length << " at " << req.offset;
        std::memcpy(model.data() + req.offset, at, req.length);
        continue;
      }
      const uint64_t want = req.offset >= size ? 0 : std::min(req.length, size - req.offset);
      ASSERT_EQ(got, static_cast<int64_t>(want))
          << "read of " << req.length << " at " << req.offset;
      ASSERT_EQ(std::memcmp(at, model.data() + req.offset, want), 0)
          << "read of " << req.length << " at " << req.offset;
    }
  }
  // The writes are in the file, as File::Read sees it.
  std::vector<std::byte> back(size);
  auto n = file->Read(0, back);
  ASSERT_TRUE(n.ok()) << n.status().ToString();
  ASSERT_EQ(*n, size);
  EXPECT_TRUE(back == model);
  EXPECT_TRUE(batch->Close().ok());
  EXPECT_TRUE(file->Close().ok());
  client::IoCounters c = client_->counters();
  if (GetParam()) {
    // Every chunk has a replica here: no read went over the network.
    EXPECT_GT(c.local_read_bytes, 0u);
    EXPECT_EQ(c.remote_read_bytes, 0u);
  } else {
    EXPECT_EQ(c.local_read_bytes, 0u);
    EXPECT_GT(c.remote_read_bytes, 0u);
  }
}

TEST_P(BatchIoTest, BadRequestsFailAloneInTheirBatch) {
  const uint64_t size = 2 * kChunk + 100;
  auto data = Pattern(size, 7);
  WriteFile("/good", data);
  WriteFile("/other", Pattern(4096, 8));
  auto file = Open("/good", O_RDONLY);
  auto closed = Open("/other", O_RDWR);
  ASSERT_NE(file, nullptr);
  ASSERT_NE(closed, nullptr);
  ASSERT_TRUE(closed->Close().ok());
  AlignedBuffer memory(8 * kChunk);
  auto batch = OpenBatch();
  ASSERT_NE(batch, nullptr);
  auto buffer = batch->RegisterBuffer(memory.span());
  ASSERT_TRUE(buffer.ok());
  std::memset(memory.data(), 0xee, memory.size());

  auto read = [&](client::File* f, uint64_t offset, uint64_t length, uint64_t at,
                  uint32_t buf = 0) {
    return BatchRequest{.file = f,
                        .op = BatchOp::kRead,
                        .offset = offset,
                        .length = length,
                        .buffer = buf,
                        .buffer_offset = at,
                        .user_data = 0};
  };
  std::vector<BatchRequest> reqs = {
      read(file.get(), 0, kChunk + 10, 0),              // 0: good, across a boundary
      read(file.get(), 0, 4096, 0, /*buf=*/7),          // 1: unregistered buffer
      read(file.get(), 0, 8192, memory.size() - 4096),  // 2: past the buffer's end
      read(closed.get(), 0, 4096, 2 * kChunk),          // 3: closed file
      read(file.get(), size + 10, 4096, 3 * kChunk),    // 4: past end of file
      read(file.get(), size - 100, 4096, 4 * kChunk),   // 5: short at end of file
      read(file.get(), 5000, 0, 5 * kChunk),            // 6: length 0
      read(nullptr, 0, 4096, 5 * kChunk),               // 7: no file
      {.file = file.get(),
       .op = BatchOp::kWrite,
       .offset = 0,
       .length = 10,
       .buffer = 0,
       .buffer_offset = 6 * kChunk},                      // 8: write to a read-only file
      read(file.get(), 2 * kChunk - 50, 50, 7 * kChunk),  // 9: good, a chunk's tail
  };
  for (size_t idx = 0; idx < reqs.size(); ++idx) reqs[idx].user_data = idx;
  auto results = RunBatch(*batch, reqs);
  EXPECT_EQ(results[0], static_cast<int64_t>(kChunk + 10));
  EXPECT_EQ(results[1], -EINVAL);
  EXPECT_EQ(results[2], -EINVAL);
  EXPECT_EQ(results[3], -EBADF);
  EXPECT_EQ(results[4], 0);
  EXPECT_EQ(results[5], 100);
  EXPECT_EQ(results[6], 0);
  EXPECT_EQ(results[7], -EBADF);
  EXPECT_EQ(results[8], -EBADF);
  EXPECT_EQ(results[9], 50);
  EXPECT_EQ(std::memcmp(memory.data(), data.data(), kChunk + 10), 0);
  EXPECT_EQ(std::memcmp(memory.data() + 4 * kChunk, data.data() + size - 100, 100), 0);
  EXPECT_EQ(std::memcmp(memory.data() + 7 * kChunk, data.data() + 2 * kChunk - 50, 50), 0);
  // Nothing touched the memory of the failed requests.
  EXPECT_EQ(memory.data()[2 * kChunk], std::byte{0xee});
  EXPECT_EQ(memory.data()[3 * kChunk], std::byte{0xee});
  EXPECT_EQ(memory.data()[6 * kChunk], std::byte{0xee});
  // Registration errors are the caller's.
  EXPECT_EQ(batch->RegisterBuffer(std::span(memory.data() + 1, 4096)).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(batch->UnregisterBuffer(7).code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(batch->Close().ok());
  EXPECT_EQ(batch->Submit(reqs).code(), StatusCode::kBadHandle);
}

TEST_P(BatchIoTest, BuffersAreReusedAcrossBatches) {
  auto a = Pattern(3 * kChunk, 11), b = Pattern(3 * kChunk, 12);
  WriteFile("/a", a);
  WriteFile("/b", b);
  auto fa = Open("/a", O_RDONLY), fb = Open("/b", O_RDWR);
  ASSERT_NE(fa, nullptr);
  ASSERT_NE(fb, nullptr);
  AlignedBuffer first(3 * kChunk), second(3 * kChunk);
  auto batch = OpenBatch();
  ASSERT_NE(batch, nullptr);
  auto one = batch->RegisterBuffer(first.span());
  auto two = batch->RegisterBuffer(second.span());
  ASSERT_TRUE(one.ok() && two.ok());
  EXPECT_NE(*one, *two);
  // The same memory, slot by slot, read from one file then the other.
  auto whole = [&](client::File* f, uint32_t buf) {
    std::vector<BatchRequest> reqs;
    for (uint64_t part = 0; part < 12; ++part) {
      reqs.push_back({.file = f,
                      .op = BatchOp::kRead,
                      .offset = part * (kChunk / 4),
                      .length = kChunk / 4,
                      .buffer = buf,
                      .buffer_offset = part * (kChunk / 4),
                      .user_data = part});
    }
    return reqs;
  };
  for (int round = 0; round < 3; ++round) {
    for (auto [file, expect] : {std::pair{fa.get(), &a}, std::pair{fb.get(), &b}}) {
      std::memset(first.data(), 0, first.size());
      for (const auto& [ud, result] : RunBatch(*batch, whole(file, *one)))
        EXPECT_EQ(result, int64_t{kChunk / 4});
      ASSERT_EQ(std::memcmp(first.data(), expect->data(), expect->size()), 0) << "round " << round;
    }
  }
  // An index given back is refused until registered again (it may come back
  // for other memory); the other buffer keeps its index.
  ASSERT_TRUE(batch->UnregisterBuffer(*one).ok());
  auto results = RunBatch(*batch, whole(fa.get(), *one));
  for (const auto& [ud, result] : results) EXPECT_EQ(result, -EINVAL);
  auto again = batch->RegisterBuffer(second.span());
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, *one);
  // A write batch from the second buffer, read back through the first index.
  for (const auto& [ud, result] : RunBatch(*batch, whole(fa.get(), *two)))
    EXPECT_EQ(result, int64_t{kChunk / 4});
  EXPECT_EQ(std::memcmp(second.data(), a.data(), a.size()), 0);
  auto writes = whole(fb.get(), *two);
  for (auto& w : writes) w.op = BatchOp::kWrite;
  for (const auto& [ud, result] : RunBatch(*batch, writes)) EXPECT_EQ(result, int64_t{kChunk / 4});
  std::vector<std::byte> back(b.size());
  ASSERT_TRUE(fb->Read(0, back).ok());
  EXPECT_TRUE(back == a);
  EXPECT_TRUE(batch->Close().ok());
}

TEST_P(BatchIoTest, ConcurrentWritesAllocateAnEmptyFile) {
  // 56 writes of 64 KiB in shuffled order: chunks are allocated by whichever
  // write reaches them first, several at once.
  constexpr uint64_t kPart = 64 << 10, kParts = 56;
  auto data = Pattern(kParts * kPart, 31);
  auto created = client_->CreatePath("/new", 0644, O_RDWR);
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  std::unique_ptr<client::File> file = std::move(created).value();
  AlignedBuffer memory(data.size());
  std::memcpy(memory.data(), data.data(), data.size());
  auto batch = OpenBatch();
  ASSERT_NE(batch, nullptr);
  auto buffer = batch->RegisterBuffer(memory.span());
  ASSERT_TRUE(buffer.ok());
  std::vector<BatchRequest> reqs;
  for (uint64_t part = 0; part < kParts; ++part) {
    reqs.push_back({.file = file.get(),
                    .op = BatchOp::kWrite,
                    .offset = part * kPart,
                    .length = kPart,
                    .buffer = *buffer,
                    .buffer_offset = part * kPart,
                    .user_data = part});
  }
  std::shuffle(reqs.begin(), reqs.end(), std::mt19937(5));
  for (const auto& [ud, result] : RunBatch(*batch, reqs))
    EXPECT_EQ(result, static_cast<int64_t>(kPart)) << ud;
  EXPECT_EQ(file->size(), data.size());
  ASSERT_TRUE(file->Close().ok());
  // Committed: another open sees every byte, read back as one batch.
  auto again = Open("/new", O_RDONLY);
  ASSERT_NE(again, nullptr);
  std::memset(memory.data(), 0, memory.size());
  for (auto& r : reqs) {
    r.file = again.get();
    r.op = BatchOp::kRead;
  }
  for (const auto& [ud, result] : RunBatch(*batch, reqs))
    EXPECT_EQ(result, static_cast<int64_t>(kPart)) << ud;
  EXPECT_EQ(std::memcmp(memory.data(), data.data(), data.size()), 0);
  EXPECT_TRUE(batch->Close().ok());
}

// Each replica damaged in a different block: whichever replica a piece
// tries first, a damaged block is caught (by the client's check of a
// remote reply, then the node's, or by the local bypass) and the piece is
// served by the other replica. Every piece completes with the bytes written.
TEST_P(BatchIoTest, ADamagedBlockIsReadFromTheOtherReplica) {
  const uint64_t size = 2 * kChunk;
  auto data = Pattern(size, 31);
  WriteFile("/damaged", data);
  auto file = Open("/damaged", O_RDONLY);
  ASSERT_NE(file, nullptr);
  auto layout = client_->GetLayout(file->ino());
  ASSERT_TRUE(layout.ok());
  ASSERT_EQ(layout->chunks[0].replicas.size(), 2u);
  for (const auto& replica : layout->chunks[0].replicas) {
    const int idx = replica.node == data_[0]->node() ? 0 : 1;
    const off_t at = idx == 0 ? 100000 : 600000;  // in 128 KiB parts 0 and 4
    int fd =
        ::open(ChunkDataPath(dir_ + "/vol" + std::to_string(idx), replica.chunk).c_str(), O_RDWR);
    ASSERT_GE(fd, 0);
    char c = 0;
    ASSERT_EQ(::pread(fd, &c, 1, at), 1);
    c ^= 1;
    ASSERT_EQ(::pwrite(fd, &c, 1, at), 1);
    ::close(fd);
  }
  AlignedBuffer memory(size);
  auto batch = OpenBatch();
  ASSERT_NE(batch, nullptr);
  auto buffer = batch->RegisterBuffer(memory.span());
  ASSERT_TRUE(buffer.ok());
  constexpr uint64_t kPart = 128 << 10;
  std::vector<BatchRequest> reqs;
  for (uint64_t part = 0; part < size / kPart; ++part) {
    reqs.push_back({.file = file.get(),
                    .op = BatchOp::kRead,
                    .offset = part * kPart,
                    .length = kPart,
                    .buffer = *buffer,
                    .buffer_offset = part * kPart,
                    .user_data = part});
  }
  for (const auto& [part, result] : RunBatch(*batch, reqs))
    EXPECT_EQ(result, int64_t{kPart}) << part;
  EXPECT_EQ(std::memcmp(memory.data(), data.data(), size), 0);
  EXPECT_TRUE(batch->Close().ok());
}

TEST_P(BatchIoTest, ANodeLostMidBatchFailsOverToTheOtherReplica) {
  const uint64_t size = 8 * kChunk;
  auto data = Pattern(size, 21);
  WriteFile("/big", data);
  auto file = Open("/big", O_RDONLY);
  ASSERT_NE(file, nullptr);
  auto layout = client_->GetLayout(file->ino());
  ASSERT_TRUE(layout.ok());
  for (const auto& chunk : layout->chunks) ASSERT_EQ(chunk.replicas.size(), 2u);
  AlignedBuffer memory(2 * size);
  auto batch = OpenBatch();
  ASSERT_NE(batch, nullptr);
  auto buffer = batch->RegisterBuffer(memory.span());
  ASSERT_TRUE(buffer.ok());
  constexpr uint64_t kPart = 128 << 10;
  auto reads = [&](uint64_t at) {
    std::vector<BatchRequest> reqs;
    for (uint64_t part = 0; part < size / kPart; ++part) {
      reqs.push_back({.file = file.get(),
                      .op = BatchOp::kRead,
                      .offset = part * kPart,
                      .length = kPart,
                      .buffer = *buffer,
                      .buffer_offset = at + part * kPart,
                      .user_data = at + part});
    }
    return reqs;
  };
  // The first batch is in flight when the node goes; the second is submitted
  // after, when no request has told the client yet that the node is gone.
  // The node that goes is not this client's (with the bypass, the local
  // replica would answer everything).
  auto first = reads(0), second = reads(size);
  ASSERT_TRUE(batch->Submit(first).ok());
  // As the process dying would: its connections close (a stopped service
  // that lives on would leave them open, unanswered, until the rpc timeout).
  data_[1]->Stop();
  data_[1].reset();
  ASSERT_TRUE(batch->Submit(second).ok());
  std::vector<BatchCompletion> done(first.size() + second.size());
  for (size_t got = 0; got < done.size();) {
    auto n = batch->Wait(std::span(done).subspan(got), 1, std::chrono::seconds(60));
    ASSERT_TRUE(n.ok());
    ASSERT_GT(*n, 0u) << "nothing in flight, " << got << " of " << done.size() << " completed";
    got += *n;
  }
  for (const BatchCompletion& c : done)
    EXPECT_EQ(c.result, static_cast<int64_t>(kPart)) << c.user_data;
  EXPECT_EQ(std::memcmp(memory.data(), data.data(), size), 0);
  EXPECT_EQ(std::memcmp(memory.data() + size, data.data(), size), 0);
  if (!GetParam()) {
    EXPECT_GT(client_->counters().replica_failovers, 0u);
  }
  EXPECT_TRUE(batch->Close().ok());
}

}  // namespace
}  // namespace t0fs
