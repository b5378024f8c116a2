// rpc::Parking: long polls wait without holding a server thread, and end at
// a wake (not their own tag's), at their time, or when the server stops.
#include <gtest/gtest.h>
#include <poll.h>

#include <atomic>
#include <functional>
#include <memory>
#include <string>

#include "metrics/registry.h"
#include "rpc/channel.h"
#include "rpc/proto/meta.pb.h"
#include "rpc/server.h"

namespace t0fs::rpc {
namespace {

const std::string kParkingSecret(64, 'p');

// One server thread. Changes answers `value_` in `next` once it is past the
// request's `after`; before that it parks (tag: the request's session) for
// the request's wait_ms. GetAttr answers at once.
class ParkingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::vector<std::pair<Method, Handler>> handlers;
    handlers.push_back(Handle<Method::kChanges>(
        [this](const pb::ChangesReq& req, pb::ChangesRsp& rsp, Call& call) {
          ++runs_;
          const uint64_t seen = parking_->generation();
          const uint64_t value = value_.load();
          if (value <= req.after() && req.wait_ms() > 0) {
            const auto now = std::chrono::steady_clock::now();
            if (call.park_until == std::chrono::steady_clock::time_point{}) {
              call.park_until = now + std::chrono::milliseconds(req.wait_ms());
            }
            if (now < call.park_until) {
              if (between_) std::exchange(between_, nullptr)();
              call.Park(*parking_, req.session(), seen);
              return Status::Ok();
            }
          }
          rsp.set_next(value);
          return Status::Ok();
        }));
    handlers.push_back(
        Handle<Method::kGetAttr>([](const pb::GetAttrReq& req, pb::AttrRsp& rsp, Call&) {
          rsp.mutable_attr()->set_ino(req.ino() + 1);
          return Status::Ok();
        }));
    ServerOptions opts;
    opts.name = "parking-test";
    opts.secret = kParkingSecret;
    opts.threads = 1;
    opts.listen = {*Endpoint::Parse("127.0.0.1:0")};
    opts.metrics = &registry_;
    server_ = std::make_unique<Server>(opts, std::move(handlers));
    ASSERT_TRUE(server_->Start().ok());
    options_.secret = kParkingSecret;
    options_.io_timeout.value = std::chrono::seconds(20);
  }
  void TearDown() override {
    if (server_) server_->Stop();
  }

