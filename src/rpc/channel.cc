#include "rpc/channel.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <fstream>

#include "common/cancel.h"
#include "common/logging.h"
#include "common/secret.h"
#include "rpc/proto/common.pb.h"

namespace t0fs::rpc {
namespace {

Status SetTimeouts(int fd, Duration send, Duration receive) {
  auto tv = [](Duration d) {
    timeval t{};
    t.tv_sec = d.value.count() / 1000;
    t.tv_usec = (d.value.count() % 1000) * 1000;
    return t;
  };
  const timeval rcv = tv(receive), snd = tv(send);
  if (::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &rcv, sizeof rcv) != 0 ||
      ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &snd, sizeof snd) != 0) {
    return Status::FromErrno(errno, "setsockopt timeout");
  }
  return Status::Ok();
}

// Non-blocking connect bounded by `timeout`, then back to blocking.
Status ConnectWithTimeout(int fd, const sockaddr* addr, socklen_t len, Duration timeout,
                          const std::string& what) {
  int flags = ::fcntl(fd, F_GETFL);
  ::fcntl(fd, F_SETFL, flags | O_NONBLOCK);
  int rc = ::connect(fd, addr, len);
  if (rc != 0 && errno != EINPROGRESS) {
    return Status(StatusCode::kRpcConnect, fmt::format("connect {}: {}", what, std::strerror(errno)));
  }
  if (rc != 0) {
    pollfd pfd{fd, POLLOUT, 0};
    int n = 0;
    do {
      n = ::poll(&pfd, 1, static_cast<int>(timeout.value.count()));
    } while (n < 0 && errno == EINTR);
    if (n == 0) return Status(StatusCode::kRpcConnect, fmt::format("connect {}: timed out", what));
    int err = 0;
    socklen_t errlen = sizeof err;
    ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &errlen);
    if (err != 0) {
      return Status(StatusCode::kRpcConnect, fmt::format("connect {}: {}", what, std::strerror(err)));
    }
  }
  ::fcntl(fd, F_SETFL, flags);
  return Status::Ok();
}

Result<UniqueFd> Dial(const Endpoint& ep, Duration timeout) {
  if (ep.is_unix()) {
    UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (!fd.valid()) return Status::FromErrno(errno, "socket");
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, ep.path.c_str(), sizeof(addr.sun_path) - 1);
    RETURN_IF_ERROR(ConnectWithTimeout(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr,
                                       timeout, ep.ToString()));
    return fd;
  }
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  int rc = ::getaddrinfo(ep.host.c_str(), std::to_string(ep.port).c_str(), &hints, &res);
  if (rc != 0) {
    return Status(StatusCode::kRpcConnect, fmt::format("resolve {}: {}", ep.ToString(), gai_strerror(rc)));
  }
  Status last(StatusCode::kRpcConnect, "no address for " + ep.ToString());
  for (addrinfo* ai = res; ai != nullptr; ai = ai->ai_next) {
    UniqueFd fd(::socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol));
    if (!fd.valid()) continue;
    last = ConnectWithTimeout(fd.get(), ai->ai_addr, ai->ai_addrlen, timeout, ep.ToString());
    if (last.ok()) {
      ::freeaddrinfo(res);
      int one = 1;
      ::setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      return fd;
    }
  }
  ::freeaddrinfo(res);
  return last;
}

}  // namespace

