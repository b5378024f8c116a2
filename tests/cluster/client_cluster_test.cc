// A whole single-node cluster in one process: meta (SQLite in a temp file),
// one data service, and libt0fs clients. Exercises the data path without
// FUSE: local bypass vs TCP, chunk boundaries, truncation, checksums,
// close-to-open visibility, unlink-while-open and a meta restart.
#include <arpa/inet.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <functional>
#include <random>
#include <thread>

#include "client/meta_client.h"
#include "common/buffer.h"
#include "common/chunk_file.h"
#include "common/logging.h"
#include "common/secret.h"
#include "data/data_service.h"
#include "meta/meta_service.h"
#include "meta/store/store_url.h"
#include "t0fs/client.h"

namespace t0fs {
namespace {

namespace fs = std::filesystem;
constexpr uint64_t kChunk = 1 << 20;

std::vector<std::byte> Pattern(size_t len, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<std::byte> out(len);
  for (auto& b : out) b = std::byte(rng());
  return out;
}

class ClusterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    InitLogging("test", "warn");
    dir_ = fs::temp_directory_path() / ("t0fs-cluster-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    ASSERT_TRUE(CreateSecret(dir_ + "/secret").ok());
    StartMeta("127.0.0.1:0");
    StartData();
    ASSERT_NE(data_, nullptr);
    client_ = Connect(true);
    ASSERT_NE(client_, nullptr);
  }

  void TearDown() override {
    client_.reset();
    if (data_) data_->Stop();
    if (meta_) meta_->Stop();
    fs::remove_all(dir_);
  }

  void StartMeta(const std::string& listen,
                 const std::function<void(meta::MetaConfig&)>& tune = {}) {
    meta::MetaConfig cfg;
    cfg.listen = listen;
    cfg.db = dir_ + "/meta.db";
    cfg.secret_file = dir_ + "/secret";
    cfg.chunk_size.bytes = kChunk;
    cfg.local_chunk_size.bytes = kChunk;  // small chunks under placement=local too
    if (tune) tune(cfg);
    auto meta = meta::MetaService::Start(cfg);
    ASSERT_TRUE(meta.ok()) << meta.status().ToString();
    meta_ = std::move(meta).value();
  }

  // The data node (on the same volume after a restart), registered.
  void StartData(const std::string& listen = "127.0.0.1:0") {
    data::DataConfig dcfg;
    dcfg.meta = meta_->endpoint().ToString();
    dcfg.secret_file = dir_ + "/secret";
    dcfg.listen = listen;
    dcfg.volumes = {dir_ + "/vol"};
    dcfg.heartbeat.value = std::chrono::milliseconds(200);
    auto data = data::DataService::Start(dcfg);
    ASSERT_TRUE(data.ok()) << data.status().ToString();
    data_ = std::move(data).value();
    for (int tries = 0; tries < 100 && !data_->registered(); ++tries) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    ASSERT_TRUE(data_->registered());
  }

  // A channel to meta under `role` (node, admin), for raw requests.
  std::unique_ptr<rpc::Channel> MetaChannel(const std::string& role) {
    auto secret = LoadSecret(dir_ + "/secret");
    EXPECT_TRUE(secret.ok());
    rpc::ClientOptions copts;
    copts.secret = secret.ok() ? *secret : "";
    copts.role = role;
    return std::make_unique<rpc::Channel>(meta_->endpoint(), copts);
  }

  // Registers a node of another host that serves nothing; its id.
  uint64_t RegisterIdleNode(rpc::Channel& channel, const std::string& hostname) {
    pb::RegisterNodeReq reg;
    reg.set_host_id("another-host");
    reg.set_address("127.0.0.1:9");
    reg.set_hostname(hostname);
    pb::RegisterNodeRsp registered;
    Status st = channel.Call<rpc::Method::kRegisterNode>(reg, &registered);
    EXPECT_TRUE(st.ok()) << st.ToString();
    return registered.node();
  }

  // The state meta gives the node in its cluster status (up, down, ...).
  std::string NodeState(NodeId node) {
    pb::ClusterStatusRsp status;
    Status st = MetaChannel("admin")->Call<rpc::Method::kClusterStatus>(pb::Empty(), &status);
    EXPECT_TRUE(st.ok()) << st.ToString();
    for (const auto& n : status.nodes()) {
      if (n.node() == node.value()) return n.state();
    }
    return "missing";
  }

  std::unique_ptr<client::Client> Connect(bool bypass) {
    client::ClientOptions opts;
    opts.meta = meta_->endpoint().ToString();
    opts.secret_file = dir_ + "/secret";
    opts.local_bypass = bypass;
    opts.retry_timeout.value = std::chrono::seconds(20);
    auto c = client::Client::Connect(opts);
    EXPECT_TRUE(c.ok()) << c.status().ToString();
    return c.ok() ? std::move(c).value() : nullptr;
  }