  // Sends a Changes request on a connection of its own.
  std::unique_ptr<Connection> Ask(uint64_t session, uint64_t after, uint32_t wait_ms) {
    auto conn = Connection::Open(server_->bound(0), options_);
    EXPECT_TRUE(conn.ok()) << conn.status().ToString();
    pb::ChangesReq req;
    req.set_session(session);
    req.set_after(after);
    req.set_wait_ms(wait_ms);
    std::string out, unused;
    EXPECT_TRUE((*conn)->Send(MakeCallArgs<Method::kChanges>(req, &out, &unused)).ok());
    return std::move(*conn);
  }
  // Whether `conn` has an answer within `ms` (a parked request has none).
  static bool Answered(Connection& conn, int ms) {
    pollfd p{conn.fd(), POLLIN, 0};
    return ::poll(&p, 1, ms) == 1;
  }
  static Result<uint64_t> Answer(Connection& conn) {
    std::string unused, in;
    pb::ChangesReq req;
    RETURN_IF_ERROR(conn.Receive(MakeCallArgs<Method::kChanges>(req, &unused, &in)));
    pb::ChangesRsp rsp;
    if (!rsp.ParseFromString(in)) return Status(StatusCode::kRpcMalformed, "bad reply");
    return rsp.next();
  }
  // Until `n` requests are parked.
  void WaitParked(size_t n) {
    for (int i = 0; i < 2000 && parking_->parked() < n; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    ASSERT_EQ(parking_->parked(), n);
  }

  std::unique_ptr<Parking> parking_ = std::make_unique<Parking>();
  std::atomic<uint64_t> value_{0};
  std::atomic<int> runs_{0};
  std::function<void()> between_;  // run once between a handler's look and its parking
  metrics::Registry registry_;     // outlives server_
  std::unique_ptr<Server> server_;
  ClientOptions options_;
};

TEST_F(ParkingTest, AParkedRequestHoldsNoThreadAndIsAnsweredAtTheWake) {
  auto conn = Ask(/*session=*/1, /*after=*/0, /*wait_ms=*/60000);
  WaitParked(1);
  // The server's only thread serves another connection meanwhile.
  Channel other(server_->bound(0), options_);
  pb::GetAttrReq req;
  req.set_ino(41);
  pb::AttrRsp rsp;
  ASSERT_TRUE(other.Call<Method::kGetAttr>(req, &rsp).ok());
  EXPECT_EQ(rsp.attr().ino(), 42u);
  EXPECT_FALSE(Answered(*conn, 100));
  value_ = 5;
  parking_->Wake(/*except=*/2);  // another session's change
  auto next = Answer(*conn);
  ASSERT_TRUE(next.ok()) << next.status().ToString();
  EXPECT_EQ(*next, 5u);
  EXPECT_EQ(parking_->parked(), 0u);
  EXPECT_EQ(runs_.load(), 2);
  // One request in the metrics, however many times its handler ran.
  auto& requests = registry_.AddCounter("t0fs_rpc_server_requests_total", "", {"method", "result"});
  EXPECT_EQ(requests.With({{"method", "changes"}, {"result", "ok"}}).Value(), 1u);
}

TEST_F(ParkingTest, AWakeLeavesOutItsTagAndTheTimeEndsTheWait) {
  auto mine = Ask(/*session=*/7, 0, /*wait_ms=*/1500);
  auto theirs = Ask(/*session=*/8, 0, /*wait_ms=*/60000);
  WaitParked(2);
  value_ = 1;
  parking_->Wake(/*except=*/7);  // session 7's own change: only 8 runs again
  auto next = Answer(*theirs);
  ASSERT_TRUE(next.ok()) << next.status().ToString();
  EXPECT_EQ(*next, 1u);
  EXPECT_EQ(parking_->parked(), 1u);
  EXPECT_FALSE(Answered(*mine, 100));
  // Its time passes: the handler runs again and answers what it has.
  next = Answer(*mine);
  ASSERT_TRUE(next.ok()) << next.status().ToString();
  EXPECT_EQ(*next, 1u);
  // Without anything new, the time ends the wait with nothing.
  auto idle = Ask(9, /*after=*/1, /*wait_ms=*/200);
  next = Answer(*idle);
  ASSERT_TRUE(next.ok()) << next.status().ToString();
  EXPECT_EQ(*next, 1u);
}

TEST_F(ParkingTest, AWakeBetweenTheLookAndTheParkingIsNotLost) {
  // The change and its wake come after the handler looked (nothing new)
  // and before it parks: the request runs again at once instead of
  // sleeping through its minute.
  between_ = [this] {
    value_ = 3;
    parking_->Wake();
  };
  auto conn = Ask(1, 0, /*wait_ms=*/60000);
  ASSERT_TRUE(Answered(*conn, 20000));
  auto next = Answer(*conn);
  ASSERT_TRUE(next.ok()) << next.status().ToString();
  EXPECT_EQ(*next, 3u);
  EXPECT_EQ(runs_.load(), 2);
}

TEST_F(ParkingTest, StoppingTheServerEndsParkedRequests) {
  auto conn = Ask(1, 0, /*wait_ms=*/60000);
  WaitParked(1);
  parking_.reset();  // the Parking may go first: the waits hold its state
  server_->Stop();   // returns with a request parked
  server_.reset();   // and its connections close
  auto next = Answer(*conn);
  EXPECT_FALSE(next.ok());
}

}  // namespace
}  // namespace t0fs::rpc