Result<std::unique_ptr<Connection>> Connection::Open(const Endpoint& ep, const ClientOptions& options) {
  ASSIGN_OR_RETURN(UniqueFd fd, Dial(ep, options.connect_timeout));
  // The handshake within the connect timeout: a live server says Hello at
  // once, and one that is stopped or hung (its kernel still accepts into
  // the listen backlog) must not cost each new connection the whole i/o
  // timeout (a minute per request through a mount whose data node hangs).
  const Duration handshake = std::min(options.connect_timeout, options.io_timeout,
                                      [](Duration a, Duration b) { return a.value < b.value; });
  std::unique_ptr<Connection> conn(new Connection(std::move(fd), options));
  conn->receive_total_ = handshake.value;
  conn->receive_slice_ = std::min<std::chrono::milliseconds>(handshake.value, kCancelSlice);
  RETURN_IF_ERROR(SetTimeouts(conn->fd_.get(), handshake, Duration{conn->receive_slice_}));
  Status st = conn->Handshake();
  if (!st.ok()) return st.WithContext(ep.ToString());
  conn->receive_total_ = options.io_timeout.value;
  conn->receive_slice_ =
      std::min<std::chrono::milliseconds>(options.io_timeout.value, kCancelSlice);
  RETURN_IF_ERROR(SetTimeouts(conn->fd_.get(), options.io_timeout, Duration{conn->receive_slice_}));
  return conn;
}

Status Connection::Fail(Status st) {
  broken_ = true;
  return st;
}

Status Connection::Handshake() {
  ASSIGN_OR_RETURN(FrameHeader h, ReceiveHead(nullptr));
  if (h.method != Method::kHello || h.payload_len != 0) {
    return Fail(Status(StatusCode::kRpcMalformed, "expected the server's Hello"));
  }
  std::string body(h.header_len, '\0');
  RETURN_IF_ERROR(ReceiveExact(reinterpret_cast<std::byte*>(body.data()), body.size()));
  pb::Hello challenge;
  if (!challenge.ParseFromString(body) || challenge.nonce().size() != 32) {
    return Fail(Status(StatusCode::kRpcMalformed, "malformed server Hello"));
  }
  std::string my_nonce = RandomBytes(32);
  Digest proof = HmacSha256(options_.secret, "client" + challenge.nonce());
  pb::Hello hello;
  hello.set_nonce(my_nonce);
  hello.set_proof(std::string(reinterpret_cast<const char*>(proof.data()), proof.size()));
  hello.set_role(options_.role);
  hello.set_version("t0fs 0.1");
  FrameHeader out;
  out.method = Method::kHello;
  out.request_id = next_id_++;
  RETURN_IF_ERROR(SendFrame(out, hello.SerializeAsString(), {}));
  ASSIGN_OR_RETURN(FrameHeader rh, ReceiveHead(nullptr));
  std::string answer(rh.header_len, '\0');
  RETURN_IF_ERROR(ReceiveExact(reinterpret_cast<std::byte*>(answer.data()), answer.size()));
  if (rh.status != 0) {
    return Fail(Status(CodeFromWire(rh.status), answer));
  }
  pb::Hello server;
  Digest expected = HmacSha256(options_.secret, "server" + my_nonce);
  if (!server.ParseFromString(answer) || server.proof().size() != expected.size() ||
      std::memcmp(server.proof().data(), expected.data(), expected.size()) != 0) {
    return Fail(Status(StatusCode::kRpcUnauthenticated,
                       "the server could not prove it holds the cluster secret"));
  }
  return Status::Ok();
}

Status Connection::SendFrame(const FrameHeader& h, std::string_view header,
                             std::span<const std::byte> payload, std::span<const int> fds) {
  if (fds.size() > kMaxFrameFds) return Status(StatusCode::kInvalidArgument, "too many descriptors for one request");
  FrameHeader frame = h;
  frame.header_len = static_cast<uint32_t>(header.size());
  frame.payload_len = static_cast<uint32_t>(payload.size());
  std::byte head[kFrameHeaderSize];
  EncodeFrameHeader(frame, head);
  std::array<iovec, 3> iov = {iovec{head, sizeof head},
                              iovec{const_cast<char*>(header.data()), header.size()},
                              iovec{const_cast<std::byte*>(payload.data()), payload.size()}};
  // Descriptors go with the first byte (the server's first recvmsg of the head).
  FdControl control;
  bool fds_sent = fds.empty();
  for (size_t first = 0; first < iov.size();) {
    msghdr msg{};
    msg.msg_iov = iov.data() + first;
    msg.msg_iovlen = iov.size() - first;
    if (!fds_sent) AttachFds(msg, fds, control);
    ssize_t n = ::sendmsg(fd_.get(), &msg, MSG_NOSIGNAL);
    if (n > 0) fds_sent = true;
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN) return Fail(Status(StatusCode::kRpcTimeout, "send timed out"));
      return Fail(Status(StatusCode::kRpcClosed, fmt::format("send: {}", std::strerror(errno))));
    }
    first = SkipSent(iov, first, static_cast<size_t>(n));
  }
  return Status::Ok();
}