  void WriteAll(const std::string& path, const std::vector<std::byte>& data) {
    auto f = client_->CreatePath(path, 0644);
    ASSERT_TRUE(f.ok()) << f.status().ToString();
    ASSERT_TRUE((*f)->Write(0, data).ok());
    ASSERT_TRUE((*f)->Close().ok());
  }

  // Meta expires every session, as after a client cut off past the lease.
  void ExpireAllSessions() {
    Timespec cutoff = WallNow();
    cutoff.sec += 3600;  // every session renewed before then: all of them
    auto expired = meta_->store().ExpireSessions(cutoff);
    ASSERT_TRUE(expired.ok()) << expired.status().ToString();
    ASSERT_GE(*expired, 1u);
  }

  std::vector<std::byte> ReadAll(client::Client& c, const std::string& path) {
    auto f = c.OpenPath(path, O_RDONLY);
    EXPECT_TRUE(f.ok()) << f.status().ToString();
    if (!f.ok()) return {};
    std::vector<std::byte> out((*f)->size());
    auto n = (*f)->Read(0, out);
    EXPECT_TRUE(n.ok()) << n.status().ToString();
    EXPECT_TRUE((*f)->Close().ok());
    return out;
  }

  std::string dir_;
  std::unique_ptr<meta::MetaService> meta_;
  std::unique_ptr<data::DataService> data_;
  std::unique_ptr<client::Client> client_;
};

TEST_F(ClusterTest, WriteReadAcrossChunksThroughTheLocalBypass) {
  auto data = Pattern(3 * kChunk + 12345, 1);
  {
    auto f = client_->CreatePath("/a.bin", 0644);
    ASSERT_TRUE(f.ok()) << f.status().ToString();
    auto n = (*f)->Write(0, data);
    ASSERT_TRUE(n.ok()) << n.status().ToString();
    ASSERT_TRUE((*f)->Close().ok());
  }
  EXPECT_EQ(ReadAll(*client_, "/a.bin"), data);
  client::IoCounters c = client_->counters();
  EXPECT_EQ(c.local_write_bytes, data.size());  // each byte written once
  EXPECT_GE(c.local_read_bytes, data.size());
  EXPECT_EQ(c.remote_read_bytes, 0u);
  auto layout = client_->GetLayout(client_->ResolvePath("/a.bin")->ino);
  ASSERT_TRUE(layout.ok());
  EXPECT_EQ(layout->size, data.size());
  ASSERT_GE(layout->chunks.size(), 4u);
  for (const auto& chunk : layout->chunks) {
    ASSERT_EQ(chunk.replicas.size(), 1u);
    EXPECT_TRUE(chunk.replicas[0].local);
  }
}

TEST_F(ClusterTest, TcpPathWhenBypassIsOff) {
  auto tcp = Connect(false);
  ASSERT_NE(tcp, nullptr);
  auto data = Pattern(2 * kChunk + 7, 2);
  auto f = tcp->CreatePath("/tcp.bin", 0644);
  ASSERT_TRUE(f.ok());
  ASSERT_TRUE((*f)->Write(0, data).ok());
  ASSERT_TRUE((*f)->Fsync(false).ok());
  ASSERT_TRUE((*f)->Close().ok());
  EXPECT_EQ(ReadAll(*tcp, "/tcp.bin"), data);
  EXPECT_EQ(tcp->counters().local_read_bytes, 0u);
  EXPECT_GE(tcp->counters().remote_read_bytes, data.size());
  // And the bypass client reads what the TCP client wrote.
  EXPECT_EQ(ReadAll(*client_, "/tcp.bin"), data);
}

TEST_F(ClusterTest, UnalignedWritesHolesAndTruncation) {
  auto f = client_->CreatePath("/sparse", 0644);
  ASSERT_TRUE(f.ok());
  auto tail = Pattern(1000, 3);
  ASSERT_TRUE((*f)->Write(2 * kChunk + 500, tail).ok());
  std::vector<std::byte> buf(kChunk);
  auto n = (*f)->Read(kChunk / 2, buf);
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(*n, kChunk);
  for (std::byte b : buf) ASSERT_EQ(b, std::byte{0});
  ASSERT_TRUE((*f)->Truncate(2 * kChunk + 600).ok());
  EXPECT_EQ((*f)->size(), 2 * kChunk + 600);
  ASSERT_TRUE((*f)->Truncate(kChunk + 3).ok());
  ASSERT_TRUE((*f)->Truncate(3 * kChunk).ok());  // extends with zeros, not the old tail
  std::vector<std::byte> all(3 * kChunk);
  ASSERT_TRUE((*f)->Read(0, all).ok());
  for (std::byte b : all) ASSERT_EQ(b, std::byte{0});
  ASSERT_TRUE((*f)->Close().ok());
  auto attr = client_->ResolvePath("/sparse");
  ASSERT_TRUE(attr.ok());
  EXPECT_EQ(attr->size, 3 * kChunk);
}

TEST_F(ClusterTest, CloseToOpenVisibilityBetweenClients) {
  auto other = Connect(false);
  ASSERT_NE(other, nullptr);
  auto f = client_->CreatePath("/shared", 0644);
  ASSERT_TRUE(f.ok());
  auto v1 = Pattern(5000, 4);
  ASSERT_TRUE((*f)->Write(0, v1).ok());
  ASSERT_TRUE((*f)->Flush().ok());
  EXPECT_EQ(ReadAll(*other, "/shared"), v1);
  auto v2 = Pattern(7000, 5);
  ASSERT_TRUE((*f)->Write(0, v2).ok());
  ASSERT_TRUE((*f)->Close().ok());
  EXPECT_EQ(ReadAll(*other, "/shared"), v2);
}

TEST_F(ClusterTest, UnlinkedOpenFileStaysReadableThenIsCollected) {
  auto data = Pattern(kChunk + 10, 6);
  auto f = client_->CreatePath("/doomed", 0644);
  ASSERT_TRUE(f.ok());
  ASSERT_TRUE((*f)->Write(0, data).ok());
  ASSERT_TRUE((*f)->Flush().ok());
  ASSERT_TRUE(client_->Unlink(kRootInode, "doomed").ok());
  EXPECT_EQ(client_->ResolvePath("/doomed").status().code(), StatusCode::kNotFound);
  std::vector<std::byte> back(data.size());
  ASSERT_TRUE((*f)->Read(0, back).ok());
  EXPECT_EQ(back, data);
  ASSERT_TRUE((*f)->Close().ok());
  // The chunk files disappear once meta hands the removals to the node.
  bool gone = false;
  for (int tries = 0; tries < 100 && !gone; ++tries) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    size_t files = 0;
    for (auto& e : fs::recursive_directory_iterator(dir_ + "/vol/chunks")) files += e.is_regular_file();
    gone = files == 0;
  }
  EXPECT_TRUE(gone);
}

