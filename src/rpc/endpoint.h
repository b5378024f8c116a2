// Endpoint: where a service listens. "host:port" is TCP (IPv4 or a name),
// "unix:/path" is a unix stream socket.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/status.h"

namespace t0fs::rpc {

struct Endpoint {
  enum class Kind : uint8_t { kTcp, kUnix };
  Kind kind = Kind::kTcp;
  std::string host;  // TCP
  uint16_t port = 0;  // TCP; 0 = any free port when listening
  std::string path;  // unix

  static Result<Endpoint> Parse(std::string_view text);
  std::string ToString() const;
  bool is_unix() const { return kind == Kind::kUnix; }
};

}  // namespace t0fs::rpc
