#include "metrics/metrics_server.h"

#include <array>
#include <cctype>
#include <charconv>
#include <optional>
#include <thread>

#include <asio.hpp>
#include <fmt/format.h>

#include "common/logging.h"
#include "metrics/text_format.h"

namespace t0fs::metrics {
namespace {

using asio::awaitable;
using asio::use_awaitable;
using asio::ip::tcp;

struct ListenAddress {
  std::string host;  // without brackets
  uint16_t port = 0;
};

Result<ListenAddress> ParseListen(std::string_view text) {
  auto bad = [&](std::string_view why) {
    return Status(StatusCode::kInvalidArgument,
                  fmt::format("metrics listen address '{}': {} (want host:port)", text, why));
  };
  size_t colon = text.rfind(':');
  if (colon == std::string_view::npos) return bad("no port");
  std::string_view host = text.substr(0, colon);
  std::string_view port_text = text.substr(colon + 1);
  if (host.starts_with('[')) {
    if (!host.ends_with(']')) return bad("unbalanced '['");
    host = host.substr(1, host.size() - 2);
  } else if (host.find(':') != std::string_view::npos) {
    return bad("an IPv6 address needs brackets: [::1]:9700");
  }
  unsigned port = 0;
  auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (port_text.empty() || ec != std::errc() || end != port_text.data() + port_text.size() ||
      port > 65535) {
    return bad("port must be a number from 0 to 65535");
  }
  ListenAddress addr;
  addr.host = host.empty() ? "0.0.0.0" : std::string(host);
  addr.port = static_cast<uint16_t>(port);
  return addr;
}

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t char_idx = 0; char_idx < a.size(); ++char_idx) {
    if (std::tolower(static_cast<unsigned char>(a[char_idx])) !=
        std::tolower(static_cast<unsigned char>(b[char_idx]))) {
      return false;
    }
  }
  return true;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

struct Request {
  std::string_view method;
  std::string_view path;  // without the query string
  bool keep_alive = true;
};

// Parses a request head ending in CRLF CRLF; nullopt if malformed. A request
// with a body (which this server never reads) is answered and not kept alive.
std::optional<Request> ParseRequest(std::string_view head) {
  size_t line_end = head.find("\r\n");
  std::string_view line = head.substr(0, line_end);
  size_t sp1 = line.find(' ');
  size_t sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
  if (sp1 == std::string_view::npos || sp2 == std::string_view::npos ||
      line.find(' ', sp2 + 1) != std::string_view::npos) {
    return std::nullopt;
  }
  Request req;
  req.method = line.substr(0, sp1);
  std::string_view target = line.substr(sp1 + 1, sp2 - sp1 - 1);
  std::string_view version = line.substr(sp2 + 1);
  if (req.method.empty() || target.empty() || !version.starts_with("HTTP/1.")) return std::nullopt;
  req.path = target.substr(0, target.find('?'));
  req.keep_alive = version == "HTTP/1.1";
  size_t pos = line_end + 2;
  while (pos < head.size()) {
    size_t end = head.find("\r\n", pos);
    if (end == std::string_view::npos || end == pos) break;  // the empty line ends the head
    std::string_view header = head.substr(pos, end - pos);
    pos = end + 2;
    size_t colon = header.find(':');
    if (colon == std::string_view::npos || colon == 0) return std::nullopt;
    std::string_view name = header.substr(0, colon);
    std::string_view value = Trim(header.substr(colon + 1));
    if (EqualsIgnoreCase(name, "Connection")) {
      if (EqualsIgnoreCase(value, "close")) req.keep_alive = false;
      if (EqualsIgnoreCase(value, "keep-alive")) req.keep_alive = true;
    } else if (EqualsIgnoreCase(name, "Transfer-Encoding") ||
               (EqualsIgnoreCase(name, "Content-Length") && value != "0")) {
      req.keep_alive = false;
    }
  }
  return req;
}

struct Response {
  int status = 200;
  std::string_view reason = "OK";
  std::string_view content_type = "text/plain; charset=utf-8";
  std::string_view extra_headers;  // each ending in CRLF
  std::string body;
  bool keep_alive = true;
  bool head_only = false;  // HEAD: headers with the body's length, no body
};

std::string ResponseHead(const Response& rsp) {
  return fmt::format(
      "HTTP/1.1 {} {}\r\nContent-Type: {}\r\nContent-Length: {}\r\n{}Connection: {}\r\n\r\n",
      rsp.status, rsp.reason, rsp.content_type, rsp.body.size(), rsp.extra_headers,
      rsp.keep_alive ? "keep-alive" : "close");
}

// `keep_alive`: whether the connection may serve another request after this
// one (not after a request the server could not parse).
Response ErrorResponse(int status, std::string_view reason, bool keep_alive) {
  Response rsp;
  rsp.status = status;
  rsp.reason = reason;
  rsp.body = fmt::format("{}\n", reason);
  rsp.keep_alive = keep_alive;
  return rsp;
}

// One connection's socket and its deadline. The deadline closes the socket,
// which fails whatever read or write is pending.
struct Connection {
  explicit Connection(tcp::socket s) : socket(std::move(s)), timer(socket.get_executor()) {}

