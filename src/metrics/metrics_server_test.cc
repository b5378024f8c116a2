// MetricsServer over raw loopback sockets: routes, errors, limits, timeouts.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <thread>

#include <gtest/gtest.h>

#include "metrics/metrics_server.h"
#include "metrics/text_format.h"

namespace t0fs::metrics {
namespace {

// A blocking loopback client socket; every read gives up after 10 s so a
// broken server fails the test instead of hanging it.
class Client {
 public:
  explicit Client(uint16_t port) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    timeval tv{10, 0};
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  }
  ~Client() { Close(); }
  void Close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }
  bool connected() const { return connected_; }

  bool Send(std::string_view data) {
    while (!data.empty()) {
      ssize_t n = ::send(fd_, data.data(), data.size(), MSG_NOSIGNAL);
      if (n <= 0) return false;
      data.remove_prefix(static_cast<size_t>(n));
    }
    return true;
  }
  // Everything until the server closes (or the 10 s guard, or a reset).
  std::string ReadToEnd() {
    std::string out;
    char buf[4096];
    for (;;) {
      ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
      if (n <= 0) break;
      out.append(buf, static_cast<size_t>(n));
    }
    return out;
  }
  // One response, framed by Content-Length; "" if the connection ends first.
  std::string ReadResponse(bool head_only = false) {
    for (;;) {
      size_t head_end = pending_.find("\r\n\r\n");
      if (head_end != std::string::npos) {
        size_t length_at = pending_.find("Content-Length: ");
        size_t length = std::stoul(pending_.substr(length_at + 16));
        size_t total = head_end + 4 + (head_only ? 0 : length);
        if (pending_.size() >= total) {
          std::string response = pending_.substr(0, total);
          pending_.erase(0, total);
          return response;
        }
      }
      char buf[4096];
      ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
      if (n <= 0) return "";
      pending_.append(buf, static_cast<size_t>(n));
    }
  }
  // True when the server closed the connection (EOF or reset) without sending more.
  bool ClosedByServer() {
    char c;
    ssize_t n = ::recv(fd_, &c, 1, 0);
    return n == 0 || (n < 0 && errno == ECONNRESET);
  }

 private:
  int fd_ = -1;
  bool connected_ = false;
  std::string pending_;
};

int StatusOf(const std::string& response) {
  if (!response.starts_with("HTTP/1.1 ")) return -1;
  return std::stoi(response.substr(9, 3));
}
std::string BodyOf(const std::string& response) {
  size_t at = response.find("\r\n\r\n");
  return at == std::string::npos ? "" : response.substr(at + 4);
}
bool HasHeader(const std::string& response, const std::string& header) {
  return response.substr(0, response.find("\r\n\r\n") + 2).find("\r\n" + header + "\r\n") !=
         std::string::npos;
}

class MetricsServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    registry_.AddCounter("t0fs_test_requests_total", "Requests.", {"op"})
        .With({{"op", "read"}})
        .Inc(5);
    MetricsServerOptions options;
    options.name = "t0fs test";
    options.timeout.value = std::chrono::milliseconds(500);
    options.max_request_bytes = 1024;
    StartServer(options);
  }
  void StartServer(const MetricsServerOptions& options) {
    server_ = std::make_unique<MetricsServer>(registry_, options);
    Status st = server_->Start("127.0.0.1:0");
    ASSERT_TRUE(st.ok()) << st.ToString();
    ASSERT_TRUE(server_->running());
    ASSERT_NE(server_->port(), 0);
  }
  void TearDown() override { server_->Stop(); }

  std::string Fetch(std::string_view request) {
    Client client(server_->port());
    EXPECT_TRUE(client.connected());
    EXPECT_TRUE(client.Send(request));
    return client.ReadToEnd();
  }

  Registry registry_;
  std::unique_ptr<MetricsServer> server_;
};

