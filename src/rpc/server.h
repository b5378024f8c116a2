// rpc::Server: accepts connections on TCP and unix endpoints, authenticates
// each peer with the cluster secret, and dispatches request frames to
// handlers by method id.
//
// Model: `threads` threads, each running an io_context of its own; a
// connection is given at accept to the one with the fewest connections and
// stays there (or, with `shared_threads`, one io_context run by all the
// threads); one C++20 coroutine per connection; requests on one
// connection are handled in order (clients keep a pool of connections for
// concurrency). Handlers are synchronous and may block (SQLite, disk I/O):
// a blocked handler holds up the other connections of its thread, so size
// `threads` for the blocking you expect.
//
// Thread safety: Start/Stop from one thread. Handlers run concurrently on the
// server threads and must synchronise shared state themselves.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "common/buffer.h"
#include "common/config.h"
#include "common/fd.h"
#include "common/status.h"
#include "rpc/endpoint.h"
#include "rpc/frame.h"
#include "rpc/methods.h"
#include "rpc/parking.h"

namespace t0fs::metrics {
class Registry;
}

namespace t0fs::rpc {

// One request as a handler sees it, and the reply it fills in.
struct Call {
  Method method = Method::kHello;
  std::span<const std::byte> header;  // serialized request message
  std::span<std::byte> payload;       // raw request bytes; page-aligned start
  std::string peer;                   // "10.0.0.1:41234" or "unix"
  std::string peer_role;              // role the peer claimed at Hello
  std::vector<UniqueFd> fds;          // descriptors passed with the request (unix endpoints only)

  std::string reply_header;                  // serialized reply message
  std::span<const std::byte> reply_payload;  // must outlive the handler: use reply_buffer
  AlignedBuffer* reply_buffer = nullptr;     // per-connection scratch, page-aligned
  // Instead of reply_payload: `reply_file_length` bytes of this file at
  // `reply_file_offset`, sent with sendfile (straight from the page cache,
  // never copied in user space). Should the file hold fewer by then
  // (truncated meanwhile), zeros make up the rest so that the frame stays
  // whole; a receiver that must know checks the bytes (ChunkRead's
  // checksums).
  UniqueFd reply_file;
  uint64_t reply_file_offset = 0;
  size_t reply_file_length = 0;
  std::vector<UniqueFd> reply_fds;           // sent with SCM_RIGHTS (unix endpoints only)

  // A long poll (rpc/parking.h): nothing to answer yet, so the connection
  // waits until `parking` is woken or `park_until` passes (the handler sets
  // it at its first run; it stays for the next runs), then runs the
  // handler again. `seen`: parking.generation() read before the handler
  // looked. A handler that parks must not have taken `fds`.
  void Park(const Parking& parking, uint64_t tag, uint64_t seen) {
    parked_in = parking.state();
    park_tag = tag;
    park_seen = seen;
  }
  std::chrono::steady_clock::time_point park_until{};
  std::shared_ptr<Parking::State> parked_in;  // set by Park; the connection clears it
  uint64_t park_tag = 0;
  uint64_t park_seen = 0;
};

using Handler = std::function<Status(Call&)>;

// The handler of method M (methods.h): `f(const Request&, Reply&, Call&)`
// with M's messages. The request is parsed first (malformed: kRpcMalformed)
// and the reply serialized when `f` succeeds. A handler written for another
// method's messages does not compile.
template <Method M, typename F>
  requires std::is_invocable_r_v<Status, const F&, const RequestOf<M>&, ReplyOf<M>&, Call&>
std::pair<Method, Handler> Handle(F f) {
  return {M, [f = std::move(f)](Call& call) -> Status {
            RequestOf<M> req;
            if (!req.ParseFromArray(call.header.data(), static_cast<int>(call.header.size()))) {
              return Status(StatusCode::kRpcMalformed, "cannot parse request");
            }
            ReplyOf<M> rsp;
            Status st = f(static_cast<const RequestOf<M>&>(req), rsp, call);
            if (st.ok()) rsp.SerializeToString(&call.reply_header);
            return st;
          }};
}

struct ServerOptions {
  std::string name = "rpc";         // for logs
  std::vector<Endpoint> listen;     // bound in order
  uint32_t threads = 2;             // io threads; handlers block them
  // Every thread serves every connection (one io_context run by all, each
  // connection on a strand) rather than each thread its own connections:
  // for handlers that mostly wait (a database round trip), where a
  // connection bound to a busy thread would wait while another thread idles.
  bool shared_threads = false;
  std::string secret;               // cluster secret; required
  FrameLimits limits;
  Duration handshake_timeout{std::chrono::seconds(10)};  // a silent peer is dropped after this
  // Where to record requests by method, latency, in-flight requests and
  // connections (rpc/server_metrics.h); null: not recorded. Must outlive the server.
  metrics::Registry* metrics = nullptr;
};

class Server {
 public:
  Server(ServerOptions options, std::vector<std::pair<Method, Handler>> handlers);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Binds every endpoint (a stale unix socket file is replaced) and starts
  // the threads. Fails without side effects left running.
  Status Start();
  // Closes listeners and connections and joins the threads. Idempotent.
  void Stop();
  // The endpoint actually bound (TCP port 0 resolved).
  Endpoint bound(size_t index) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};


}  // namespace t0fs::rpc