  static void Arm(const std::shared_ptr<Connection>& conn, Duration timeout) {
    uint64_t generation = ++conn->generation;
    conn->timer.expires_after(timeout.value);
    conn->timer.async_wait([conn, generation](const asio::error_code& ec) {
      // A wait that expired just as it was re-armed must not close the next request.
      if (ec || generation != conn->generation) return;
      asio::error_code ignored;
      conn->socket.close(ignored);
    });
  }

  tcp::socket socket;
  asio::steady_timer timer;
  uint64_t generation = 0;
};

}  // namespace

struct MetricsServer::Impl {
  const Registry& registry;
  const MetricsServerOptions& options;
  asio::io_context io;
  std::unique_ptr<tcp::acceptor> acceptor;
  std::thread thread;
  uint32_t connections = 0;  // open connections; touched only on the io thread

  Impl(const Registry& r, const MetricsServerOptions& o) : registry(r), options(o) {}

  Response Handle(const Request& req) {
    Response rsp;
    bool head = req.method == "HEAD";
    if (req.method != "GET" && !head) {
      rsp = ErrorResponse(405, "Method Not Allowed", true);
      rsp.extra_headers = "Allow: GET, HEAD\r\n";
    } else if (req.path == "/metrics") {
      rsp.content_type = kTextContentType;
      rsp.body = registry.Render();
    } else if (req.path == "/") {
      rsp.content_type = "text/html; charset=utf-8";
      rsp.body = fmt::format(
          "<!DOCTYPE html>\n<html><head><title>{0}</title></head>\n"
          "<body><h1>{0}</h1><p><a href=\"/metrics\">Metrics</a></p></body></html>\n",
          options.name);
    } else {
      rsp = ErrorResponse(404, "Not Found", true);
    }
    rsp.keep_alive = rsp.keep_alive && req.keep_alive;
    rsp.head_only = head;
    return rsp;
  }

  awaitable<bool> Send(Connection& conn, const Response& rsp) {
    std::string head = ResponseHead(rsp);
    std::array<asio::const_buffer, 2> out = {
        asio::buffer(head), asio::buffer(rsp.body.data(), rsp.head_only ? 0 : rsp.body.size())};
    asio::error_code ec;
    co_await asio::async_write(conn.socket, out, asio::redirect_error(use_awaitable, ec));
    co_return !ec;
  }

  // After an error response on a connection whose input was not consumed:
  // send FIN, then drain what the client still sends, so that closing does
  // not reset the connection before the client has read the response.
  awaitable<void> Linger(const std::shared_ptr<Connection>& conn) {
    asio::error_code ec;
    conn->socket.shutdown(tcp::socket::shutdown_send, ec);
    char scratch[4096];
    size_t drained = 0;
    while (!ec && drained < (256u << 10)) {
      drained += co_await conn->socket.async_read_some(asio::buffer(scratch),
                                                       asio::redirect_error(use_awaitable, ec));
    }
  }