// A close's release that meta could not take (down past the client's retry
// timeout) is sent again later: the handle does not stay open in meta, so
// a file unlinked while open is still collected. (Before, the batch was
// dropped with a warning and the chunks stayed until the session ended.)
TEST_F(ClusterTest, AReleaseMetaMissedIsSentAgain) {
  client::ClientOptions opts;
  opts.meta = meta_->endpoint().ToString();
  opts.secret_file = dir_ + "/secret";
  opts.retry_timeout.value = std::chrono::milliseconds(300);
  auto impatient = client::Client::Connect(opts);
  ASSERT_TRUE(impatient.ok()) << impatient.status().ToString();
  auto f = (*impatient)->CreatePath("/doomed", 0644);
  ASSERT_TRUE(f.ok());
  ASSERT_TRUE((*f)->Write(0, Pattern(kChunk + 10, 9)).ok());
  ASSERT_TRUE((*f)->Flush().ok());
  ASSERT_TRUE(client_->Unlink(kRootInode, "doomed").ok());
  const std::string addr = meta_->endpoint().ToString();
  meta_->Stop();
  meta_.reset();
  (void)(*f)->Close();  // nothing left to commit; the release goes in the background and fails
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  StartMeta(addr);
  // The chunk files disappear once the release is taken and meta hands the
  // removals to the node.
  bool gone = false;
  for (int tries = 0; tries < 150 && !gone; ++tries) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    size_t files = 0;
    for (auto& e : fs::recursive_directory_iterator(dir_ + "/vol/chunks"))
      files += e.is_regular_file();
    gone = files == 0;
  }
  EXPECT_TRUE(gone) << "the unlinked file's chunks are still there: its handle was never released";
  f->reset();
}

