// Endpoint: where a service listens. "host:port" is TCP (IPv4 or a name),
// "unix:/path" is a unix stream socket. A list "a:7700,b:7700" names several
// servers of one service (meta servers over one store), tried in turn.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace t0fs::rpc {

struct Endpoint {
  enum class Kind : uint8_t { kTcp, kUnix };
  Kind kind = Kind::kTcp;
  std::string host;  // TCP
  uint16_t port = 0;  // TCP; 0 = any free port when listening
  std::string path;  // unix

  static Result<Endpoint> Parse(std::string_view text);
  // "a:7700,b:7700": one or more endpoints, in order; an empty item or a bad
  // address is kInvalidArgument naming it.
  static Result<std::vector<Endpoint>> ParseList(std::string_view text);
  std::string ToString() const;
  bool is_unix() const { return kind == Kind::kUnix; }
};

}  // namespace t0fs::rpc