  awaitable<void> Serve(tcp::socket socket) {
    auto conn = std::make_shared<Connection>(std::move(socket));
    std::string input;
    for (;;) {
      Connection::Arm(conn, options.timeout);
      asio::error_code ec;
      size_t head_len = co_await asio::async_read_until(
          conn->socket, asio::dynamic_buffer(input, options.max_request_bytes), "\r\n\r\n",
          asio::redirect_error(use_awaitable, ec));
      if (ec == asio::error::not_found) {  // the head outgrew max_request_bytes
        if (co_await Send(*conn, ErrorResponse(431, "Request Header Fields Too Large", false))) {
          co_await Linger(conn);
        }
        break;
      }
      if (ec) break;  // closed by the peer, or the deadline passed
      std::optional<Request> req = ParseRequest(std::string_view(input).substr(0, head_len));
      Response rsp = req ? Handle(*req) : ErrorResponse(400, "Bad Request", false);
      if (!co_await Send(*conn, rsp)) break;
      if (!rsp.keep_alive) {
        co_await Linger(conn);
        break;
      }
      input.erase(0, head_len);  // keep a pipelined next request
    }
    ++conn->generation;  // disarm
    conn->timer.cancel();
    asio::error_code ignored;
    conn->socket.close(ignored);
    --connections;
  }

  awaitable<void> Accept() {
    for (;;) {
      asio::error_code ec;
      tcp::socket socket = co_await acceptor->async_accept(asio::redirect_error(use_awaitable, ec));
      if (ec) {
        if (ec == asio::error::operation_aborted || !acceptor->is_open()) co_return;
        LOG_WARN("{} metrics: accept failed: {}", options.name, ec.message());
        continue;
      }
      if (connections >= options.max_connections) {
        socket.close(ec);
        continue;
      }
      ++connections;
      asio::co_spawn(io, Serve(std::move(socket)), asio::detached);
    }
  }
};

MetricsServer::MetricsServer(const Registry& registry, MetricsServerOptions options)
    : registry_(registry), options_(std::move(options)) {}

MetricsServer::~MetricsServer() {
  Stop();
}

Status MetricsServer::Start(std::string_view listen) {
  if (running_) return Status(StatusCode::kBusy, "metrics server already started");
  if (listen.empty()) return Status::Ok();
  ASSIGN_OR_RETURN(ListenAddress addr, ParseListen(listen));
  auto impl = std::make_unique<Impl>(registry_, options_);
  asio::error_code ec;
  tcp::resolver resolver(impl->io);
  auto results = resolver.resolve(addr.host, std::to_string(addr.port),
                                  tcp::resolver::passive | tcp::resolver::numeric_service, ec);
  if (ec || results.empty()) {
    return Status(
        StatusCode::kInvalidArgument,
        fmt::format("metrics listen address '{}': {}", listen, ec ? ec.message() : "no address"));
  }
  tcp::endpoint local = *results.begin();
  impl->acceptor = std::make_unique<tcp::acceptor>(impl->io);
  tcp::acceptor& acceptor = *impl->acceptor;
  acceptor.open(local.protocol(), ec);
  if (!ec) acceptor.set_option(tcp::acceptor::reuse_address(true), ec);
  if (!ec) acceptor.bind(local, ec);
  if (!ec) acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    return Status(StatusCode::kRpcConnect,
                  fmt::format("metrics: listen on {}: {}", listen, ec.message()));
  }
  tcp::endpoint bound = acceptor.local_endpoint(ec);
  if (ec) return Status(StatusCode::kInternal, fmt::format("metrics: {}", ec.message()));
  port_ = bound.port();
  host_ = bound.address().to_string();
  asio::co_spawn(impl->io, impl->Accept(), asio::detached);
  Impl* raw = impl.get();
  impl->thread = std::thread([raw] { raw->io.run(); });
  impl_ = std::move(impl);
  running_ = true;
  return Status::Ok();
}

void MetricsServer::Stop() {
  if (!running_) return;
  running_ = false;
  impl_->io.stop();
  impl_->thread.join();
  // The acceptor goes before the io_context; destroying the io_context then
  // destroys the suspended connection coroutines with their sockets.
  impl_->acceptor.reset();
  impl_.reset();
  port_ = 0;
}

std::string MetricsServer::address() const {
  if (host_.find(':') != std::string::npos) return fmt::format("[{}]:{}", host_, port_);
  return fmt::format("{}:{}", host_, port_);
}

std::string MetricsServer::url() const {
  return fmt::format("http://{}/metrics", address());
}

}  // namespace t0fs::metrics
