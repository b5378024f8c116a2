#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <random>
#include <thread>

#include "common/cancel.h"
#include "metrics/registry.h"
#include "rpc/channel.h"
#include "rpc/proto/data.pb.h"
#include "rpc/proto/meta.pb.h"
#include "rpc/server.h"

namespace t0fs::rpc {
namespace {

const std::string kSecret(64, 's');

// A server's options for these tests: its name, the secret, its threads
// and a TCP endpoint on a free loopback port.
ServerOptions TestServerOptions(std::string name, uint32_t threads) {
  ServerOptions opts;
  opts.name = std::move(name);
  opts.secret = kSecret;
  opts.threads = threads;
  opts.listen = {*Endpoint::Parse("127.0.0.1:0")};
  return opts;
}

// A server with an echo handler (GetAttr echoes ino+1, ChunkRead echoes the
// payload of the request back) and an fd-passing handler (OpenLocal).
class RpcTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::vector<std::pair<Method, Handler>> handlers;
    handlers.push_back(Handle<Method::kGetAttr>(
        [](const pb::GetAttrReq& req, pb::AttrRsp& rsp, Call&) {
          if (req.ino() == 0) return Status(StatusCode::kNotFound, "inode 0");
          rsp.mutable_attr()->set_ino(req.ino() + 1);
          return Status::Ok();
        }));
    handlers.emplace_back(Method::kChunkWrite, [](Call& call) {
      call.reply_buffer->Reserve(call.payload.size());
      std::memcpy(call.reply_buffer->data(), call.payload.data(), call.payload.size());
      call.reply_payload = std::span(call.reply_buffer->data(), call.payload.size());
      return Status::Ok();
    });
    handlers.emplace_back(Method::kAdoptLocal, [](Call& call) {
      // Echoes what the first descriptor passed with the request reads.
      if (call.fds.size() != 2) return Status(StatusCode::kInvalidArgument, "expected 2 descriptors");
      call.reply_buffer->Reserve(64);
      ssize_t n = ::read(call.fds[0].get(), call.reply_buffer->data(), 64);
      if (n < 0) return Status::FromErrno(errno, "read");
      call.reply_payload = std::span(call.reply_buffer->data(), static_cast<size_t>(n));
      return Status::Ok();
    });
    // ChunkRead sends `length` bytes of file_path_ at `offset` from the file (sendfile).
    handlers.push_back(Handle<Method::kChunkRead>(
        [this](const pb::ChunkReadReq& req, pb::ChunkReadRsp& rsp, Call& call) {
          call.reply_file = UniqueFd(::open(file_path_.c_str(), O_RDONLY | O_CLOEXEC));
          if (!call.reply_file.valid()) return Status::FromErrno(errno, "open " + file_path_);
          call.reply_file_offset = req.offset();
          call.reply_file_length = req.length();
          rsp.set_length(req.length());
          return Status::Ok();
        }));
    handlers.emplace_back(Method::kOpenLocal, [](Call& call) {
      call.reply_fds.emplace_back(::open("/dev/null", O_RDONLY | O_CLOEXEC));
      call.reply_fds.emplace_back(::open("/dev/zero", O_RDONLY | O_CLOEXEC));
      return Status::Ok();
    });
    // StatFs waits until the test lets it go (a handler that blocks).
    handlers.push_back(Handle<Method::kStatFs>([this](const pb::Empty&, pb::StatFsRsp&, Call&) {
      std::unique_lock lock(block_mu_);
      ++blocked_calls_;
      block_cv_.notify_all();
      block_cv_.wait(lock, [&] { return !blocking_; });
      return Status::Ok();
    }));
    ServerOptions opts = TestServerOptions("test", 2);
    opts.limits.max_payload = 1 << 20;
    opts.metrics = &registry_;
    opts.handshake_timeout.value = std::chrono::seconds(1);  // short frames wait this long
    socket_path_ = "/tmp/t0fs-rpc-test-" + std::to_string(::getpid()) + ".sock";
    opts.listen = {*Endpoint::Parse("127.0.0.1:0"), *Endpoint::Parse("unix:" + socket_path_)};
    server_ = std::make_unique<Server>(opts, std::move(handlers));
    ASSERT_TRUE(server_->Start().ok());
    tcp_ = server_->bound(0);
  }
  void TearDown() override {
    {
      std::lock_guard lock(block_mu_);
      blocking_ = false;
    }
    block_cv_.notify_all();
    server_->Stop();
  }