TEST_F(ClusterTest, FlippedByteIsDetectedAsEio) {
  auto data = Pattern(100000, 7);
  auto f = client_->CreatePath("/victim", 0644);
  ASSERT_TRUE(f.ok());
  ASSERT_TRUE((*f)->Write(0, data).ok());
  ASSERT_TRUE((*f)->Close().ok());
  auto layout = client_->GetLayout(client_->ResolvePath("/victim")->ino);
  ASSERT_TRUE(layout.ok());
  std::string path = ChunkDataPath(dir_ + "/vol", layout->chunks[0].replicas[0].chunk);
  int fd = ::open(path.c_str(), O_RDWR);
  ASSERT_GE(fd, 0);
  char c;
  ASSERT_EQ(::pread(fd, &c, 1, 50000), 1);
  c ^= 1;
  ASSERT_EQ(::pwrite(fd, &c, 1, 50000), 1);
  ::close(fd);
  for (bool bypass : {true, false}) {
    auto reader = Connect(bypass);
    auto r = reader->OpenPath("/victim", O_RDONLY);
    ASSERT_TRUE(r.ok());
    std::vector<std::byte> buf(data.size());
    auto n = (*r)->Read(0, buf);
    ASSERT_FALSE(n.ok()) << "bypass=" << bypass;
    EXPECT_EQ(ToErrno(n.status().code()), EIO);
    // Blocks away from the damage still read.
    EXPECT_TRUE((*r)->Read(0, std::span(buf.data(), 4096)).ok());
  }
}

// Over TCP, block-aligned reads come straight from the node's page cache
// and the client checks them (ChunkReadReq.client_verifies): whole and
// short at the file's end they read what was written; over a damaged block
// the client's check fails, the node is asked to check and refuses (EIO),
// and blocks away from the damage still read.
TEST_F(ClusterTest, TcpReadsCheckedByTheClient) {
  auto tcp = Connect(false);
  ASSERT_NE(tcp, nullptr);
  auto data = Pattern(2 * kChunk + 5000, 9);
  {
    auto f = tcp->CreatePath("/checked", 0644);
    ASSERT_TRUE(f.ok());
    ASSERT_TRUE((*f)->Write(0, data).ok());
    ASSERT_TRUE((*f)->Close().ok());
  }
  auto f = tcp->OpenPath("/checked", O_RDONLY);
  ASSERT_TRUE(f.ok());
  AlignedBuffer buf(kChunk);
  for (uint64_t offset = 0; offset < data.size(); offset += 128 << 10) {
    auto n = (*f)->Read(offset, std::span(buf.data(), 128 << 10));
    ASSERT_TRUE(n.ok()) << offset << ": " << n.status().ToString();
    ASSERT_EQ(*n, std::min<size_t>(128 << 10, data.size() - offset));
    ASSERT_EQ(std::memcmp(buf.data(), data.data() + offset, *n), 0) << offset;
  }
  auto layout = tcp->GetLayout(tcp->ResolvePath("/checked")->ino);
  ASSERT_TRUE(layout.ok());
  int fd =
      ::open(ChunkDataPath(dir_ + "/vol", layout->chunks[1].replicas[0].chunk).c_str(), O_RDWR);
  ASSERT_GE(fd, 0);
  char c;
  ASSERT_EQ(::pread(fd, &c, 1, 300000), 1);
  c ^= 1;
  ASSERT_EQ(::pwrite(fd, &c, 1, 300000), 1);
  ::close(fd);
  auto n = (*f)->Read(kChunk + (256 << 10), std::span(buf.data(), 128 << 10));
  ASSERT_FALSE(n.ok());
  EXPECT_EQ(ToErrno(n.status().code()), EIO);
  n = (*f)->Read(kChunk + (384 << 10), std::span(buf.data(), 128 << 10));
  ASSERT_TRUE(n.ok()) << n.status().ToString();
  EXPECT_EQ(std::memcmp(buf.data(), data.data() + kChunk + (384 << 10), *n), 0);
  EXPECT_TRUE((*f)->Close().ok());
}

TEST_F(ClusterTest, AppendAndConcurrentWriters) {
  auto f = client_->CreatePath("/log", 0644, O_RDWR | O_APPEND);
  ASSERT_TRUE(f.ok());
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      auto line = Pattern(999, 100 + t);
      for (int i = 0; i < 50; ++i) ASSERT_TRUE((*f)->Write(0, line).ok());
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ((*f)->size(), 4u * 50 * 999);
  ASSERT_TRUE((*f)->Close().ok());
  EXPECT_EQ(client_->ResolvePath("/log")->size, 4u * 50 * 999);
}

