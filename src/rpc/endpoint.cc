#include "rpc/endpoint.h"

#include <charconv>

#include <fmt/format.h>

namespace t0fs::rpc {

Result<std::vector<Endpoint>> Endpoint::ParseList(std::string_view text) {
  std::vector<Endpoint> out;
  for (size_t start = 0;;) {
    const size_t comma = text.find(',', start);
    std::string_view item = text.substr(start, comma == std::string_view::npos ? text.npos : comma - start);
    if (item.empty()) {
      return Status(StatusCode::kInvalidArgument,
                    fmt::format("'{}': an empty address in the list (expected host:port,host:port)", text));
    }
    ASSIGN_OR_RETURN(Endpoint ep, Parse(item));
    out.push_back(std::move(ep));
    if (comma == std::string_view::npos) return out;
    start = comma + 1;
  }
}

Result<Endpoint> Endpoint::Parse(std::string_view text) {
  Endpoint ep;
  if (text.starts_with("unix:")) {
    ep.kind = Kind::kUnix;
    ep.path = std::string(text.substr(5));
    if (ep.path.empty() || ep.path.size() > 107) {
      return Status(StatusCode::kInvalidArgument,
                    fmt::format("'{}': a unix socket path must be 1-107 characters", text));
    }
    return ep;
  }
  size_t colon = text.rfind(':');
  if (colon == std::string_view::npos || colon == 0) {
    return Status(StatusCode::kInvalidArgument,
                  fmt::format("'{}' is not an address (expected host:port or unix:/path)", text));
  }
  std::string_view port = text.substr(colon + 1);
  unsigned value = 0;
  auto [ptr, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
  if (ec != std::errc() || ptr != port.data() + port.size() || value > 65535) {
    return Status(StatusCode::kInvalidArgument, fmt::format("'{}': bad port '{}'", text, port));
  }
  ep.host = std::string(text.substr(0, colon));
  ep.port = static_cast<uint16_t>(value);
  return ep;
}

std::string Endpoint::ToString() const {
  if (kind == Kind::kUnix) return "unix:" + path;
  return fmt::format("{}:{}", host, port);
}

}  // namespace t0fs::rpc
