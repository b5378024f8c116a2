// ConnectionLoop: the coroutine that serves one connection of an
// rpc::Server (handshake, then request frames dispatched to handlers in
// order, replies written back). Internal to the server; Socket is
// tcp::socket or a unix stream socket, everything else is shared.
#pragma once

#include <sys/uio.h>

#include <asio.hpp>
#include <cstdint>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/fd.h"
#include "common/status.h"
#include "rpc/frame.h"
#include "rpc/server.h"

namespace t0fs::rpc {

class ServerMetrics;

class ConnectionLoop {
 public:
  ConnectionLoop(const ServerOptions& options,
                 const std::unordered_map<uint16_t, Handler>& handlers, std::string peer,
                 ServerMetrics* metrics = nullptr)
      : options_(options), handlers_(handlers), peer_(std::move(peer)), metrics_(metrics) {}

  template <typename Socket>
  asio::awaitable<void> Run(Socket socket);

 private:
  Status Dispatch(Call& call);
  // A parked call (Call::Park) waits for its wake or its time.
  asio::awaitable<void> WaitParked(Call& call);

  Status DispatchUnrecorded(Call& call);

  // Server speaks first with a nonce; see common.proto Hello.
  template <typename Socket>
  asio::awaitable<bool> Handshake(Socket& socket);

  template <typename Socket>
  asio::awaitable<bool> SendMessage(Socket& socket, FrameHeader h, const std::string& body);

  template <typename Socket>
  asio::awaitable<bool> SendError(Socket& socket, FrameHeader h, const Status& st);

  // Reads a frame head. TCP: through `ahead`, which then holds what came
  // with it (usually the rest of the request). On unix sockets the
  // request's descriptors arrive with its first byte (SCM_RIGHTS), so the
  // head is read on its own with recvmsg and `ahead` stays empty.
  template <typename Socket>
  asio::awaitable<bool> ReadHead(Socket& socket, std::byte* head, std::vector<UniqueFd>* fds,
                                 ReadAhead& ahead);

  // Sends `parts` whole (moving through them as they go), `fds` with the
  // first byte: straight from this thread, waiting for the event loop only
  // while the socket is full. An asio write that completes at once still
  // resumes the coroutine through the loop. False when the peer is gone.
  template <typename Socket>
  asio::awaitable<bool> SendAll(Socket& socket, std::span<iovec> parts,
                                std::span<const int> fds = {});

  // Waits until `socket` takes more bytes; false when it is gone.
  template <typename Socket>
  asio::awaitable<bool> Writable(Socket& socket);

  // The frame head and reply message, then the payload from
  // call.reply_file with sendfile (zeros where the file ends early).
  template <typename Socket>
  asio::awaitable<bool> SendFromFile(Socket& socket, const std::byte* head, Call& call);

  // Unix sockets: the reply's first byte carries call.reply_fds.
  template <typename Socket>
  asio::awaitable<bool> SendWithFds(Socket& socket, std::span<iovec> parts, Call& call);

  const ServerOptions& options_;
  const std::unordered_map<uint16_t, Handler>& handlers_;
  std::string peer_;
  std::string role_;
  ServerMetrics* metrics_;  // null: not recorded
};

}  // namespace t0fs::rpc