TEST_F(ClusterTest, SurvivesMetaRestart) {
  std::string addr = meta_->endpoint().ToString();
  auto f = client_->CreatePath("/before", 0644);
  ASSERT_TRUE(f.ok());
  auto data = Pattern(kChunk * 2, 8);
  ASSERT_TRUE((*f)->Write(0, data).ok());
  ASSERT_TRUE((*f)->Fsync(false).ok());
  meta_->Stop();
  meta_.reset();
  // Restart on the same address a little later; the client retries meanwhile.
  std::thread restarter([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(700));
    StartMeta(addr);
  });
  ASSERT_TRUE(client_->MakeDirs("/after/restart", 0755).ok());
  restarter.join();
  ASSERT_TRUE((*f)->Close().ok());
  EXPECT_EQ(ReadAll(*client_, "/before"), data);
  EXPECT_TRUE(client_->ResolvePath("/after/restart").ok());
  auto problems = meta_->store().Check();
  ASSERT_TRUE(problems.ok());
  EXPECT_TRUE(problems->empty());
}

// Meta expired the client's session (it was cut off longer than the lease):
// the next open replaces the session and succeeds. Requests that name the
// session (open, layouts for writing) named the expired one at every retry,
// so the client opened new sessions without end (1.2 million in ten minutes
// after a meta stopped for three).
TEST_F(ClusterTest, AnExpiredSessionIsReplacedAndTheOpenSucceeds) {
  auto data = Pattern(kChunk + 100, 3);
  WriteAll("/kept", data);
  ExpireAllSessions();
  EXPECT_EQ(ReadAll(*client_, "/kept"), data);
  auto w = client_->OpenPath("/kept", O_WRONLY);
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  ASSERT_TRUE((*w)->Write(0, std::span<const std::byte>(data.data(), 10)).ok());
  ASSERT_TRUE((*w)->Close().ok());
  auto counts = meta_->store().Counts();
  ASSERT_TRUE(counts.ok());
  EXPECT_LE(counts->sessions, 3u) << "sessions opened without end";
}

// Requests that meet one expiry together replace the session once: each
// opened a session of its own (all but one unused until they expired, and
// the open files registered again under each).
TEST_F(ClusterTest, RequestsMeetingOneExpiryOpenOneSession) {
  WriteAll("/shared", Pattern(100, 4));
  ExpireAllSessions();
  constexpr int kThreads = 8;
  std::atomic<int> ready{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&] {
      ++ready;
      while (ready.load() < kThreads) std::this_thread::yield();
      auto f = client_->OpenPath("/shared", O_RDONLY);  // names the session
      ASSERT_TRUE(f.ok()) << f.status().ToString();
      EXPECT_TRUE((*f)->Close().ok());
    });
  }
  for (auto& t : threads) t.join();
  auto counts = meta_->store().Counts();
  ASSERT_TRUE(counts.ok());
  EXPECT_EQ(counts->sessions, 1u);
}