  ClientOptions Client(std::string secret = kSecret) {
    ClientOptions o;
    o.secret = std::move(secret);
    o.io_timeout.value = std::chrono::seconds(5);
    return o;
  }

  // A raw TCP socket to send garbage.
  int RawConnect() {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(tcp_.port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    timeval tv{5, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    return fd;
  }

  // Reads until EOF or timeout; returns true if the server closed the socket.
  bool DrainUntilClosed(int fd) {
    char buf[4096];
    for (;;) {
      ssize_t n = ::recv(fd, buf, sizeof buf, 0);
      if (n == 0) return true;
      if (n < 0) return errno == ECONNRESET;  // closed with our junk unread
    }
  }

  void ExpectStillServes() {
    Channel ch(tcp_, Client());
    pb::GetAttrReq req;
    req.set_ino(41);
    pb::AttrRsp rsp;
    ASSERT_TRUE(ch.Call<Method::kGetAttr>(req, &rsp).ok());
    EXPECT_EQ(rsp.attr().ino(), 42u);
  }

  std::mutex block_mu_;
  std::condition_variable block_cv_;
  bool blocking_ = true;  // under block_mu_
  int blocked_calls_ = 0;
  std::string file_path_ = "/tmp/t0fs-rpc-test-file-" + std::to_string(::getpid());
  metrics::Registry registry_;  // outlives server_
  std::unique_ptr<Server> server_;
  Endpoint tcp_;
  std::string socket_path_;
};

TEST_F(RpcTest, RecordsRequestsByMethodAndResult) {
  auto& requests = registry_.AddCounter("t0fs_rpc_server_requests_total", "", {"method", "result"});
  auto& bytes = registry_.AddCounter("t0fs_rpc_server_bytes_total", "", {"direction"});
  uint64_t in_before = bytes.With({{"direction", "in"}}).Value();
  {
    Channel ch(tcp_, Client());
    pb::GetAttrReq req;
    pb::AttrRsp rsp;
    req.set_ino(7);
    ASSERT_TRUE(ch.Call<Method::kGetAttr>(req, &rsp).ok());
    ASSERT_TRUE(ch.Call<Method::kGetAttr>(req, &rsp).ok());
    req.set_ino(0);
    EXPECT_EQ(ch.Call<Method::kGetAttr>(req, &rsp).code(), StatusCode::kNotFound);
    std::vector<std::byte> out(5000), in(5000);
    std::string reply;
    size_t got = 0;
    CallArgs args;
    args.method = Method::kChunkWrite;
    args.payload = out;
    args.reply_header = &reply;
    args.reply_payload = in;
    args.reply_payload_len = &got;
    ASSERT_TRUE(ch.Call(args).ok());
  }
  EXPECT_EQ(requests.With({{"method", "get_attr"}, {"result", "ok"}}).Value(), 2u);
  EXPECT_EQ(requests.With({{"method", "get_attr"}, {"result", "not_found"}}).Value(), 1u);
  EXPECT_EQ(requests.With({{"method", "chunk_write"}, {"result", "ok"}}).Value(), 1u);
  EXPECT_GE(bytes.With({{"direction", "in"}}).Value() - in_before, 5000u);
  EXPECT_GE(bytes.With({{"direction", "out"}}).Value(), 5000u);
  auto& latency = registry_.AddHistogram("t0fs_rpc_server_request_duration_seconds", "", {"method"});
  EXPECT_EQ(latency.With({{"method", "get_attr"}}).Collect().count, 3u);
  // Nothing is being handled once the calls returned.
  EXPECT_EQ(registry_.AddGauge("t0fs_rpc_server_requests_in_flight", "").With({}).Value(), 0);
  std::string text = registry_.Render();
  EXPECT_NE(text.find("t0fs_rpc_server_connections"), std::string::npos);
}

TEST_F(RpcTest, TypedCallAndRemoteError) {
  Channel ch(tcp_, Client());
  pb::GetAttrReq req;
  req.set_ino(7);
  pb::AttrRsp rsp;
  ASSERT_TRUE(ch.Call<Method::kGetAttr>(req, &rsp).ok());
  EXPECT_EQ(rsp.attr().ino(), 8u);
  req.set_ino(0);
  Status st = ch.Call<Method::kGetAttr>(req, &rsp);
  EXPECT_EQ(st.code(), StatusCode::kNotFound);
  EXPECT_EQ(st.message(), "inode 0");
  // The connection survives a remote error and is reused.
  req.set_ino(1);
  EXPECT_TRUE(ch.Call<Method::kGetAttr>(req, &rsp).ok());
  // A method the server has no handler for (sent untyped: a GetAttr
  // request under another method's id does not compile, see below).
  std::string header = req.SerializeAsString(), reply;
  CallArgs args;
  args.method = Method::kRename;
  args.header = header;
  args.reply_header = &reply;
  EXPECT_EQ(ch.Call(args).code(), StatusCode::kRpcUnknownMethod);
}

TEST_F(RpcTest, SeveralEndpointsFailOverToTheNextServer) {
  // The first server is gone (a port nothing listens on): the call fails in
  // transport, and the caller's retry reaches the second.
  auto dead = Endpoint::Parse("127.0.0.1:1");
  ASSERT_TRUE(dead.ok());
  Channel ch(std::vector<Endpoint>{*dead, tcp_}, Client());
  EXPECT_EQ(ch.endpoint_count(), 2u);
  pb::GetAttrReq req;
  req.set_ino(7);
  pb::AttrRsp rsp;
  Status first = ch.Call<Method::kGetAttr>(req, &rsp);
  EXPECT_TRUE(IsTransportError(first.code())) << first.ToString();
  EXPECT_EQ(ch.endpoint().ToString(), tcp_.ToString());
  ASSERT_TRUE(ch.Call<Method::kGetAttr>(req, &rsp).ok());
  EXPECT_EQ(rsp.attr().ino(), 8u);
  // A remote error is an answer, not a reason to move on.
  req.set_ino(0);
  EXPECT_EQ(ch.Call<Method::kGetAttr>(req, &rsp).code(), StatusCode::kNotFound);
  EXPECT_EQ(ch.endpoint().ToString(), tcp_.ToString());
}

// A second server whose GetAttr answers ino+`add` (replies say which
// server answered). A hung one answers once released (or after 20 s: a test that
// waits for it fails, rather than hangs).
class OtherServer {
 public:
  explicit OtherServer(metrics::Registry& registry, bool hung, uint64_t add = 100)
      : released_(!hung) {
    std::vector<std::pair<Method, Handler>> handlers;
    handlers.push_back(
        Handle<Method::kGetAttr>([this, add](const pb::GetAttrReq& req, pb::AttrRsp& rsp, Call&) {
          std::unique_lock lock(mu_);
          cv_.wait_for(lock, std::chrono::seconds(20), [&] { return released_; });
          rsp.mutable_attr()->set_ino(req.ino() + add);
          return Status::Ok();
        }));
    ServerOptions opts = TestServerOptions("other", 4);
    opts.metrics = &registry;
    server_ = std::make_unique<Server>(opts, std::move(handlers));
    EXPECT_TRUE(server_->Start().ok());
  }
  ~OtherServer() { Stop(); }
  void Stop() {
    Release();
    server_->Stop();
  }
  void Release() {
    {
      std::lock_guard lock(mu_);
      released_ = true;
    }
    cv_.notify_all();
  }
  Endpoint endpoint() const { return server_->bound(0); }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool released_;
  std::unique_ptr<Server> server_;
};

TEST_F(RpcTest, SpreadingChannelSendsToEveryServerAndLeavesOutAFailedOne) {
  OtherServer second(registry_, false);
  ClientOptions o = Client();
  o.spread = true;
  Channel ch(std::vector<Endpoint>{tcp_, second.endpoint()}, o);
  pb::GetAttrReq req;
  req.set_ino(1);
  auto answers = [&](int calls) {
    std::pair<int, int> by_server{0, 0};  // first, second
    for (int i = 0; i < calls; ++i) {
      pb::AttrRsp rsp;
      Status st = ch.Call<Method::kGetAttr>(req, &rsp);
      if (!st.ok()) {
        EXPECT_TRUE(IsTransportError(st.code())) << st.ToString();
        continue;
      }
      (rsp.attr().ino() == 2 ? by_server.first : by_server.second)++;
    }
    return by_server;
  };
  auto both = answers(10);
  EXPECT_EQ(both.first, 5);
  EXPECT_EQ(both.second, 5);

  // The second server goes: at most one call fails in transport, the rest
  // reach the first.
  second.Stop();
  auto after = answers(10);
  EXPECT_GE(after.first, 9);
  EXPECT_EQ(after.second, 0);
}

TEST_F(RpcTest, AHedgedCallIsAnsweredByAnotherServerWhenOneHangs) {
  OtherServer hung(registry_, true);
  for (bool spread : {true, false}) {
    SCOPED_TRACE(spread ? "spreading" : "one server at a time");
    ClientOptions o = Client();
    o.io_timeout.value = std::chrono::hours(1);
    o.spread = spread;
    o.hedge_after.value = std::chrono::milliseconds(100);
    Channel ch(std::vector<Endpoint>{hung.endpoint(), tcp_}, o);
    // Every call is answered, by the live server (ino+1): those sent to the
    // hung one go to the other after 100 ms, and the hung one is left out.
    for (int i = 0; i < 6; ++i) {
      pb::GetAttrReq req;
      req.set_ino(1);
      pb::AttrRsp rsp;
      Status st = ch.Call<Method::kGetAttr>(req, &rsp);
      ASSERT_TRUE(st.ok()) << st.ToString();
      EXPECT_EQ(rsp.attr().ino(), 2u) << "call " << i;
    }
    EXPECT_EQ(ch.endpoint().ToString(), tcp_.ToString());
  }
}

TEST_F(RpcTest, AHedgedCallGoesOnWhenAServerNeverSaysHello) {
  // A server stopped before it accepts: the kernel completes the connect,
  // Hello never comes. Its connect timeout is an hour: the hedge bounds it.
  const std::string path = "/tmp/t0fs-rpc-mute-" + std::to_string(::getpid());
  ::unlink(path.c_str());
  UniqueFd listener(::socket(AF_UNIX, SOCK_STREAM, 0));
  ASSERT_TRUE(listener.valid());
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path.c_str(), sizeof(addr.sun_path) - 1);
  ASSERT_EQ(::bind(listener.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(::listen(listener.get(), 8), 0);
  ClientOptions o = Client();
  o.connect_timeout.value = std::chrono::hours(1);
  o.io_timeout.value = std::chrono::hours(1);
  o.spread = true;
  o.hedge_after.value = std::chrono::milliseconds(100);
  Channel ch(std::vector<Endpoint>{*Endpoint::Parse("unix:" + path), tcp_}, o);
  for (int i = 0; i < 4; ++i) {
    pb::GetAttrReq req;
    req.set_ino(5);
    pb::AttrRsp rsp;
    Status st = ch.Call<Method::kGetAttr>(req, &rsp);
    ASSERT_TRUE(st.ok()) << st.ToString();
    EXPECT_EQ(rsp.attr().ino(), 6u);
  }
  ::unlink(path.c_str());
}

TEST_F(RpcTest, AHedgedCallTakesTheSlowServersAnswerWhenNoOtherAnswers) {
  // Both servers slow: the hedge goes nowhere better, and the first answer
  // (the hung server's, once released) is taken -- slowness is not an error.
  OtherServer a(registry_, true);
  OtherServer b(registry_, true);
  ClientOptions o = Client();
  o.spread = true;
  o.hedge_after.value = std::chrono::milliseconds(50);
  Channel ch(std::vector<Endpoint>{a.endpoint(), b.endpoint()}, o);
  std::thread release([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    b.Release();
  });
  pb::GetAttrReq req;
  req.set_ino(1);
  pb::AttrRsp rsp;
  Status st = ch.Call<Method::kGetAttr>(req, &rsp);
  release.join();
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(rsp.attr().ino(), 101u);
}

TEST_F(RpcTest, AHedgedCallOfACancelledRequestEndsWithoutBlamingItsServers) {
  // Both servers hang for longer than any test: the caller's cancellation
  // (common/cancel.h) ends the wait within a slice, as a timeout that says
  // so, and neither server is left out as one that timed out.
  OtherServer a(registry_, true);
  OtherServer b(registry_, true, /*add=*/200);
  ClientOptions o = Client();
  o.io_timeout.value = std::chrono::hours(1);
  o.spread = true;
  o.hedge_after.value = std::chrono::milliseconds(50);
  Channel ch(std::vector<Endpoint>{a.endpoint(), b.endpoint()}, o);
  std::atomic<bool> cancelled{false};
  std::thread interrupt([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    cancelled = true;
  });
  Status st;
  {
    CancelScope scope(&cancelled, /*caller_tid=*/0);
    pb::GetAttrReq req;
    req.set_ino(1);
    pb::AttrRsp rsp;
    st = ch.Call<Method::kGetAttr>(req, &rsp);
  }
  interrupt.join();
  EXPECT_EQ(st.code(), StatusCode::kRpcTimeout) << st.ToString();
  EXPECT_NE(st.message().find("its caller was interrupted"), std::string::npos) << st.ToString();
  a.Release();
  b.Release();
  // Both still take calls at once (a server left out would be skipped).
  std::pair<int, int> by_server{0, 0};
  for (int i = 0; i < 4; ++i) {
    pb::GetAttrReq req;
    req.set_ino(1);
    pb::AttrRsp rsp;
    ASSERT_TRUE(ch.Call<Method::kGetAttr>(req, &rsp).ok());
    (rsp.attr().ino() == 101 ? by_server.first : by_server.second)++;
  }
  EXPECT_GT(by_server.first, 0);
  EXPECT_GT(by_server.second, 0);
}

// The method table (methods.h): a call compiles only with its method's
// request and reply, and so does a handler.
template <Method M, class Req, class Rsp>
concept Callable = requires(Channel& ch, const Req& req, Rsp* rsp) { ch.Call<M>(req, rsp); };
static_assert(Callable<Method::kGetAttr, pb::GetAttrReq, pb::AttrRsp>);
static_assert(Callable<Method::kReadLink, pb::GetAttrReq, pb::ReadLinkRsp>);
static_assert(!Callable<Method::kRename, pb::GetAttrReq, pb::AttrRsp>);
static_assert(!Callable<Method::kGetAttr, pb::GetAttrReq, pb::ReadLinkRsp>);
static_assert(!Callable<Method::kChunkRead, pb::ChunkWriteReq, pb::ChunkReadRsp>);
template <Method M, class F>
concept Handles = requires(F f) { Handle<M>(f); };
using GetAttrHandler = Status (*)(const pb::GetAttrReq&, pb::AttrRsp&, Call&);
static_assert(Handles<Method::kGetAttr, GetAttrHandler>);
static_assert(!Handles<Method::kLookup, GetAttrHandler>);
static_assert(!Handles<Method::kReadLink, GetAttrHandler>);

// Each server thread runs the connections given to it: a new connection
// goes to the thread with the fewest, so while one connection's handler
// blocks its thread, another connection is served by the other thread.
TEST_F(RpcTest, AHandlerThatBlocksHoldsUpOnlyItsOwnThread) {
  Channel blocked(tcp_, Client());
  std::thread waiter([&] {
    pb::Empty req;
    pb::StatFsRsp rsp;
    EXPECT_TRUE(blocked.Call<Method::kStatFs>(req, &rsp).ok());
  });
  {
    std::unique_lock lock(block_mu_);
    EXPECT_TRUE(
        block_cv_.wait_for(lock, std::chrono::seconds(10), [&] { return blocked_calls_ == 1; }));
  }
  Channel other(tcp_, Client());  // a second connection: the free thread's
  for (int i = 0; i < 3; ++i) {
    pb::GetAttrReq req;
    req.set_ino(41);
    pb::AttrRsp rsp;
    EXPECT_TRUE(other.Call<Method::kGetAttr>(req, &rsp).ok());
    EXPECT_EQ(rsp.attr().ino(), 42u);
  }
  {
    std::lock_guard lock(block_mu_);
    blocking_ = false;
  }
  block_cv_.notify_all();
  waiter.join();
}

// With shared_threads (meta on PostgreSQL, whose handlers wait for the
// database) any free thread serves any connection: the third connection,
// which one context per thread would put with the first, is served while
// the first one's handler blocks.
TEST(RpcSharedThreads, AFreeThreadServesAnyConnection) {
  std::mutex mu;
  std::condition_variable cv;
  bool blocking = true;
  int blocked = 0;
  std::vector<std::pair<Method, Handler>> handlers;
  handlers.push_back(
      Handle<Method::kGetAttr>([](const pb::GetAttrReq& req, pb::AttrRsp& rsp, Call&) {
        rsp.mutable_attr()->set_ino(req.ino() + 1);
        return Status::Ok();
      }));
  handlers.push_back(Handle<Method::kStatFs>([&](const pb::Empty&, pb::StatFsRsp&, Call&) {
    std::unique_lock lock(mu);
    ++blocked;
    cv.notify_all();
    cv.wait(lock, [&] { return !blocking; });
    return Status::Ok();
  }));
  ServerOptions opts = TestServerOptions("shared", 2);
  opts.shared_threads = true;
  Server server(opts, std::move(handlers));
  ASSERT_TRUE(server.Start().ok());
  ClientOptions o;
  o.secret = kSecret;
  o.io_timeout.value = std::chrono::seconds(5);
  std::vector<std::unique_ptr<Channel>> channels;
  for (int i = 0; i < 3; ++i) {  // one connection each, open before the first blocks
    channels.push_back(std::make_unique<Channel>(server.bound(0), o));
    pb::GetAttrReq req;
    req.set_ino(1);
    pb::AttrRsp rsp;
    ASSERT_TRUE(channels.back()->Call<Method::kGetAttr>(req, &rsp).ok());
  }
  std::thread waiter([&] {
    pb::Empty req;
    pb::StatFsRsp rsp;
    EXPECT_TRUE(channels[0]->Call<Method::kStatFs>(req, &rsp).ok());
  });
  {
    std::unique_lock lock(mu);
    EXPECT_TRUE(cv.wait_for(lock, std::chrono::seconds(10), [&] { return blocked == 1; }));
  }
  pb::GetAttrReq req;
  req.set_ino(41);
  pb::AttrRsp rsp;
  Status st = channels[2]->Call<Method::kGetAttr>(req, &rsp);
  EXPECT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(rsp.attr().ino(), 42u);
  {
    std::lock_guard lock(mu);
    blocking = false;
  }
  cv.notify_all();
  waiter.join();
  server.Stop();
}

TEST_F(RpcTest, PayloadRoundTripAndConcurrency) {
  Channel ch(tcp_, Client());
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int thread_idx = 0; thread_idx < 4; ++thread_idx) {
    threads.emplace_back([&, thread_idx] {
      std::vector<std::byte> out(100000 + thread_idx), in(200000);
      for (size_t byte = 0; byte < out.size(); ++byte) out[byte] = std::byte(byte * 7 + thread_idx);
      for (int iter = 0; iter < 20; ++iter) {
        std::string reply;
        size_t got = 0;
        CallArgs args;
        args.method = Method::kChunkWrite;
        args.payload = out;
        args.reply_header = &reply;
        args.reply_payload = in;
        args.reply_payload_len = &got;
        if (!ch.Call(args).ok() || got != out.size() || std::memcmp(in.data(), out.data(), got) != 0) {
          ++failures;
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(failures, 0);
}

// A reply payload sent from a file (sendfile) arrives whole over TCP and
// unix sockets, in as many receives as it takes; a file that ends early is
// made up with zeros and the connection stays in step for the next call.
TEST_F(RpcTest, ReplyPayloadFromAFile) {
  std::vector<std::byte> content(900 << 10);
  std::mt19937 rng(5);
  for (auto& b : content) b = std::byte(rng());
  {
    UniqueFd fd(::open(file_path_.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
    ASSERT_TRUE(fd.valid());
    ASSERT_EQ(::write(fd.get(), content.data(), content.size()),
              static_cast<ssize_t>(content.size()));
  }
  for (const Endpoint& ep : {tcp_, *Endpoint::Parse("unix:" + socket_path_)}) {
    Channel ch(ep, Client());
    std::vector<std::byte> in(1 << 20);
    for (int iter = 0; iter < 3; ++iter) {
      pb::ChunkReadReq req;
      req.set_offset(4096);
      req.set_length(800 << 10);
      pb::ChunkReadRsp rsp;
      size_t got = 0;
      ASSERT_TRUE(
          ch.Call<Method::kChunkRead>(req, &rsp, {.reply_payload = in, .reply_payload_len = &got})
              .ok());
      ASSERT_EQ(got, size_t{800 << 10});
      EXPECT_EQ(std::memcmp(in.data(), content.data() + 4096, got), 0) << ep.ToString();
    }
    // 100 KiB past the file's end: zeros, and the next call still works.
    pb::ChunkReadReq req;
    req.set_offset(800 << 10);
    req.set_length(200 << 10);
    pb::ChunkReadRsp rsp;
    size_t got = 0;
    ASSERT_TRUE(
        ch.Call<Method::kChunkRead>(req, &rsp, {.reply_payload = in, .reply_payload_len = &got})
            .ok());
    ASSERT_EQ(got, size_t{200 << 10});
    EXPECT_EQ(std::memcmp(in.data(), content.data() + (800 << 10), 100 << 10), 0);
    EXPECT_TRUE(std::all_of(in.begin() + (100 << 10), in.begin() + (200 << 10),
                            [](std::byte b) { return b == std::byte{0}; }));
    req.set_offset(0);
    req.set_length(4096);
    ASSERT_TRUE(
        ch.Call<Method::kChunkRead>(req, &rsp, {.reply_payload = in, .reply_payload_len = &got})
            .ok());
    EXPECT_EQ(std::memcmp(in.data(), content.data(), 4096), 0);
  }
  ::unlink(file_path_.c_str());
}

TEST_F(RpcTest, WrongSecretIsRefusedClearly) {
  Channel ch(tcp_, Client(std::string(64, 'x')));
  pb::GetAttrReq req;
  pb::AttrRsp rsp;
  Status st = ch.Call<Method::kGetAttr>(req, &rsp);
  EXPECT_EQ(st.code(), StatusCode::kRpcUnauthenticated);
  EXPECT_NE(st.message().find("wrong cluster secret"), std::string::npos) << st.ToString();
  ExpectStillServes();
}

TEST_F(RpcTest, FdPassingOverUnixSocket) {
  Channel ch(*Endpoint::Parse("unix:" + socket_path_), Client());
  std::string reply;
  std::vector<UniqueFd> fds;
  CallArgs args;
  args.method = Method::kOpenLocal;
  args.reply_header = &reply;
  args.reply_fds = &fds;
  ASSERT_TRUE(ch.Call(args).ok());
  ASSERT_EQ(fds.size(), 2u);
  char byte = 1;
  EXPECT_EQ(::read(fds[1].get(), &byte, 1), 1);  // /dev/zero
  EXPECT_EQ(byte, 0);
}

TEST_F(RpcTest, FdPassingWithARequestOverUnixSocket) {
  Channel ch(*Endpoint::Parse("unix:" + socket_path_), Client());
  int pipe_fds[2];
  ASSERT_EQ(::pipe(pipe_fds), 0);
  UniqueFd read_end(pipe_fds[0]), write_end(pipe_fds[1]);
  ASSERT_EQ(::write(write_end.get(), "hello", 5), 5);
  for (int round = 0; round < 3; ++round) {  // the connection stays in step afterwards
    std::string reply;
    std::byte payload[64];
    size_t got = 0;
    const int fds[2] = {read_end.get(), write_end.get()};
    CallArgs args;
    args.method = Method::kAdoptLocal;
    args.reply_header = &reply;
    args.reply_payload = payload;
    args.reply_payload_len = &got;
    args.fds = fds;
    Status st = ch.Call(args);
    ASSERT_TRUE(st.ok()) << st.ToString();
    ASSERT_EQ(got, 5u);
    EXPECT_EQ(std::string(reinterpret_cast<char*>(payload), got), "hello");
    ASSERT_EQ(::write(write_end.get(), "hello", 5), 5);
  }
  // Without descriptors the handler sees none.
  std::string reply;
  CallArgs args;
  args.method = Method::kAdoptLocal;
  args.reply_header = &reply;
  EXPECT_EQ(ch.Call(args).code(), StatusCode::kInvalidArgument);
  ExpectStillServes();
}

TEST_F(RpcTest, GarbageBeforeHelloClosesOnlyThatConnection) {
  std::mt19937 rng(42);
  for (int round = 0; round < 20; ++round) {
    int fd = RawConnect();
    std::vector<char> junk(1 + rng() % 300);
    for (char& c : junk) c = static_cast<char>(rng());
    ::send(fd, junk.data(), junk.size(), MSG_NOSIGNAL);
    EXPECT_TRUE(DrainUntilClosed(fd));
    ::close(fd);
  }
  ExpectStillServes();
}

TEST_F(RpcTest, OversizedAndTruncatedFramesAfterAuth) {
  // Authenticate properly, then send more than the server accepts (the
  // client's own limit is raised so that it does not refuse first).
  ClientOptions loose = Client();
  loose.limits.max_payload = 4 << 20;
  auto conn = Connection::Open(tcp_, loose);
  ASSERT_TRUE(conn.ok());
  std::string reply;
  std::vector<std::byte> big((1 << 20) + 1);
  CallArgs args;
  args.method = Method::kChunkWrite;
  args.payload = big;
  args.reply_header = &reply;
  Status st = (*conn)->Call(args);
  // The server answers kRpcTooLarge and closes; the close may reach the
  // client while it is still sending (then it sees a reset).
  EXPECT_TRUE(st.code() == StatusCode::kRpcTooLarge || st.code() == StatusCode::kRpcClosed)
      << st.ToString();
  EXPECT_TRUE((*conn)->broken());

  Channel strict(tcp_, Client());
  CallArgs local = args;
  std::vector<std::byte> too_big((17u << 20) + 1);
  local.payload = too_big;
  EXPECT_EQ(strict.Call(local).code(), StatusCode::kRpcTooLarge);

  // A truncated frame: half a header, then the client disappears.
  int fd = RawConnect();
  std::byte head[kFrameHeaderSize];
  EncodeFrameHeader(FrameHeader{Method::kGetAttr, 0, 1, 0, 10, 0}, head);
  ::send(fd, head, 16, MSG_NOSIGNAL);
  ::close(fd);
  ExpectStillServes();
}


TEST(Endpoint, Parse) {
  EXPECT_EQ(Endpoint::Parse("10.0.0.1:7700")->port, 7700);
  EXPECT_TRUE(Endpoint::Parse("unix:/run/x.sock")->is_unix());
  EXPECT_FALSE(Endpoint::Parse("nohostport").ok());
  EXPECT_FALSE(Endpoint::Parse("h:99999").ok());
  EXPECT_FALSE(Endpoint::Parse("h:12ab").ok());
}

TEST(Endpoint, ParseList) {
  auto two = Endpoint::ParseList("a:7700,unix:/run/m.sock");
  ASSERT_TRUE(two.ok());
  ASSERT_EQ(two->size(), 2u);
  EXPECT_EQ((*two)[0].ToString(), "a:7700");
  EXPECT_TRUE((*two)[1].is_unix());
  EXPECT_EQ(Endpoint::ParseList("a:7700")->size(), 1u);
  EXPECT_FALSE(Endpoint::ParseList("a:7700,").ok());
  EXPECT_FALSE(Endpoint::ParseList("").ok());
  EXPECT_FALSE(Endpoint::ParseList("a:7700,b").ok());
}

}  // namespace
}  // namespace t0fs::rpc

namespace t0fs::rpc {
namespace {

// A server that is stopped or hung still has its listen backlog accept a
// connection, and then never says Hello: the handshake gives up within the
// connect timeout, not the i/o timeout (an hour here: waiting that long is
// the failure this guards against).
TEST(RpcHandshake, AServerThatNeverSaysHelloFailsWithinTheConnectTimeout) {
  const std::string path = "/tmp/t0fs-rpc-mute-" + std::to_string(::getpid());
  ::unlink(path.c_str());
  int listener = ::socket(AF_UNIX, SOCK_STREAM, 0);
  ASSERT_GE(listener, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path.c_str(), sizeof(addr.sun_path) - 1);
  ASSERT_EQ(::bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(::listen(listener, 8), 0);  // never accepted: the kernel completes the connect
  ClientOptions o;
  o.secret = "s";
  o.connect_timeout.value = std::chrono::milliseconds(200);
  o.io_timeout.value = std::chrono::hours(1);
  Channel ch(*Endpoint::Parse("unix:" + path), o);
  pb::GetAttrReq req;
  pb::AttrRsp rsp;
  Status st = ch.Call<Method::kGetAttr>(req, &rsp);
  EXPECT_EQ(st.code(), StatusCode::kRpcTimeout) << st.ToString();
  ::close(listener);
  ::unlink(path.c_str());
}

}  // namespace
}  // namespace t0fs::rpc
