// Sends hostile input to a meta and a data service and checks that each
// connection gets an error or is closed, and that the service still answers
// a well-formed request afterwards.
//
//   bad_input META_ADDR DATA_ADDR SECRET_FILE
#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "common/secret.h"
#include "rpc/channel.h"
#include "rpc/frame.h"
#include "rpc/proto/data.pb.h"
#include "rpc/proto/meta.pb.h"

namespace {

using namespace t0fs;
int failures = 0;

void Check(bool ok, const std::string& what) {
  std::printf("%s %s\n", ok ? "ok  " : "FAIL", what.c_str());
  if (!ok) ++failures;
}

int Dial(const rpc::Endpoint& ep) {
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  if (getaddrinfo(ep.host.c_str(), std::to_string(ep.port).c_str(), &hints, &res) != 0) return -1;
  int fd = socket(res->ai_family, SOCK_STREAM, 0);
  if (connect(fd, res->ai_addr, res->ai_addrlen) != 0) {
    close(fd);
    fd = -1;
  }
  freeaddrinfo(res);
  timeval tv{15, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  return fd;
}

// True if the server closes the connection (EOF or reset) within the
// timeout, after sending anything it likes (an error frame).
bool ClosedByServer(int fd) {
  char buf[4096];
  for (;;) {
    ssize_t n = recv(fd, buf, sizeof buf, 0);
    if (n == 0) return true;
    if (n < 0) return errno == ECONNRESET;
  }
}

bool StillServes(const rpc::Endpoint& ep, const std::string& secret, bool meta) {
  rpc::ClientOptions o;
  o.secret = secret;
  rpc::Channel ch(ep, o);
  if (meta) {
    pb::GetAttrReq req;
    req.set_ino(1);
    pb::AttrRsp rsp;
    return ch.Call<rpc::Method::kGetAttr>(req, &rsp).ok() && rsp.attr().ino() == 1;
  }
  pb::ChunkStatReq req;
  req.set_chunk(999999999);
  req.set_volume(1);
  pb::ChunkStatRsp rsp;
  Status st = ch.Call<rpc::Method::kChunkStat>(req, &rsp);
  // A proper answer: no capability, no chunk I/O.
  return st.code() == StatusCode::kDataBadCapability;
}

void Attack(const std::string& name, const rpc::Endpoint& ep, const std::string& secret, bool meta) {
  std::mt19937 rng(7);
  for (int round = 0; round < 30; ++round) {
    int fd = Dial(ep);
    std::vector<char> junk(1 + rng() % 5000);
    for (char& c : junk) c = static_cast<char>(rng());
    send(fd, junk.data(), junk.size(), MSG_NOSIGNAL);
    if (round % 3 == 0) shutdown(fd, SHUT_WR);  // some peers just stop talking
    bool closed = ClosedByServer(fd);
    close(fd);
    if (!closed) {
      Check(false, name + ": random bytes round " + std::to_string(round) + " left the connection open");
      return;
    }
  }
  Check(true, name + ": 30 rounds of random bytes before authentication were refused");

  // Authenticated peers that misbehave.
  rpc::ClientOptions o;
  o.secret = secret;
  o.limits.max_payload = 64u << 20;  // let the client send what the server must refuse
  o.limits.max_header = 64u << 20;
  {
    auto conn = rpc::Connection::Open(ep, o);
    std::vector<std::byte> big(20u << 20);
    std::string reply;
    rpc::CallArgs args;
    args.method = meta ? rpc::Method::kLookup : rpc::Method::kChunkWrite;
    args.payload = big;
    args.reply_header = &reply;
    Status st = conn.ok() ? (*conn)->Call(args) : conn.status();
    Check(!st.ok() && conn.ok(), name + ": oversized frame refused (" + st.ToString() + ")");
  }
  {
    auto conn = rpc::Connection::Open(ep, o);
    std::string garbage = "\x0a\xff\xff\xff\xff\x0f not protobuf";
    std::string reply;
    rpc::CallArgs args;
    args.method = meta ? rpc::Method::kMakeNode : rpc::Method::kChunkRead;
    args.header = garbage;
    args.reply_header = &reply;
    Status st = conn.ok() ? (*conn)->Call(args) : conn.status();
    Check(st.code() == StatusCode::kRpcMalformed, name + ": malformed message refused (" + st.ToString() + ")");
  }
  {
    auto conn = rpc::Connection::Open(ep, o);
    std::string reply;
    rpc::CallArgs args;
    args.method = static_cast<rpc::Method>(4242);
    args.reply_header = &reply;
    Status st = conn.ok() ? (*conn)->Call(args) : conn.status();
    Check(st.code() == StatusCode::kRpcUnknownMethod, name + ": unknown method refused (" + st.ToString() + ")");
  }
  {
    // Fields out of range inside a valid message.
    rpc::Channel ch(ep, o);
    Status st;
    if (meta) {
      pb::ReadDirReq req;
      req.set_ino(~0ull);
      req.set_max_entries(~0u);
      pb::ReadDirRsp rsp;
      st = ch.Call<rpc::Method::kReadDir>(req, &rsp);
    } else {
      pb::ChunkReadReq req;
      req.set_chunk(1);
      req.set_volume(1);
      req.set_offset(~0ull - 10);
      req.set_length(~0u);
      pb::ChunkReadRsp rsp;
      st = ch.Call<rpc::Method::kChunkRead>(req, &rsp);
    }
    Check(!st.ok(), name + ": out-of-range fields refused (" + st.ToString() + ")");
  }
  {
    // A truncated frame, then the peer vanishes.
    int fd = Dial(ep);
    std::byte head[rpc::kFrameHeaderSize];
    rpc::EncodeFrameHeader(rpc::FrameHeader{rpc::Method::kHello, 0, 1, 0, 100, 0}, head);
    send(fd, head, 20, MSG_NOSIGNAL);
    close(fd);
  }
  Check(StillServes(ep, secret, meta), name + ": still serves a well-formed request");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s META_ADDR DATA_ADDR SECRET_FILE\n", argv[0]);
    return 2;
  }
  auto secret = LoadSecret(argv[3]);
  auto meta = rpc::Endpoint::Parse(argv[1]);
  auto data = rpc::Endpoint::Parse(argv[2]);
  if (!secret.ok() || !meta.ok() || !data.ok()) {
    std::fprintf(stderr, "bad arguments\n");
    return 2;
  }
  Attack("meta", *meta, *secret, true);
  Attack("data", *data, *secret, false);
  std::printf("%s\n", failures == 0 ? "bad input: all refused, services alive" : "bad input: FAILURES");
  return failures == 0 ? 0 : 1;
}
