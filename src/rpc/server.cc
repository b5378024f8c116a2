#include "rpc/server.h"

#include <unistd.h>

#include <asio.hpp>
#include <atomic>
#include <thread>
#include <unordered_map>

#include "common/logging.h"
#include "rpc/connection_loop.h"
#include "rpc/server_metrics.h"

namespace t0fs::rpc {
namespace {

using asio::awaitable;
using asio::use_awaitable;
using asio::ip::tcp;
using Unix = asio::local::stream_protocol;

// A new connection's name in logs, and its socket options.
std::string PeerName(tcp::socket& socket) {
  asio::error_code ec;
  socket.set_option(tcp::no_delay(true), ec);
  auto remote = socket.remote_endpoint(ec);
  return ec ? "tcp" : fmt::format("{}:{}", remote.address().to_string(), remote.port());
}
std::string PeerName(Unix::socket&) {
  return "unix";
}

}  // namespace

// An io_context and the threads that run it. By default there is one per
// server thread, run by that thread alone: a connection lives on one of them
// from accept to close, so its requests never cross threads (one context run
// by every thread handed each ready socket from the thread in epoll_wait to
// another through a futex: 18.8 futex calls per create in meta, 2.3 now).
// With ServerOptions::shared_threads there is one, run by all the threads,
// for handlers that wait (a connection bound to a waiting thread would wait
// while another thread idled).
struct Context {
  // First, so destroyed last: the connections that io ends at its
  // destruction count themselves down.
  std::atomic<size_t> connections{0};
  explicit Context(uint32_t threads) : threads(threads), io(static_cast<int>(threads)) {}
  const uint32_t threads;  // that run io (1, or all of them with shared_threads)
  asio::io_context io;     // concurrency hint: the threads that run it
  asio::executor_work_guard<asio::io_context::executor_type> work = asio::make_work_guard(io);
  // A new connection's executor: a strand when several threads run io (its
  // coroutine and its handshake timer never run at once).
  asio::any_io_executor ForConnection() {
    return threads > 1 ? asio::any_io_executor(asio::make_strand(io))
                       : asio::any_io_executor(io.get_executor());
  }
};

struct Server::Impl {
  ServerOptions options;
  std::unordered_map<uint16_t, Handler> handlers;
  std::unique_ptr<ServerMetrics> metrics;  // when options.metrics is set
  std::vector<std::unique_ptr<Context>> contexts;
  // The acceptors run on a thread of their own: a handler that blocks a
  // connection's thread must not stop new connections from going elsewhere.
  asio::io_context accept_io{1};
  size_t next = 0;  // Pick's, on accept_io's thread
  std::vector<std::unique_ptr<tcp::acceptor>> tcp_acceptors;
  std::vector<std::unique_ptr<Unix::acceptor>> unix_acceptors;
  std::vector<Endpoint> bound;
  std::vector<std::thread> threads;
  bool running = false;

  // The context a new connection goes to: the one with the fewest open
  // connections, the next in turn among equals.
  Context& Pick() {
    Context* best = nullptr;
    for (size_t i = 0; i < contexts.size(); ++i) {
      Context& c = *contexts[(next + i) % contexts.size()];
      if (best == nullptr || c.connections.load() < best->connections.load()) best = &c;
    }
    next = (next + 1) % contexts.size();
    return *best;
  }

  template <typename Socket>
  static void Serve(Context& ctx, std::shared_ptr<ConnectionLoop> loop, Socket socket) {
    ctx.connections++;
    auto executor = socket.get_executor();
    asio::co_spawn(
        executor,
        [loop = std::move(loop), s = std::move(socket), &ctx]() mutable -> awaitable<void> {
          struct Done {
            Context& ctx;
            ~Done() { ctx.connections--; }
          } done{ctx};
          co_await loop->Run(std::move(s));
        },
        asio::detached);
  }

  // Hands an accepted connection's descriptor to `to` (a socket of its
  // connection thread's context). False (logged, connection closed) if
  // that context cannot take it.
  template <typename Socket, typename Protocol>
  bool MoveTo(Socket& from, Socket& to, const Protocol& protocol) {
    asio::error_code ec;
    const int fd = from.release(ec);
    if (!ec) to.assign(protocol, fd, ec);
    if (!ec) return true;
    if (fd >= 0 && !to.is_open()) ::close(fd);
    LOG_WARN("{}: dropping a new connection: {}", options.name, ec.message());
    return false;
  }