Status Connection::KeepWaiting(std::chrono::steady_clock::time_point* deadline) {
  const auto now = std::chrono::steady_clock::now();
  // (The first slice ran out: the deadline counts from the wait's start.)
  if (*deadline == std::chrono::steady_clock::time_point{}) {
    *deadline = now - receive_slice_ + receive_total_;
  }
  if (now >= *deadline) {
    return Fail(Status(StatusCode::kRpcTimeout, "no reply within the i/o timeout"));
  }
  if (CancelRequested()) {
    return Fail(CancelledWait("a reply"));
  }
  return Status::Ok();
}

Status Connection::ReceiveExact(std::byte* buf, size_t len) {
  size_t done = ahead_.Take(buf, len);
  std::chrono::steady_clock::time_point deadline{};  // set when a slice first runs out
  while (done < len) {
    ssize_t n = ::recv(fd_.get(), buf + done, len - done, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN) {
        RETURN_IF_ERROR(KeepWaiting(&deadline));
        continue;
      }
      return Fail(Status(StatusCode::kRpcClosed, fmt::format("receive: {}", std::strerror(errno))));
    }
    if (n == 0) return Fail(Status(StatusCode::kRpcClosed, "connection closed by the server"));
    done += static_cast<size_t>(n);
  }
  return Status::Ok();
}

Result<FrameHeader> Connection::ReceiveHead(std::vector<UniqueFd>* fds) {
  // Into ahead_: the reply's body usually comes with its head. (Nothing
  // follows a reply: one request at a time is in flight.) The first recvmsg
  // may carry descriptors (SCM_RIGHTS arrive with the first byte).
  FdControl control;
  std::chrono::steady_clock::time_point deadline{};  // set when a slice first runs out
  while (ahead_.size() < kFrameHeaderSize) {
    std::span<std::byte> room = ahead_.Room();
    iovec iov{room.data(), room.size()};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.bytes;
    msg.msg_controllen = sizeof control.bytes;
    ssize_t n = ::recvmsg(fd_.get(), &msg, MSG_CMSG_CLOEXEC);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN) {
        RETURN_IF_ERROR(KeepWaiting(&deadline));
        continue;
      }
      return Fail(Status(StatusCode::kRpcClosed, fmt::format("receive: {}", std::strerror(errno))));
    }
    if (n == 0) return Fail(Status(StatusCode::kRpcClosed, "connection closed by the server"));
    TakeFds(msg, fds);  // closed unless the caller asked for descriptors
    ahead_.Added(static_cast<size_t>(n));
  }
  std::byte head[kFrameHeaderSize];
  ahead_.Take(head, sizeof head);
  FrameHeader h;
  Status st = DecodeFrameHeader(std::span<const std::byte, kFrameHeaderSize>(head, sizeof head),
                                options_.limits, &h);
  if (!st.ok()) return Fail(st);
  if (!h.is_response()) return Fail(Status(StatusCode::kRpcMalformed, "request frame from a server"));
  return h;
}

Status Connection::Send(const CallArgs& args) {
  if (broken_) return Status(StatusCode::kRpcClosed, "connection is broken");
  if (args.payload.size() > options_.limits.max_payload || args.header.size() > options_.limits.max_header) {
    return Status(StatusCode::kRpcTooLarge, fmt::format("request of {} bytes exceeds the frame limit",
                                                        args.header.size() + args.payload.size()));
  }
  FrameHeader h;
  h.method = args.method;
  h.request_id = next_id_++;
  pending_id_ = h.request_id;
  pending_method_ = h.method;
  return SendFrame(h, args.header, args.payload, args.fds);
}

