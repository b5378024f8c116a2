// MetricsServer: a minimal HTTP/1.1 server for Prometheus scrapes.
//
//   GET /metrics   the registry in the text format 0.0.4
//   GET /          a small page linking to /metrics
//   other paths    404; methods other than GET and HEAD: 405
//
// One io thread runs one C++20 coroutine per connection. Connections are
// kept alive between scrapes (Prometheus reuses them). A request head larger
// than max_request_bytes gets 431 and the connection is closed; a request
// body is never read (the connection is closed after answering). Each
// request, from its first byte to the end of the response, and each idle
// wait between requests, is bounded by `timeout`: a slow or silent client is
// disconnected. Beyond max_connections, new connections are closed at once.
// Nothing is logged per request.
//
// Ownership: the registry must outlive the server. Rendering runs on the
// server thread, so callback families run there too.
//
// Thread safety: Start/Stop/accessors from one thread (the daemon's).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "common/config.h"
#include "common/status.h"
#include "metrics/registry.h"

namespace t0fs::metrics {

struct MetricsServerOptions {
  std::string name = "t0fs";  // shown on the index page: "t0fs data"
  // Largest request head (request line + headers). Prometheus sends ~300 bytes;
  // the bound caps the memory one connection can pin.
  uint32_t max_request_bytes = 8 << 10;
  // Bound on reading a request, writing its response, and idling between requests.
  // Longer tolerates slower scrapers; shorter frees stuck connections sooner.
  Duration timeout{std::chrono::seconds(10)};
  // Concurrent connections; each costs an fd and a little memory.
  uint32_t max_connections = 64;
};

class MetricsServer {
 public:
  explicit MetricsServer(const Registry& registry, MetricsServerOptions options = {});
  ~MetricsServer();
  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;

  // Binds `listen` ("host:port", "[v6addr]:port", ":port" for all interfaces;
  // port 0 = any free port) and starts the server thread. An empty `listen`
  // disables the server: Ok, and running() stays false. On error nothing is
  // left running.
  Status Start(std::string_view listen);
  // Closes the listener and every connection and joins the thread. Idempotent.
  void Stop();

  bool running() const { return running_; }
  uint16_t port() const { return port_; }  // bound port (0 when not running)
  std::string address() const;             // "127.0.0.1:9701", "[::1]:9701"
  std::string url() const;                 // "http://127.0.0.1:9701/metrics"

 private:
  struct Impl;
  const Registry& registry_;
  const MetricsServerOptions options_;
  std::unique_ptr<Impl> impl_;
  bool running_ = false;
  uint16_t port_ = 0;
  std::string host_;
};

}  // namespace t0fs::metrics
