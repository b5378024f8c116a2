// rpc::Channel: the client side. A pool of blocking connections to one
// endpoint; each connection carries one request at a time. Given several
// endpoints (servers of one service, e.g. meta servers over one store), it
// either uses one at a time and moves to the next when a call fails in
// transport (kRpcConnect/kRpcClosed/kRpcTimeout), so that the caller's retry
// goes there; or, with ClientOptions::spread, sends each request to the next
// endpoint in turn, leaving one that failed in transport out for
// kSpreadPause, doubled while it keeps failing (the caller's retry goes to
// another). With ClientOptions::hedge_after, a request that has no reply in
// that time is sent to a second endpoint too and the first reply wins: a
// stopped or hung server costs a request that long, not the i/o timeout.
//
// Why blocking sockets: the callers (FUSE worker threads, benchmark threads,
// CLI) are threads that need the answer before they continue. Doing the
// send/receive on the calling thread costs no thread hop, which is most of a
// metadata operation's latency budget (docs/design.md).
//
// Thread safety: Channel is safe for concurrent use; a Connection is not.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "common/config.h"
#include "common/fd.h"
#include "common/status.h"
#include "rpc/endpoint.h"
#include "rpc/frame.h"
#include "rpc/methods.h"

namespace t0fs::rpc {

struct ClientOptions {
  std::string secret;  // cluster secret
  std::string role = "client";
  Duration connect_timeout{std::chrono::seconds(5)};
  // A request whose reply does not arrive within this fails with kRpcTimeout
  // and its connection is dropped. Long enough for an fsync of a large chunk.
  Duration io_timeout{std::chrono::seconds(60)};
  FrameLimits limits;
  // Several endpoints: spread the requests over them (round robin over the
  // live ones) instead of using one until it fails. For servers that keep
  // no per-client state between requests (meta servers over a shared store).
  bool spread = false;
  // Several endpoints: a request still without a reply after this goes to
  // another endpoint as well, the first reply is taken and the other
  // connection dropped, its endpoint left out as after a transport failure
  // (a hung server then costs a request this long, not the i/o timeout).
  // While another endpoint is live, a new connection's connect and
  // handshake are bounded by it too. Only for services that bear a request
  // run twice (meta: reads, and mutations with op tokens). 0: off.
  Duration hedge_after{std::chrono::milliseconds(0)};
};

// How long a spreading channel leaves out an endpoint that failed in
// transport before it tries it again; doubled at each failure in a row (a
// stopped or hung server is tried once in kMaxSpreadPause, not every 2 s:
// each try costs a request a connect or reply timeout), reset by an answer.
inline constexpr std::chrono::milliseconds kSpreadPause{2000};
inline constexpr std::chrono::milliseconds kMaxSpreadPause{60000};

// The raw parts of a call beside its message (methods.h says which methods
// carry them).
struct Bulk {
  std::span<const std::byte> payload = {};     // request bytes (ChunkWrite)
  std::span<std::byte> reply_payload = {};     // reply bytes land here; larger replies fail (ChunkRead)
  size_t* reply_payload_len = nullptr;         // bytes received into reply_payload
  std::vector<UniqueFd>* reply_fds = nullptr;  // descriptors passed with the reply (OpenLocal)
  std::span<const int> fds = {};               // descriptors passed with the request (AdoptLocal; unix only)
};

// What a call sends and where its reply goes: the untyped form, for
// Connection::Send/Receive and for tests that send what no typed call would.
struct CallArgs {
  Method method = Method::kHello;
  std::string_view header;                   // serialized request
  std::span<const std::byte> payload;        // raw request bytes
  std::string* reply_header = nullptr;       // serialized reply (required)
  std::span<std::byte> reply_payload;        // reply bytes land here; larger replies fail
  size_t* reply_payload_len = nullptr;       // bytes received into reply_payload
  std::vector<UniqueFd>* reply_fds = nullptr;  // descriptors passed with the reply
  std::span<const int> fds;                    // descriptors passed with the request (unix only)
};

// The CallArgs of a typed request of method M. `header` receives the
// serialized request and `reply` will receive the serialized reply; both
// must outlive the call.
template <Method M>
CallArgs MakeCallArgs(const RequestOf<M>& req, std::string* header, std::string* reply, const Bulk& bulk = {}) {
  *header = req.SerializeAsString();
  CallArgs args;
  args.method = M;
  args.header = *header;
  args.payload = bulk.payload;
  args.reply_header = reply;
  args.reply_payload = bulk.reply_payload;
  args.reply_payload_len = bulk.reply_payload_len;
  args.reply_fds = bulk.reply_fds;
  args.fds = bulk.fds;
  return args;
}

// The error of a reply of method `m` from `from` that does not parse.
Status MalformedReply(Method m, const Endpoint& from);

class Connection {
 public:
  // Connects and authenticates (see common.proto Hello).
  static Result<std::unique_ptr<Connection>> Open(const Endpoint& ep, const ClientOptions& options);
  // Returns the remote status (e.g. kNotFound) or a transport error (kRpc*).
  // After a transport error the connection is unusable.
  Status Call(const CallArgs& args);
  // Call in two halves, so that requests to several peers can be in flight
  // at once from one thread: Send, (Send to others), then Receive.
  Status Send(const CallArgs& args);
  Status Receive(const CallArgs& args);
  bool broken() const { return broken_; }
  // The socket, to wait for the replies of several connections at once
  // with poll(2) (Send on each, poll, Receive where readable).
  int fd() const { return fd_.get(); }
  // Gives up on the request in flight (its reply may still come): the
  // connection is not used again.
  void Abandon() { broken_ = true; }
  // Which of its channel's endpoints the connection goes to.
  size_t route() const { return route_; }
  void set_route(size_t route) { route_ = route; }

