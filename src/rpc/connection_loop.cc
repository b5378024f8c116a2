#include "rpc/connection_loop.h"

#include <sys/sendfile.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <cstring>

#include "common/logging.h"
#include "common/secret.h"
#include "rpc/parking_state.h"
#include "rpc/proto/common.pb.h"
#include "rpc/server_metrics.h"

namespace t0fs::rpc {
namespace {

using asio::awaitable;
using asio::use_awaitable;
using Unix = asio::local::stream_protocol;

constexpr std::string_view kVersion = "t0fs 0.1";

}  // namespace

template <typename Socket>
awaitable<void> ConnectionLoop::Run(Socket socket) {
  asio::error_code ec;
  if (!co_await Handshake(socket)) {
    socket.close(ec);
    co_return;
  }
  if (metrics_ != nullptr) metrics_->connections().Inc();
  std::byte head[kFrameHeaderSize];
  std::string header;
  AlignedBuffer payload(64 << 10);
  AlignedBuffer reply_buffer(64 << 10);
  ReadAhead ahead;
  for (;;) {
    std::vector<UniqueFd> fds;
    if (!co_await ReadHead(socket, head, &fds, ahead)) {
      break;  // peer went away: the normal end of a connection
    }
    FrameHeader frame_head;
    FrameHeader* frame = &frame_head;
    Status valid = DecodeFrameHeader(
        std::span<const std::byte, kFrameHeaderSize>(head, sizeof head), options_.limits, frame);
    if (valid.ok() && frame->is_response()) {
      valid = Status(StatusCode::kRpcMalformed, "response frame sent to a server");
    }
    if (!valid.ok()) {
      // The stream cannot be resynchronised after a bad header: answer and close.
      LOG_WARN("{}: dropping connection from {}: {}", options_.name, peer_, valid.ToString());
      FrameHeader err;
      err.method = frame->method;
      err.request_id = frame->request_id;
      co_await SendError(socket, err, valid);
      break;
    }
    header.resize(frame->header_len);
    payload.Reserve(frame->payload_len);
    // What came with the head first, the rest (a large payload) straight in.
    const size_t header_ahead =
        ahead.Take(reinterpret_cast<std::byte*>(header.data()), header.size());
    const size_t payload_ahead = ahead.Take(payload.data(), frame->payload_len);
    std::array<asio::mutable_buffer, 2> body = {
        asio::buffer(header.data() + header_ahead, header.size() - header_ahead),
        asio::buffer(payload.data() + payload_ahead, frame->payload_len - payload_ahead)};
    if (asio::buffer_size(body) > 0) {
      co_await asio::async_read(socket, body, asio::redirect_error(use_awaitable, ec));
      if (ec) break;
    }
    if (metrics_ != nullptr) {
      metrics_->bytes_in().Inc(kFrameHeaderSize + frame->header_len + frame->payload_len);
    }

    Call call;
    call.method = frame->method;
    call.header = std::as_bytes(std::span(header.data(), header.size()));
    call.payload = std::span(payload.data(), frame->payload_len);
    call.peer = peer_;
    call.peer_role = role_;
    call.fds = std::move(fds);
    call.reply_buffer = &reply_buffer;
    Status st = Dispatch(call);
    while (st.ok() && call.parked_in) {
      co_await WaitParked(call);
      call.reply_header.clear();
      st = Dispatch(call);
    }

    FrameHeader reply;
    reply.method = frame->method;
    reply.flags = kFlagResponse;
    reply.request_id = frame->request_id;
    if (!st.ok()) {
      co_await SendError(socket, reply, st);
      if (st.code() == StatusCode::kRpcMalformed) break;
      continue;
    }
    reply.header_len = static_cast<uint32_t>(call.reply_header.size());
    reply.payload_len = static_cast<uint32_t>(call.reply_file.valid() ? call.reply_file_length
                                                                      : call.reply_payload.size());
    if (metrics_ != nullptr) {
      metrics_->bytes_out().Inc(kFrameHeaderSize + reply.header_len + reply.payload_len);
    }
    std::byte out_head[kFrameHeaderSize];
    EncodeFrameHeader(reply, out_head);
    if (call.reply_file.valid() && call.reply_fds.empty()) {
      if (!co_await SendFromFile(socket, out_head, call)) break;
      continue;
    }
    std::array<iovec, 3> out = {
        iovec{out_head, sizeof out_head}, iovec{call.reply_header.data(), call.reply_header.size()},
        iovec{const_cast<std::byte*>(call.reply_payload.data()), call.reply_payload.size()}};
    const bool sent = call.reply_fds.empty() ? co_await SendAll(socket, out)
                                             : co_await SendWithFds(socket, out, call);
    if (!sent) break;
  }
  if (metrics_ != nullptr) metrics_->connections().Dec();
  socket.close(ec);
}

asio::awaitable<void> ConnectionLoop::WaitParked(Call& call) {
  std::shared_ptr<Parking::State> parking = std::move(call.parked_in);
  call.parked_in.reset();
  auto executor = co_await asio::this_coro::executor;
  auto timer = std::make_shared<asio::steady_timer>(executor, call.park_until);
  uint64_t id = 0;
  if (!parking->Add(executor, timer, call.park_tag, call.park_seen, &id)) {
    co_return;  // woken meanwhile
  }
  struct Unpark {
    Parking::State& parking;
    uint64_t id;
    ~Unpark() { parking.Remove(id); }  // also when the server stops and drops the coroutine
  } unpark{*parking, id};
  asio::error_code ec;  // cancelled: woken; otherwise the time is up
  co_await timer->async_wait(asio::redirect_error(use_awaitable, ec));
}

Status ConnectionLoop::Dispatch(Call& call) {
  if (metrics_ == nullptr) return DispatchUnrecorded(call);
  metrics_->in_flight().Inc();
  auto start = std::chrono::steady_clock::now();
  Status st = DispatchUnrecorded(call);
  // A long poll counts once, when answered, with the time of that run (not
  // of its waits).
  if (!call.parked_in) {
    metrics_->Record(call.method, st.code(), std::chrono::steady_clock::now() - start);
  }
  metrics_->in_flight().Dec();
  return st;
}

Status ConnectionLoop::DispatchUnrecorded(Call& call) {
  auto it = handlers_.find(static_cast<uint16_t>(call.method));
  if (it == handlers_.end()) {
    return Status(StatusCode::kRpcUnknownMethod,
                  fmt::format("{} does not serve method {}", options_.name,
                              static_cast<unsigned>(call.method)));
  }
  // Exceptions never cross the RPC boundary: a handler that throws becomes
  // an error reply, and the connection stays usable.
  try {
    return it->second(call);
  } catch (const std::exception& e) {
    LOG_ERROR("{}: {} from {} threw: {}", options_.name, MethodName(call.method), peer_, e.what());
    return Status(StatusCode::kInternal, e.what());
  }
}

template <typename Socket>
awaitable<bool> ConnectionLoop::Handshake(Socket& socket) {
  // The connection runs on one thread or on a strand, so this handler never runs
  // concurrently with the coroutine; `finished` keeps a timer that expired
  // just as the handshake ended from touching a socket that is gone.
  asio::steady_timer deadline(socket.get_executor(), options_.handshake_timeout.value);
  auto finished = std::make_shared<bool>(false);
  deadline.async_wait([&socket, finished](const asio::error_code& ec) {
    asio::error_code ignored;
    if (!ec && !*finished) socket.close(ignored);
  });
  struct MarkFinished {
    std::shared_ptr<bool> flag;
    ~MarkFinished() { *flag = true; }
  } mark_finished{finished};
  std::string nonce = RandomBytes(32);
  pb::Hello challenge;
  challenge.set_nonce(nonce);
  challenge.set_role(options_.name);
  challenge.set_version(std::string(kVersion));
  FrameHeader out;
  out.method = Method::kHello;
  out.flags = kFlagResponse;
  if (!co_await SendMessage(socket, out, challenge.SerializeAsString())) co_return false;

  asio::error_code ec;
  std::byte head[kFrameHeaderSize];
  co_await asio::async_read(socket, asio::buffer(head, sizeof head),
                            asio::redirect_error(use_awaitable, ec));
  if (ec) co_return false;
  FrameLimits hello_limits{4096, 0};
  FrameHeader frame_head;
  FrameHeader* frame = &frame_head;
  Status st = DecodeFrameHeader(std::span<const std::byte, kFrameHeaderSize>(head, sizeof head),
                                hello_limits, frame);
  if (st.ok() && (frame->method != Method::kHello || frame->is_response())) {
    st = Status(StatusCode::kRpcUnauthenticated, "expected Hello first");
  }
  if (!st.ok()) {
    LOG_WARN("{}: refused {}: {}", options_.name, peer_, st.ToString());
    co_await SendError(socket, FrameHeader{}, st);
    co_return false;
  }
  std::string body(frame->header_len, '\0');
  co_await asio::async_read(socket, asio::buffer(body), asio::redirect_error(use_awaitable, ec));
  if (ec) co_return false;
  pb::Hello hello;
  FrameHeader reply;
  reply.method = Method::kHello;
  reply.flags = kFlagResponse;
  reply.request_id = frame->request_id;
  Digest expected = HmacSha256(options_.secret, "client" + nonce);
  Digest got{};
  if (!hello.ParseFromString(body) || hello.proof().size() != got.size()) {
    co_await SendError(socket, reply, Status(StatusCode::kRpcUnauthenticated, "malformed Hello"));
    co_return false;
  }
  std::memcpy(got.data(), hello.proof().data(), got.size());
  if (!DigestEqual(expected, got)) {
    LOG_WARN("{}: refused {} (role {}): wrong cluster secret", options_.name, peer_, hello.role());
    co_await SendError(
        socket, reply,
        Status(StatusCode::kRpcUnauthenticated,
               fmt::format("{} refused the connection: wrong cluster secret", options_.name)));
    co_return false;
  }
  role_ = hello.role();
  Digest server_proof = HmacSha256(options_.secret, "server" + hello.nonce());
  pb::Hello answer;
  answer.set_proof(
      std::string(reinterpret_cast<const char*>(server_proof.data()), server_proof.size()));
  answer.set_role(options_.name);
  bool sent = co_await SendMessage(socket, reply, answer.SerializeAsString());
  deadline.cancel();
  co_return sent&& socket.is_open();
}

template <typename Socket>
awaitable<bool> ConnectionLoop::SendMessage(Socket& socket, FrameHeader h,
                                            const std::string& body) {
  h.header_len = static_cast<uint32_t>(body.size());
  h.payload_len = 0;
  std::byte head[kFrameHeaderSize];
  EncodeFrameHeader(h, head);
  std::array<asio::const_buffer, 2> out = {asio::buffer(head, sizeof head), asio::buffer(body)};
  asio::error_code ec;
  co_await asio::async_write(socket, out, asio::redirect_error(use_awaitable, ec));
  co_return !ec;
}

template <typename Socket>
awaitable<bool> ConnectionLoop::SendError(Socket& socket, FrameHeader h, const Status& st) {
  h.flags = kFlagResponse;
  h.status = static_cast<uint32_t>(st.code());
  co_return co_await SendMessage(socket, h, st.message());
}

template <typename Socket>
awaitable<bool> ConnectionLoop::ReadHead(Socket& socket, std::byte* head,
                                         std::vector<UniqueFd>* fds, ReadAhead& ahead) {
  asio::error_code ec;
  if constexpr (!std::is_same_v<Socket, Unix::socket>) {
    // Through asio: its read tries the socket at once and, when nothing is
    // there yet (a client's next request comes after it has read this
    // reply), waits in the event loop without re-arming the descriptor
    // (an async_wait re-arms it: one epoll_ctl more per request).
    while (ahead.size() < kFrameHeaderSize) {
      std::span<std::byte> room = ahead.Room();
      const size_t n = co_await socket.async_read_some(asio::buffer(room.data(), room.size()),
                                                       asio::redirect_error(use_awaitable, ec));
      if (ec) co_return false;
      ahead.Added(n);
    }
    ahead.Take(head, kFrameHeaderSize);
    co_return true;
  } else {
    (void)ahead;  // descriptors come with a frame's first byte: read by frame
    FdControl control;
    size_t done = 0;
    while (done < kFrameHeaderSize) {
      iovec iov{head + done, kFrameHeaderSize - done};
      msghdr msg{};
      msg.msg_iov = &iov;
      msg.msg_iovlen = 1;
      msg.msg_control = control.bytes;
      msg.msg_controllen = sizeof control.bytes;
      ssize_t n = ::recvmsg(socket.native_handle(), &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && errno == EAGAIN) {
        co_await socket.async_wait(Unix::socket::wait_read,
                                   asio::redirect_error(use_awaitable, ec));
        if (ec) co_return false;
        continue;
      }
      if (n <= 0) co_return false;
      TakeFds(msg, fds);
      // More descriptors than a request may carry: the kernel dropped the rest.
      if ((msg.msg_flags & MSG_CTRUNC) != 0) co_return false;
      done += static_cast<size_t>(n);
    }
    co_return true;
  }
}

template <typename Socket>
awaitable<bool> ConnectionLoop::SendAll(Socket& socket, std::span<iovec> parts,
                                        std::span<const int> fds) {
  FdControl control;
  bool fds_sent = fds.empty();
  for (size_t first = 0; first < parts.size();) {
    msghdr msg{};
    msg.msg_iov = parts.data() + first;
    msg.msg_iovlen = parts.size() - first;
    if (!fds_sent) AttachFds(msg, fds, control);  // with the first byte only
    ssize_t n = ::sendmsg(socket.native_handle(), &msg, MSG_DONTWAIT | MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) {
      if (!co_await Writable(socket)) co_return false;
      continue;
    }
    if (n < 0) co_return false;
    if (n > 0) fds_sent = true;
    first = SkipSent(parts, first, static_cast<size_t>(n));
  }
  co_return true;
}

template <typename Socket>
awaitable<bool> ConnectionLoop::Writable(Socket& socket) {
  asio::error_code ec;
  co_await socket.async_wait(Socket::wait_write, asio::redirect_error(use_awaitable, ec));
  co_return !ec;
}

template <typename Socket>
awaitable<bool> ConnectionLoop::SendFromFile(Socket& socket, const std::byte* head, Call& call) {
  asio::error_code ec;
  socket.native_non_blocking(true, ec);
  if (ec) co_return false;
  const int fd = socket.native_handle();
  const std::string& message = call.reply_header;
  const size_t head_total = kFrameHeaderSize + message.size();
  // MSG_MORE: the head leaves with the payload's first bytes, not alone.
  const int more = call.reply_file_length > 0 ? MSG_MORE : 0;
  for (size_t sent = 0; sent < head_total;) {
    iovec iov[2];
    size_t count = 0;
    if (sent < kFrameHeaderSize) {
      iov[count++] = {const_cast<std::byte*>(head) + sent, kFrameHeaderSize - sent};
    }
    const size_t in_message = sent > kFrameHeaderSize ? sent - kFrameHeaderSize : 0;
    if (in_message < message.size()) {
      iov[count++] = {const_cast<char*>(message.data()) + in_message, message.size() - in_message};
    }
    msghdr msg{};
    msg.msg_iov = iov;
    msg.msg_iovlen = count;
    ssize_t n = ::sendmsg(fd, &msg, MSG_NOSIGNAL | more);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) {
      if (!co_await Writable(socket)) co_return false;
      continue;
    }
    if (n <= 0) co_return false;
    sent += static_cast<size_t>(n);
  }
  off_t at = static_cast<off_t>(call.reply_file_offset);
  size_t left = call.reply_file_length;
  while (left > 0) {
    ssize_t n = ::sendfile(fd, call.reply_file.get(), &at, left);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) {
      if (!co_await Writable(socket)) co_return false;
      continue;
    }
    if (n < 0) {
      LOG_WARN("{}: sendfile to {}: {}", options_.name, peer_, std::strerror(errno));
      co_return false;
    }
    if (n == 0) break;  // the file ends early
    left -= static_cast<size_t>(n);
  }
  static const std::array<std::byte, 64 << 10> kZeros{};
  while (left > 0) {
    ssize_t n = ::send(fd, kZeros.data(), std::min(left, kZeros.size()), MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) {
      if (!co_await Writable(socket)) co_return false;
      continue;
    }
    if (n <= 0) co_return false;
    left -= static_cast<size_t>(n);
  }
  co_return true;
}

template <typename Socket>
awaitable<bool> ConnectionLoop::SendWithFds(Socket& socket, std::span<iovec> parts, Call& call) {
  if constexpr (!std::is_same_v<Socket, Unix::socket>) {
    LOG_ERROR("{}: handler tried to pass descriptors over TCP", options_.name);
    co_return false;
  } else {
    std::vector<int> fds;
    for (auto& fd : call.reply_fds) fds.push_back(fd.get());
    if (fds.size() > kMaxFrameFds) {
      LOG_ERROR("{}: handler passed {} descriptors (at most {})", options_.name, fds.size(),
                kMaxFrameFds);
      co_return false;
    }
    co_return co_await SendAll(socket, parts, fds);
  }
}

template awaitable<void> ConnectionLoop::Run(asio::ip::tcp::socket socket);
template awaitable<void> ConnectionLoop::Run(Unix::socket socket);

}  // namespace t0fs::rpc