// Files open when meta expired the client's session are registered again
// under the new one: unlinked afterwards (by another client), such a file
// stays readable and is freed at its close, not at the unlink. A create
// that opens names the new session too (it named the expired one at every
// retry and failed).
TEST_F(ClusterTest, FilesOpenAcrossAnExpiredSessionAreKeptWhenUnlinkedLater) {
  auto data = Pattern(kChunk + 7, 5);
  WriteAll("/open-across", data);
  auto reader = client_->OpenPath("/open-across", O_RDONLY);
  ASSERT_TRUE(reader.ok());
  const InodeId ino = (*reader)->ino();
  ExpireAllSessions();
  {
    auto made = client_->CreatePath("/after-expiry", 0644);  // meets the expiry: a new session
    ASSERT_TRUE(made.ok()) << made.status().ToString();
    ASSERT_TRUE((*made)->Close().ok());
  }
  auto other = Connect(true);
  ASSERT_NE(other, nullptr);
  ASSERT_TRUE(other->Unlink(kRootInode, "open-across").ok());
  EXPECT_TRUE(meta_->store().GetAttr(ino).ok())
      << "freed while open: its handle went with the expired session";
  std::vector<std::byte> back(data.size());
  auto n = (*reader)->Read(0, back);
  ASSERT_TRUE(n.ok()) << n.status().ToString();
  EXPECT_EQ(back, data);
  ASSERT_TRUE((*reader)->Close().ok());
  bool freed = false;  // the release goes out in the background
  for (int i = 0; i < 100 && !freed; ++i) {
    freed = !meta_->store().GetAttr(ino).ok();
    if (!freed) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_TRUE(freed) << "the reopened handle was not released at close";
}

// A meta down for longer than the session lease gives its clients a lease
// to come back before it expires their sessions. It expired them at its
// first pass, before any client could renew: every open handle was
// dropped, and a file unlinked while open was freed under its reader.
TEST_F(ClusterTest, AMetaDownLongerThanTheLeaseExpiresNoSessionWhenItReturns) {
  const std::string addr = meta_->endpoint().ToString();
  const auto lease = std::chrono::seconds(2);
  auto short_lease = [&](meta::MetaConfig& cfg) {
    cfg.session_lease.value = lease;
    cfg.repair_interval.value = std::chrono::milliseconds(50);  // expiry checked at once
  };
  client_.reset();
  meta_->Stop();
  meta_.reset();
  StartMeta(addr, short_lease);
  client_ = Connect(true);  // renews every lease/3
  ASSERT_NE(client_, nullptr);
  auto data = Pattern(kChunk + 100, 9);
  WriteAll("/unlinked", data);
  auto reader = client_->OpenPath("/unlinked", O_RDONLY);
  ASSERT_TRUE(reader.ok());
  const InodeId ino = (*reader)->ino();
  ASSERT_TRUE(client_->Unlink(kRootInode, "unlinked").ok());
  meta_->Stop();
  meta_.reset();
  std::this_thread::sleep_for(lease + std::chrono::milliseconds(1500));
  StartMeta(addr, short_lease);
  std::this_thread::sleep_for(lease + std::chrono::milliseconds(500));
  EXPECT_TRUE(meta_->store().GetAttr(ino).ok())
      << "the open file was freed: its session expired at the restart";
  std::vector<std::byte> back(data.size());
  auto n = (*reader)->Read(0, back);
  ASSERT_TRUE(n.ok()) << n.status().ToString();
  EXPECT_EQ(*n, data.size());
  EXPECT_EQ(back, data);
  ASSERT_TRUE((*reader)->Close().ok());
}

// The only data node is down (it restarts): a create waits for it, as for
// a meta server that restarts, and succeeds once the node is back. It failed
// at once with ENOSPC ("no data volume available"), a misleading error for
// a cluster with room.
TEST_F(ClusterTest, ACreateWhileTheOnlyNodeIsDownWaitsForIt) {
  const std::string addr = meta_->endpoint().ToString();
  const NodeId node = data_->node();
  client_.reset();
  meta_->Stop();
  meta_.reset();
  StartMeta(addr, [](meta::MetaConfig& cfg) {
    cfg.suspect_after.value = std::chrono::milliseconds(300);
    cfg.node_timeout.value = std::chrono::milliseconds(600);
  });
  client_ = Connect(false);
  ASSERT_NE(client_, nullptr);
  data_->Stop();
  data_.reset();
  for (int tries = 0; tries < 200 && NodeState(node) != "down"; ++tries) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_EQ(NodeState(node), "down");
  std::thread restarter([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    StartData();
  });
  auto data = Pattern(kChunk + 4096, 10);
  auto f = client_->CreatePath("/while-down", 0644);
  Status wrote = f.ok() ? (*f)->Write(0, data).status() : f.status();
  if (f.ok()) {
    EXPECT_TRUE((*f)->Close().ok());
  }
  restarter.join();
  ASSERT_TRUE(wrote.ok()) << wrote.ToString();
  ASSERT_NE(data_, nullptr);
  EXPECT_EQ(data_->node(), node);
  EXPECT_EQ(ReadAll(*client_, "/while-down"), data);
}

// The node lost a chunk's files (a replaced drive) while a writer's layout
// still had the replica at its version: the write and the truncation are
// refused and the replica reported, never a new chunk file created with only
// their bytes and committed as the whole chunk (it read back as zeros).
TEST_F(ClusterTest, AWriteNeverRecreatesAChunkFileTheNodeLost) {
  struct Case {
    std::string path;
    bool bypass;
    bool truncate;
  };
  const std::vector<Case> cases = {
      {"/lost-local", true, false}, {"/lost-tcp", false, false}, {"/lost-cut", true, true}};
  const auto data = Pattern(2 * kChunk, 12);
  std::vector<std::unique_ptr<client::Client>> writers;
  std::vector<std::unique_ptr<client::File>> files;
  std::vector<std::string> lost, lost_crc;
  for (const Case& c : cases) {
    WriteAll(c.path, data);
    auto layout = client_->GetLayout(client_->ResolvePath(c.path)->ino);
    ASSERT_TRUE(layout.ok());
    const ChunkId chunk = layout->chunks[0].replicas[0].chunk;
    lost.push_back(ChunkDataPath(dir_ + "/vol", chunk));
    lost_crc.push_back(ChunkCrcPath(dir_ + "/vol", chunk));
    // Opened (the layout fetched) before the loss, by a client with no
    // chunk file of its own open.
    writers.push_back(Connect(c.bypass));
    ASSERT_NE(writers.back(), nullptr);
    auto f = writers.back()->OpenPath(c.path, O_RDWR);
    ASSERT_TRUE(f.ok()) << f.status().ToString();
    files.push_back(std::move(f).value());
  }
  const std::string listen = data_->tcp_endpoint().ToString();
  data_->Stop();
  data_.reset();
  for (size_t i = 0; i < lost.size(); ++i) {
    ASSERT_TRUE(fs::remove(lost[i]));
    ASSERT_TRUE(fs::remove(lost_crc[i]));
  }
  StartData(listen);
  for (size_t i = 0; i < cases.size(); ++i) {
    const Case& c = cases[i];
    Status st = c.truncate ? files[i]->Truncate(1000)
                           : files[i]->Write(4096, std::span(data.data(), 100)).status();
    if (st.ok()) st = files[i]->Close();
    EXPECT_FALSE(st.ok()) << c.path;
    EXPECT_FALSE(fs::exists(lost[i]))
        << c.path << ": a new chunk file holds only the write's bytes";
    // The rest of the file still reads.
    auto r = client_->OpenPath(c.path, O_RDONLY);
    ASSERT_TRUE(r.ok());
    std::vector<std::byte> back(kChunk);
    auto n = (*r)->Read(kChunk, back);
    ASSERT_TRUE(n.ok()) << n.status().ToString();
    EXPECT_TRUE(std::equal(back.begin(), back.end(), data.begin() + kChunk)) << c.path;
    auto layout = client_->GetLayout(client_->ResolvePath(c.path)->ino);
    ASSERT_TRUE(layout.ok());
    EXPECT_NE(layout->chunks[0].replicas[0].state, client::ReplicaState::kHealthy) << c.path;
  }
}

// Two meta servers, one hung (its kernel takes connections, it never says
// Hello): connecting and every request go to the other, even when the hung
// one's handshake timeout (5 s) is longer than the client's retry timeout.
// A request that met the hung server first failed once the retry timeout
// had passed, the other server never asked; and a client whose first
// session request went to it did not connect.
TEST_F(ClusterTest, AHungMetaServerIsLeftForTheOther) {
  int hung = ::socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(hung, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  ASSERT_EQ(::bind(hung, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(::listen(hung, 16), 0);  // never accepted
  ASSERT_EQ(::getsockname(hung, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  const std::string hung_addr = fmt::format("127.0.0.1:{}", ntohs(addr.sin_port));
  for (const std::string& list : {hung_addr + "," + meta_->endpoint().ToString(),
                                  meta_->endpoint().ToString() + "," + hung_addr}) {
    client::ClientOptions opts;
    opts.meta = list;
    opts.secret_file = dir_ + "/secret";
    opts.retry_timeout.value = std::chrono::seconds(1);
    auto c = client::Client::Connect(opts);
    ASSERT_TRUE(c.ok()) << list << ": " << c.status().ToString();
    for (int i = 0; i < 3; ++i) {
      auto attr = (*c)->GetAttr(kRootInode);
      EXPECT_TRUE(attr.ok()) << list << " call " << i << ": " << attr.status().ToString();
    }
  }
  ::close(hung);
}

// A create names a chunk id for its new file's chunk 0 (the mount's chunk
// pool prepared that chunk's files) and gets it only with the capability
// meta signed when it reserved the id: an id made up, or one a chunk has
// already, is not taken (meta picks a new one).
TEST_F(ClusterTest, CreateTakesOnlyChunkIdsMetaReserved) {
  client::ClientOptions opts;
  opts.meta = meta_->endpoint().ToString();
  opts.retry_timeout.value = std::chrono::seconds(20);
  auto secret = LoadSecret(dir_ + "/secret");
  ASSERT_TRUE(secret.ok());
  client::MetaClient meta(opts, *secret);
  ASSERT_TRUE(meta.Connect().ok());
  ASSERT_TRUE(meta.local_node().valid());  // the data node runs on this host
  auto reserved = meta.ReserveChunks(2);
  ASSERT_TRUE(reserved.ok()) << reserved.status().ToString();
  ASSERT_EQ(reserved->size(), 2u);
  auto chunk0 = [&](const char* name, const client::PreparedChunkId& id) {
    auto made = meta.CreateOpen(client::NewNode::Of(kRootInode, name, S_IFREG | 0644, {}), O_WRONLY | O_CREAT,
                                /*first_chunk=*/true, &id);
    EXPECT_TRUE(made.ok()) << made.status().ToString();
    if (!made.ok() || made->opened.layout.empty() || made->opened.layout[0].info.replicas.empty()) return ChunkId();
    return made->opened.layout[0].info.replicas[0].chunk;
  };
  const client::PreparedChunkId good = (*reserved)[0];
  EXPECT_EQ(chunk0("good", good), good.chunk);
  const client::PreparedChunkId made_up{ChunkId((*reserved)[1].chunk.value() + 1000), (*reserved)[1].volume,
                                        (*reserved)[1].cap};
  const ChunkId instead = chunk0("made-up", made_up);
  EXPECT_TRUE(instead.valid());
  EXPECT_NE(instead, made_up.chunk);
  const ChunkId again = chunk0("again", good);  // its chunk exists now
  EXPECT_TRUE(again.valid());
  EXPECT_NE(again, good.chunk);
  meta.Close();
}

// New files closed empty give the chunk files prepared for them back
// (client/chunk_pool.h): a later refill has the data node put them under new
// ids instead of making new ones. Files written after that hold their own
// bytes only, the empty ones stay empty, and a second client's files are
// never lent to the first.
TEST_F(ClusterTest, EmptyNewFilesLendTheirChunkFilesToLaterCreates) {
  auto other = Connect(true);
  ASSERT_NE(other, nullptr);
  int created = 0;
  for (; created < 512 && data_->store().ReusedCount() == 0; ++created) {
    auto f = client_->CreatePath(fmt::format("/e{}", created), 0644);
    ASSERT_TRUE(f.ok()) << f.status().ToString();
    // The other client opens some of them for writing too and closes them
    // after the creator: their files were handed out twice.
    std::unique_ptr<client::File> shared;
    if (created % 3 == 0) {
      auto g = other->OpenPath(fmt::format("/e{}", created), O_WRONLY);
      ASSERT_TRUE(g.ok()) << g.status().ToString();
      shared = std::move(*g);
    }
    ASSERT_TRUE((*f)->Close().ok());
    if (shared) {
      ASSERT_TRUE(shared->Write(0, Pattern(100, created)).ok());
      ASSERT_TRUE(shared->Close().ok());
    }
  }
  const uint64_t reused = data_->store().ReusedCount();
  ASSERT_GT(reused, 0u) << created << " empty creates lent no files";
  std::vector<std::vector<std::byte>> written;
  for (int i = 0; i < 40; ++i) {
    written.push_back(Pattern(5000 + 37 * i, 100 + i));
    WriteAll(fmt::format("/w{}", i), written.back());
  }
  for (int i = 0; i < 40; ++i)
    EXPECT_EQ(ReadAll(*client_, fmt::format("/w{}", i)), written[i]) << "w" << i;
  for (int i = 0; i < created; ++i) {
    const std::string name = fmt::format("/e{}", i);
    EXPECT_EQ(ReadAll(*other, name), i % 3 == 0 ? Pattern(100, i) : std::vector<std::byte>())
        << name;
  }
  EXPECT_GE(data_->store().ReusedCount(), reused);
}

// A registered node is up from its first heartbeat, not from its
// registration: until the registration answer (the capability key) reaches
// it, it refuses every chunk request, so neither status (`t0fs up`'s
// readiness) nor placement may count on it.
TEST_F(ClusterTest, ANodeIsUpFromItsFirstHeartbeat) {
  auto channel = MetaChannel("node");
  const uint64_t node = RegisterIdleNode(*channel, "late");
  EXPECT_EQ(NodeState(NodeId(node)), "down");

  pb::HeartbeatReq beat;
  beat.set_node(node);
  pb::HeartbeatRsp answer;
  ASSERT_TRUE((channel->Call<rpc::Method::kHeartbeat>(beat, &answer)).ok());
  EXPECT_EQ(NodeState(NodeId(node)), "up");
}

// A node registered and asked for its check (the reply with the command
// lost, as when a hedged heartbeat's other server answered) says it still
// awaits one: meta sends it again; once the node has it, no more.
TEST_F(ClusterTest, ANodeAwaitingItsCheckIsSentItAgain) {
  auto channel = MetaChannel("node");
  const uint64_t node = RegisterIdleNode(*channel, "lossy");
  auto checks_in = [&](bool awaiting) {
    pb::HeartbeatReq beat;
    beat.set_node(node);
    beat.set_awaiting_check(awaiting);
    pb::HeartbeatRsp answer;
    EXPECT_TRUE((channel->Call<rpc::Method::kHeartbeat>(beat, &answer)).ok());
    int checks = 0;
    for (const auto& cmd : answer.commands()) checks += cmd.kind() == pb::COMMAND_CHECK;
    return checks;
  };
  EXPECT_EQ(checks_in(true), 1);  // asked at the registration (it holds nothing: one, empty)
  EXPECT_EQ(checks_in(true), 1);  // that reply was lost
  EXPECT_EQ(checks_in(false), 0);
  EXPECT_EQ(checks_in(false), 0);
}

}  // namespace
}  // namespace t0fs