 private:
  Connection(UniqueFd fd, const ClientOptions& options) : fd_(std::move(fd)), options_(options) {}
  Status Handshake();
  Status SendFrame(const FrameHeader& h, std::string_view header, std::span<const std::byte> payload,
                   std::span<const int> fds = {});
  Result<FrameHeader> ReceiveHead(std::vector<UniqueFd>* fds);
  Status ReceiveExact(std::byte* buf, size_t len);
  // A receive slice (receive_slice_) ran out: ok to wait on, or the wait
  // (receive_total_ since it began: `deadline`, set on the first call)
  // is over, or the calling thread's request was cancelled
  // (common/cancel.h): kRpcTimeout, the connection broken.
  Status KeepWaiting(std::chrono::steady_clock::time_point* deadline);
  Status Fail(Status st);

  UniqueFd fd_;
  const ClientOptions& options_;
  uint64_t next_id_ = 1;
  uint64_t pending_id_ = 0;  // the request Receive waits for
  Method pending_method_ = Method::kHello;
  bool broken_ = false;
  size_t route_ = 0;
  // The socket's receive timeout, and the longest wait for a reply: the
  // connect timeout for the handshake, then the i/o timeout; both waited
  // in slices of kCancelSlice at most (common/cancel.h).
  std::chrono::milliseconds receive_slice_{0}, receive_total_{0};
  ReadAhead ahead_;  // of the reply being received
};

class Channel {
 public:
  Channel(Endpoint endpoint, ClientOptions options)
      : Channel(std::vector<Endpoint>{std::move(endpoint)}, std::move(options)) {}
  // Several servers of one service, tried in this order (at least one).
  Channel(std::vector<Endpoint> endpoints, ClientOptions options);

  // One request on a pooled connection (opened on demand). Transport errors
  // drop the connection; they are not retried here (see IsTransportError).
  Status Call(const CallArgs& args);

  // One request of method M (methods.h): serializes `req`, parses the
  // reply into *rsp (when not null); `bulk` for the methods with raw bytes
  // or descriptors.
  template <Method M>
  Status Call(const RequestOf<M>& req, ReplyOf<M>* rsp, const Bulk& bulk = {}) {
    std::string out, in;
    RETURN_IF_ERROR(Call(MakeCallArgs<M>(req, &out, &in, bulk)));
    // The endpoint is named only in the error: nothing is formatted per call.
    if (rsp != nullptr && !rsp->ParseFromString(in)) return MalformedReply(M, endpoint());
    return Status::Ok();
  }

  // A pooled (or new) connection, for Send/Receive; give it back with Release.
  Result<std::unique_ptr<Connection>> Acquire();
  void Release(std::unique_ptr<Connection> conn);

  // The endpoint in use (spreading: the one of the latest connection).
  Endpoint endpoint() const;
  size_t endpoint_count() const { return endpoints_.size(); }
  // Closes every idle connection (e.g. after the peer restarted).
  void Reset();

 private:
  // Call with ClientOptions::hedge_after: the request goes to a second
  // endpoint when the first has not answered in time; the first reply wins.
  Status HedgedCall(const CallArgs& args);
  // A pooled (or new) connection to `route` (mu_ not held). `hedging`: a new
  // one is given hedge_after to connect and say Hello, when another endpoint
  // is live to go to instead.
  Result<std::unique_ptr<Connection>> AcquireRoute(size_t route, bool hedging);
  // The endpoint a hedge of a request sent to `route` goes to (mu_ held):
  // spreading, the next live one other than `route`; otherwise the one
  // after it. None when no other is live.
  std::optional<size_t> HedgeRoute(size_t route);
  // Whether an endpoint other than `route` is live (mu_ held).
  bool OtherLive(size_t route) const;
  // A transport failure on `route`: its idle connections go; the next
  // endpoint becomes current (unless another thread moved on already), or
  // a spreading channel leaves `route` out for kSpreadPause (doubled per
  // failure in a row, up to kMaxSpreadPause).
  void Failover(size_t route, const Status& why);
  // The endpoint for a new request (mu_ held): the current one, or
  // spreading, the next live one in turn.
  size_t NextRoute();
  // Spreading: the next live endpoint in turn other than `except` (mu_ held).
  std::optional<size_t> NextLive(std::optional<size_t> except);
  // A reply came from `route`: a spreading channel forgets its failures
  // in a row (mu_ not held).
  void Answered(size_t route);

  const std::vector<Endpoint> endpoints_;
  ClientOptions options_;
  // options_ with the connect timeout bounded by hedge_after (connections
  // keep a reference to their options: a member, not a temporary).
  ClientOptions hedge_options_;
  mutable std::mutex mu_;  // guards what follows
  std::vector<std::vector<std::unique_ptr<Connection>>> idle_;  // per endpoint
  std::vector<std::chrono::steady_clock::time_point> paused_until_;  // per endpoint (spread)
  std::vector<uint32_t> strikes_;  // per endpoint (spread): transport failures in a row
  size_t current_ = 0;  // index into endpoints_
  size_t turn_ = 0;     // spreading: requests sent so far, picks the next endpoint
};

// True for codes that mean the request may not have reached the server or
// its reply was lost (connect failure, reset, timeout): safe to retry only
// with an idempotent request or a replay token.
bool IsTransportError(StatusCode code);

// Peer identity helpers for "same host" detection.
// host id = boot id + network namespace inode: two processes share it iff they
// run on the same kernel in the same network namespace.
std::string LocalHostId();

}  // namespace t0fs::rpc
