// Objective settings (t0fs/admin.h): parsed, validated and described here,
// once, for every front end.
#include <charconv>

#include <fmt/format.h>

#include "common/config.h"
#include "t0fs/admin.h"

namespace t0fs::client {
namespace {

Result<uint64_t> ParseId(std::string_view text) {
  uint64_t n = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (ec != std::errc() || ptr != text.data() + text.size()) {
    return Status(StatusCode::kInvalidArgument, fmt::format("'{}' is not a number", text));
  }
  return n;
}

}  // namespace

Result<Objective> ParseObjective(const std::vector<std::string>& settings, Objective base) {
  for (const std::string& item : settings) {
    size_t eq = item.find('=');
    if (eq == std::string::npos) {
      return Status(StatusCode::kInvalidArgument, fmt::format("'{}': expected key=value", item));
    }
    std::string key = item.substr(0, eq), value = item.substr(eq + 1);
    if (key == "replicas") {
      auto n = ParseId(value);
      if (!n.ok() || *n == 0 || *n > 16) {
        return Status(StatusCode::kInvalidArgument, fmt::format("replicas must be 1..16, not '{}'", value));
      }
      base.replicas = static_cast<uint32_t>(*n);
    } else if (key == "placement") {
      if (value != "local" && value != "spread") {
        return Status(StatusCode::kInvalidArgument,
                      fmt::format("placement must be local or spread, not '{}'", value));
      }
      base.placement = value == "local" ? Placement::kLocal : Placement::kSpread;
    } else if (key == "nodes") {
      base.nodes.clear();
      for (size_t pos = 0; pos <= value.size() && !value.empty();) {
        size_t end = value.find(',', pos);
        if (end == std::string::npos) end = value.size();
        std::string id = value.substr(pos, end - pos);
        auto n = ParseId(id);
        if (!n.ok() || *n == 0) {
          return Status(StatusCode::kInvalidArgument, fmt::format("nodes: '{}' is not a node id", id));
        }
        base.nodes.push_back(NodeId(*n));
        pos = end + 1;
      }
    } else if (key == "chunk-size") {
      ASSIGN_OR_RETURN(ByteSize size, ParseByteSize(value));
      base.chunk_size = size.bytes;
    } else {
      return Status(StatusCode::kInvalidArgument,
                    fmt::format("unknown objective key '{}' (replicas, placement, nodes, chunk-size)", key));
    }
  }
  return base;
}

std::string DescribeObjective(const Objective& o) {
  std::string nodes;
  for (NodeId n : o.nodes) nodes += (nodes.empty() ? "" : ",") + std::to_string(n.value());
  return fmt::format("replicas={} placement={}{}{}", o.replicas,
                     o.placement == Placement::kLocal ? "local" : "spread", nodes.empty() ? "" : " nodes=" + nodes,
                     o.chunk_size == 0 ? "" : " chunk-size=" + FormatByteSize(o.chunk_size));
}

}  // namespace t0fs::client