  template <typename Acceptor>
  awaitable<void> Accept(Acceptor& acceptor) {
    using Socket = typename Acceptor::protocol_type::socket;
    for (;;) {
      asio::error_code ec;
      Socket accepted = co_await acceptor.async_accept(asio::redirect_error(use_awaitable, ec));
      if (ec) {
        if (ec == asio::error::operation_aborted || !acceptor.is_open()) co_return;
        LOG_WARN("{}: accept failed: {}", options.name, ec.message());
        continue;
      }
      std::string peer = PeerName(accepted);
      const auto protocol = acceptor.local_endpoint(ec).protocol();
      Context& ctx = Pick();  // by the connections open now
      Socket socket(ctx.ForConnection());
      if (!MoveTo(accepted, socket, protocol)) continue;
      Serve(ctx,
            std::make_shared<ConnectionLoop>(options, handlers, std::move(peer), metrics.get()),
            std::move(socket));
    }
  }
};

Server::Server(ServerOptions options, std::vector<std::pair<Method, Handler>> handlers)
    : impl_(std::make_unique<Impl>()) {
  impl_->options = std::move(options);
  for (auto& [method, handler] : handlers) {
    impl_->handlers.emplace(static_cast<uint16_t>(method), std::move(handler));
  }
  if (impl_->options.metrics != nullptr) {
    std::vector<Method> methods;
    for (const auto& [id, handler] : impl_->handlers) methods.push_back(static_cast<Method>(id));
    impl_->metrics = std::make_unique<ServerMetrics>(*impl_->options.metrics, methods);
  }
}

Server::~Server() { Stop(); }

Status Server::Start() {
  Impl& s = *impl_;
  if (s.options.secret.empty()) return Status(StatusCode::kInvalidArgument, "server needs the cluster secret");
  if (s.contexts.empty()) {
    const uint32_t threads = std::max(1u, s.options.threads);
    if (s.options.shared_threads) {
      s.contexts.push_back(std::make_unique<Context>(threads));
    } else {
      for (uint32_t i = 0; i < threads; ++i) s.contexts.push_back(std::make_unique<Context>(1));
    }
  }
  asio::io_context& io = s.accept_io;
  for (const Endpoint& ep : s.options.listen) {
    asio::error_code ec;
    if (ep.is_unix()) {
      ::unlink(ep.path.c_str());  // a socket file left by a killed process
      auto acceptor = std::make_unique<Unix::acceptor>(io);
      acceptor->open(Unix(), ec);
      if (!ec) acceptor->bind(Unix::endpoint(ep.path), ec);
      if (!ec) acceptor->listen(asio::socket_base::max_listen_connections, ec);
      if (ec) return Status(StatusCode::kRpcConnect, fmt::format("listen on {}: {}", ep.ToString(), ec.message()));
      s.bound.push_back(ep);
      s.unix_acceptors.push_back(std::move(acceptor));
    } else {
      tcp::resolver resolver(io);
      auto results = resolver.resolve(ep.host, std::to_string(ep.port), ec);
      if (ec || results.empty()) {
        return Status(StatusCode::kRpcConnect, fmt::format("resolve {}: {}", ep.ToString(), ec.message()));
      }
      tcp::endpoint local = *results.begin();
      auto acceptor = std::make_unique<tcp::acceptor>(io);
      acceptor->open(local.protocol(), ec);
      if (!ec) acceptor->set_option(tcp::acceptor::reuse_address(true), ec);
      if (!ec) acceptor->bind(local, ec);
      if (!ec) acceptor->listen(asio::socket_base::max_listen_connections, ec);
      if (ec) return Status(StatusCode::kRpcConnect, fmt::format("listen on {}: {}", ep.ToString(), ec.message()));
      Endpoint actual = ep;
      actual.port = acceptor->local_endpoint().port();
      s.bound.push_back(actual);
      s.tcp_acceptors.push_back(std::move(acceptor));
    }
  }
  for (auto& acceptor : s.tcp_acceptors) {
    asio::co_spawn(io, s.Accept(*acceptor), asio::detached);
  }
  for (auto& acceptor : s.unix_acceptors) {
    asio::co_spawn(io, s.Accept(*acceptor), asio::detached);
  }
  s.running = true;
  s.threads.emplace_back([&s] { s.accept_io.run(); });  // until Stop closes the acceptors
  for (auto& ctx : s.contexts) {
    for (uint32_t i = 0; i < ctx->threads; ++i)
      s.threads.emplace_back([c = ctx.get()] { c->io.run(); });
  }
  return Status::Ok();
}

void Server::Stop() {
  Impl& s = *impl_;
  if (!s.running) return;
  s.running = false;
  asio::post(s.accept_io, [&s] {
    asio::error_code ec;
    for (auto& a : s.tcp_acceptors) a->close(ec);
    for (auto& a : s.unix_acceptors) a->close(ec);
  });
  s.accept_io.stop();
  for (auto& ctx : s.contexts) ctx->io.stop();
  for (auto& t : s.threads) t.join();
  s.threads.clear();
  for (const Endpoint& ep : s.bound) {
    if (ep.is_unix()) ::unlink(ep.path.c_str());
  }
}

Endpoint Server::bound(size_t index) const { return impl_->bound.at(index); }

}  // namespace t0fs::rpc