TEST_F(MetricsServerTest, ServesMetrics) {
  EXPECT_EQ(server_->address(), "127.0.0.1:" + std::to_string(server_->port()));
  EXPECT_EQ(server_->url(), "http://" + server_->address() + "/metrics");
  std::string rsp = Fetch("GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  EXPECT_EQ(StatusOf(rsp), 200) << rsp;
  EXPECT_TRUE(HasHeader(rsp, "Content-Type: text/plain; version=0.0.4; charset=utf-8")) << rsp;
  EXPECT_TRUE(HasHeader(rsp, "Connection: close")) << rsp;
  std::string body = BodyOf(rsp);
  EXPECT_EQ(body, registry_.Render());
  EXPECT_TRUE(HasHeader(rsp, "Content-Length: " + std::to_string(body.size()))) << rsp;
  EXPECT_NE(body.find("t0fs_test_requests_total{op=\"read\"} 5\n"), std::string::npos);

  // A query string is ignored; HTTP/1.0 closes after the response.
  rsp = Fetch("GET /metrics?x=1 HTTP/1.0\r\n\r\n");
  EXPECT_EQ(StatusOf(rsp), 200) << rsp;
  EXPECT_EQ(BodyOf(rsp), registry_.Render());
}

TEST_F(MetricsServerTest, IndexNotFoundAndMethods) {
  std::string rsp = Fetch("GET / HTTP/1.1\r\nConnection: close\r\n\r\n");
  EXPECT_EQ(StatusOf(rsp), 200) << rsp;
  EXPECT_TRUE(HasHeader(rsp, "Content-Type: text/html; charset=utf-8")) << rsp;
  EXPECT_NE(rsp.find("<a href=\"/metrics\">"), std::string::npos) << rsp;
  EXPECT_NE(rsp.find("t0fs test"), std::string::npos) << rsp;

  EXPECT_EQ(StatusOf(Fetch("GET /metricsx HTTP/1.1\r\nConnection: close\r\n\r\n")), 404);
  EXPECT_EQ(StatusOf(Fetch("GET /favicon.ico HTTP/1.1\r\nConnection: close\r\n\r\n")), 404);

  rsp = Fetch("POST /metrics HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc");
  EXPECT_EQ(StatusOf(rsp), 405) << rsp;
  EXPECT_TRUE(HasHeader(rsp, "Allow: GET, HEAD")) << rsp;
  EXPECT_EQ(StatusOf(Fetch("DELETE / HTTP/1.1\r\nConnection: close\r\n\r\n")), 405);

  rsp = Fetch("HEAD /metrics HTTP/1.1\r\nConnection: close\r\n\r\n");
  EXPECT_EQ(StatusOf(rsp), 200) << rsp;
  EXPECT_EQ(BodyOf(rsp), "");
  EXPECT_TRUE(HasHeader(rsp, "Content-Length: " + std::to_string(registry_.Render().size())));

  EXPECT_EQ(StatusOf(Fetch("GARBAGE\r\n\r\n")), 400);
  EXPECT_EQ(StatusOf(Fetch("GET /metrics SPDY/3\r\n\r\n")), 400);
  EXPECT_EQ(StatusOf(Fetch("GET /metrics HTTP/1.1\r\nno colon\r\n\r\n")), 400);
}

TEST_F(MetricsServerTest, KeepAliveAndPipelining) {
  Client client(server_->port());
  ASSERT_TRUE(client.connected());
  ASSERT_TRUE(client.Send("GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n"));
  std::string first = client.ReadResponse();
  EXPECT_EQ(StatusOf(first), 200) << first;
  EXPECT_TRUE(HasHeader(first, "Connection: keep-alive"));
  // The next scrape on the same connection sees new values.
  registry_.AddCounter("t0fs_test_requests_total", "Requests.", {"op"})
      .With({{"op", "read"}})
      .Inc();
  ASSERT_TRUE(client.Send("GET /metrics HTTP/1.1\r\n\r\nGET /nope HTTP/1.1\r\n\r\n"));
  std::string second = client.ReadResponse();
  EXPECT_NE(BodyOf(second).find("t0fs_test_requests_total{op=\"read\"} 6\n"), std::string::npos);
  std::string third = client.ReadResponse();
  EXPECT_EQ(StatusOf(third), 404) << third;
  // HEAD keeps the connection too.
  ASSERT_TRUE(client.Send("HEAD / HTTP/1.1\r\n\r\n"));
  EXPECT_EQ(StatusOf(client.ReadResponse(/*head_only=*/true)), 200);
}

TEST_F(MetricsServerTest, OversizedRequestGets431) {
  std::string request = "GET /metrics HTTP/1.1\r\nX-Filler: " + std::string(16 << 10, 'a');
  std::string rsp = Fetch(request);  // never ends its head
  EXPECT_EQ(StatusOf(rsp), 431) << rsp.substr(0, 200);
  // The server is still fine.
  EXPECT_EQ(StatusOf(Fetch("GET /metrics HTTP/1.1\r\nConnection: close\r\n\r\n")), 200);
}

TEST_F(MetricsServerTest, SlowAndIdleClientsAreDisconnected) {
  Client slow(server_->port());
  ASSERT_TRUE(slow.connected());
  ASSERT_TRUE(slow.Send("GET /metr"));  // and never the rest
  Client idle(server_->port());
  ASSERT_TRUE(idle.connected());
  ASSERT_TRUE(idle.Send("GET / HTTP/1.1\r\n\r\n"));
  EXPECT_EQ(StatusOf(idle.ReadResponse()), 200);
  // Both are closed by the server's deadline (500 ms here); the client's
  // 10 s receive guard is only there to fail instead of hanging.
  EXPECT_TRUE(slow.ClosedByServer());
  EXPECT_TRUE(idle.ClosedByServer());
}

TEST_F(MetricsServerTest, ConcurrentScrapers) {
  constexpr int kThreads = 8;
  constexpr int kScrapes = 20;
  std::atomic<int> ok{0};
  std::vector<std::thread> threads;
  for (int thread_idx = 0; thread_idx < kThreads; ++thread_idx) {
    threads.emplace_back([&] {
      Client client(server_->port());
      if (!client.connected()) return;
      for (int scrape_idx = 0; scrape_idx < kScrapes; ++scrape_idx) {
        if (!client.Send("GET /metrics HTTP/1.1\r\n\r\n")) return;
        std::string rsp = client.ReadResponse();
        if (StatusOf(rsp) == 200 &&
            BodyOf(rsp).find("t0fs_test_requests_total") != std::string::npos) {
          ++ok;
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(ok.load(), kThreads * kScrapes);
}

TEST_F(MetricsServerTest, ConnectionLimit) {
  server_->Stop();
  MetricsServerOptions options;
  options.max_connections = 2;
  StartServer(options);
  Client a(server_->port());
  Client b(server_->port());
  for (Client* c : {&a, &b}) {  // a served request proves the connection was counted
    ASSERT_TRUE(c->Send("GET / HTTP/1.1\r\n\r\n"));
    ASSERT_EQ(StatusOf(c->ReadResponse()), 200);
  }
  Client over(server_->port());
  EXPECT_TRUE(over.ClosedByServer());
  a.Close();
  // Once the server has noticed, a new connection is served again.
  bool served = false;
  for (int attempt = 0; attempt < 100 && !served; ++attempt) {
    Client again(server_->port());
    again.Send("GET / HTTP/1.1\r\nConnection: close\r\n\r\n");
    served = StatusOf(again.ReadToEnd()) == 200;
    if (!served) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_TRUE(served);
}

TEST_F(MetricsServerTest, StopWithOpenConnectionsAndRestart) {
  Client idle(server_->port());
  ASSERT_TRUE(idle.Send("GET / HTTP/1.1\r\n\r\n"));
  ASSERT_EQ(StatusOf(idle.ReadResponse()), 200);
  Client partial(server_->port());
  ASSERT_TRUE(partial.Send("GET /"));
  server_->Stop();  // must not wait for either client
  EXPECT_FALSE(server_->running());
  EXPECT_EQ(server_->port(), 0);
  EXPECT_TRUE(idle.ClosedByServer());
  server_->Stop();  // idempotent
  ASSERT_TRUE(server_->Start("127.0.0.1:0").ok());
  EXPECT_EQ(StatusOf(Fetch("GET /metrics HTTP/1.1\r\nConnection: close\r\n\r\n")), 200);
}

TEST(MetricsServer, ListenAddresses) {
  Registry registry;
  MetricsServer server(registry);
  EXPECT_TRUE(server.Start("").ok());  // disabled
  EXPECT_FALSE(server.running());
  for (const char* bad : {"nonsense", "127.0.0.1", "127.0.0.1:", "127.0.0.1:99999", "127.0.0.1:80x",
                          "::1:9100", "[::1:9100"}) {
    Status st = server.Start(bad);
    EXPECT_FALSE(st.ok()) << bad;
    EXPECT_FALSE(server.running()) << bad;
  }
  ASSERT_TRUE(server.Start("127.0.0.1:0").ok());
  EXPECT_EQ(server.Start("127.0.0.1:0").code(), StatusCode::kBusy);
  // A port in use is an error naming the address.
  MetricsServer second(registry);
  Status st = second.Start(server.address());
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find(server.address()), std::string::npos) << st.ToString();
  server.Stop();
}

}  // namespace
}  // namespace t0fs::metrics