Status Connection::Call(const CallArgs& args) {
  RETURN_IF_ERROR(Send(args));
  return Receive(args);
}

Status Connection::Receive(const CallArgs& args) {
  if (broken_) return Status(StatusCode::kRpcClosed, "connection is broken");
  FrameHeader h;
  h.method = pending_method_;
  h.request_id = pending_id_;
  ASSIGN_OR_RETURN(FrameHeader rh, ReceiveHead(args.reply_fds));
  if (rh.request_id != h.request_id || rh.method != h.method) {
    // A server that refuses a frame it cannot parse may answer with its own
    // status before closing; prefer that explanation.
    if (rh.status != 0 && rh.request_id == h.request_id) {
      std::string msg(std::min<size_t>(rh.header_len, 4096), '\0');
      (void)ReceiveExact(reinterpret_cast<std::byte*>(msg.data()), msg.size());
      return Fail(Status(CodeFromWire(rh.status), msg));
    }
    return Fail(Status(StatusCode::kRpcMalformed, "reply does not match the request"));
  }
  std::string local_header;
  std::string* header = args.reply_header != nullptr ? args.reply_header : &local_header;
  header->resize(rh.header_len);
  RETURN_IF_ERROR(ReceiveExact(reinterpret_cast<std::byte*>(header->data()), header->size()));
  if (rh.status != 0) {
    if (rh.payload_len != 0) return Fail(Status(StatusCode::kRpcMalformed, "error reply with payload"));
    Status remote(CodeFromWire(rh.status), *header);
    // The server closes the connection after refusing a frame.
    if (remote.code() == StatusCode::kRpcMalformed || remote.code() == StatusCode::kRpcTooLarge) {
      return Fail(remote);
    }
    return remote;
  }
  if (rh.payload_len > args.reply_payload.size()) {
    return Fail(Status(StatusCode::kRpcTooLarge,
                       fmt::format("reply payload of {} bytes exceeds the {} byte buffer", rh.payload_len,
                                   args.reply_payload.size())));
  }
  RETURN_IF_ERROR(ReceiveExact(args.reply_payload.data(), rh.payload_len));
  if (args.reply_payload_len != nullptr) *args.reply_payload_len = rh.payload_len;
  return Status::Ok();
}

Channel::Channel(std::vector<Endpoint> endpoints, ClientOptions options)
    : endpoints_(endpoints.empty() ? std::vector<Endpoint>{Endpoint{}} : std::move(endpoints)),
      options_(std::move(options)),
      idle_(endpoints_.size()),
      paused_until_(endpoints_.size()),
      strikes_(endpoints_.size()) {
  // Spreading clients start at different servers, so that the first
  // requests of many clients do not all land on the first one.
  if (options_.spread) turn_ = static_cast<size_t>(::getpid());
  hedge_options_ = options_;
  if (options_.hedge_after.value.count() > 0) {
    hedge_options_.connect_timeout.value = std::min(options_.connect_timeout.value, options_.hedge_after.value);
  }
}

Endpoint Channel::endpoint() const {
  std::lock_guard lock(mu_);
  return endpoints_[current_];
}

Status Channel::Call(const CallArgs& args) {
  if (options_.hedge_after.value.count() > 0 && endpoints_.size() > 1) return HedgedCall(args);
  ASSIGN_OR_RETURN(std::unique_ptr<Connection> conn, Acquire());
  Status st = conn->Call(args);
  if (IsTransportError(st.code())) {
    Failover(conn->route(), st);
  } else {
    Answered(conn->route());
  }
  Release(std::move(conn));
  return st;
}

void Channel::Answered(size_t route) {
  if (!options_.spread || endpoints_.size() < 2) return;
  std::lock_guard lock(mu_);
  strikes_[route] = 0;
}

std::optional<size_t> Channel::NextLive(std::optional<size_t> except) {
  const auto now = std::chrono::steady_clock::now();
  for (size_t tries = 0; tries < endpoints_.size(); ++tries) {
    const size_t route = turn_++ % endpoints_.size();
    if (route != except && paused_until_[route] <= now) return route;
  }
  return std::nullopt;
}

size_t Channel::NextRoute() {
  if (!options_.spread || endpoints_.size() < 2) return current_;
  if (std::optional<size_t> live = NextLive(std::nullopt)) return current_ = *live;
  // Every one failed lately: try them in turn anyway.
  return current_ = turn_++ % endpoints_.size();
}

Result<std::unique_ptr<Connection>> Channel::Acquire() {
  size_t route = 0;
  {
    std::lock_guard lock(mu_);
    route = NextRoute();
  }
  return AcquireRoute(route, false);
}

Result<std::unique_ptr<Connection>> Channel::AcquireRoute(size_t route, bool hedging) {
  bool bounded = false;
  {
    std::lock_guard lock(mu_);
    auto& idle = idle_[route];
    if (!idle.empty()) {
      auto conn = std::move(idle.back());
      idle.pop_back();
      return conn;
    }
    bounded = hedging && OtherLive(route);
  }
  auto conn = Connection::Open(endpoints_[route], bounded ? hedge_options_ : options_);
  if (!conn.ok()) {
    if (IsTransportError(conn.status().code())) Failover(route, conn.status());
    return conn.status();
  }
  (*conn)->set_route(route);
  return conn;
}

bool Channel::OtherLive(size_t route) const {
  if (!options_.spread) return endpoints_.size() > 1;
  const auto now = std::chrono::steady_clock::now();
  for (size_t i = 0; i < endpoints_.size(); ++i) {
    if (i != route && paused_until_[i] <= now) return true;
  }
  return false;
}

std::optional<size_t> Channel::HedgeRoute(size_t route) {
  if (!options_.spread) return (route + 1) % endpoints_.size();
  return NextLive(route);
}

Status Channel::HedgedCall(const CallArgs& args) {
  const auto start = std::chrono::steady_clock::now();
  const auto deadline = start + options_.io_timeout.value;
  const auto hedge_at = start + options_.hedge_after.value;
  // The connections the request went to (two at most), and whether the
  // second try was made (sent, or found nowhere to go).
  std::vector<std::unique_ptr<Connection>> flying;
  flying.reserve(2);
  bool hedged = false;
  Status last;
  auto send_to = [&](Result<std::unique_ptr<Connection>> conn) {
    if (!conn.ok()) {
      last = conn.status();  // a transport failure paused its endpoint already
      return;
    }
    Status sent = (*conn)->Send(args);
    if (!sent.ok()) {
      if (IsTransportError(sent.code())) Failover((*conn)->route(), sent);
      last = sent;
      return;
    }
    flying.push_back(std::move(conn).value());
  };
  auto hedge = [&](size_t after_route) {
    hedged = true;
    std::optional<size_t> other;
    {
      std::lock_guard lock(mu_);
      other = HedgeRoute(after_route);
    }
    if (other) send_to(AcquireRoute(*other, true));
  };
  size_t first_route = 0;
  {
    std::lock_guard lock(mu_);
    first_route = NextRoute();
  }
  send_to(AcquireRoute(first_route, true));
  // Not sent for a reason other than transport (e.g. refused credentials): final.
  if (flying.empty() && !IsTransportError(last.code())) return last;
  for (;;) {
    const auto now = std::chrono::steady_clock::now();
    if (flying.empty()) {
      if (hedged) return last;
      hedge(first_route);  // the first failed in transport (its server died, or hangs): another now
      continue;
    }
    if (now >= deadline) break;
    if (!hedged && now >= hedge_at) {
      hedge(flying.front()->route());
      continue;
    }
    std::array<pollfd, 2> fds{};  // (flying holds two at most)
    for (size_t i = 0; i < flying.size(); ++i) fds[i] = pollfd{flying[i]->fd(), POLLIN, 0};
    bool cancelled = false;
    const int n = PollCancellable(std::span(fds.data(), flying.size()),
                                  hedged ? deadline : std::min(deadline, hedge_at), &cancelled);
    if (n < 0) return Status::FromErrno(errno, "poll for a reply");
    if (cancelled) {
      // Given up as a timeout, but no server is blamed: nothing says it
      // was slow (the caller went away).
      for (auto& conn : flying) conn->Abandon();
      return CancelledWait("a reply");
    }
    if (n <= 0) continue;
    for (size_t i = 0; i < flying.size(); ++i) {
      if (fds[i].revents == 0) continue;
      std::unique_ptr<Connection> conn = std::move(flying[i]);
      Status st = conn->Receive(args);
      if (IsTransportError(st.code())) {
        Failover(conn->route(), st);
        last = st;
        continue;
      }
      // An answer: the other try (still waiting) is given up, and its
      // server left out a while, as one that timed out.
      for (auto& other : flying) {
        if (!other) continue;
        other->Abandon();
        Failover(other->route(),
                 Status(StatusCode::kRpcTimeout,
                        fmt::format("no reply within {} while {} answered", FormatDuration(options_.hedge_after),
                                    endpoints_[conn->route()].ToString())));
      }
      Answered(conn->route());
      Release(std::move(conn));
      return st;
    }
    std::erase(flying, nullptr);
  }
  const Status timed_out(StatusCode::kRpcTimeout, "no reply within the i/o timeout");
  for (auto& conn : flying) {
    conn->Abandon();
    Failover(conn->route(), timed_out);
  }
  return timed_out;
}

void Channel::Release(std::unique_ptr<Connection> conn) {
  if (!conn || conn->broken()) return;
  std::lock_guard lock(mu_);
  const size_t route = conn->route();
  // Not to a server the channel left (one at a time) or paused (spreading).
  if (options_.spread ? paused_until_[route] > std::chrono::steady_clock::now()
                      : route != current_) {
    return;
  }
  idle_[route].push_back(std::move(conn));
}

void Channel::Reset() {
  std::lock_guard lock(mu_);
  for (auto& idle : idle_) idle.clear();
}

void Channel::Failover(size_t route, const Status& why) {
  if (endpoints_.size() < 2) return;
  std::lock_guard lock(mu_);
  idle_[route].clear();
  if (options_.spread) {
    const auto now = std::chrono::steady_clock::now();
    if (paused_until_[route] > now) return;  // another thread said so already
    const uint32_t doublings = std::min<uint32_t>(strikes_[route]++, 5);
    const auto pause = std::min(kSpreadPause * (1 << doublings), kMaxSpreadPause);
    paused_until_[route] = now + pause;
    LOG_WARN("{}: {}; sending to the other servers for {} ms", endpoints_[route].ToString(),
             why.ToString(), pause.count());
    return;
  }
  if (route != current_) return;
  current_ = (current_ + 1) % endpoints_.size();
  LOG_WARN("{}: {}; trying {}", endpoints_[route].ToString(), why.ToString(),
           endpoints_[current_].ToString());
}

bool IsTransportError(StatusCode code) {
  return code == StatusCode::kRpcConnect || code == StatusCode::kRpcClosed ||
         code == StatusCode::kRpcTimeout;
}

Status MalformedReply(Method m, const Endpoint& from) {
  return Status(StatusCode::kRpcMalformed,
                fmt::format("cannot parse the {} reply from {}", MethodName(m), from.ToString()));
}

std::string LocalHostId() {
  std::ifstream boot("/proc/sys/kernel/random/boot_id");
  std::string boot_id;
  std::getline(boot, boot_id);
  struct stat st {};
  uint64_t netns = ::stat("/proc/self/ns/net", &st) == 0 ? st.st_ino : 0;
  return fmt::format("{}/{}", boot_id, netns);
}

}  // namespace t0fs::rpc
