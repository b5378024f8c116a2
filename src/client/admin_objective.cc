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

Result<uint32_t> ParseCount(std::string_view text, uint32_t min, uint32_t max,
                            std::string_view what) {
  auto n = ParseId(text);
  if (!n.ok() || *n < min || *n > max) {
    return Status(StatusCode::kInvalidArgument,
                  fmt::format("{} must be {}..{}, not '{}'", what, min, max, text));
  }
  return static_cast<uint32_t>(*n);
}

// protect=replicas:N | ec:K+M | object | none
Result<Protection> ParseProtection(std::string_view value, Protection base) {
  constexpr std::string_view kForms = "replicas:N, ec:K+M, object or none";
  if (value == "none") return Protection{};
  base.parity = 0;
  if (value == "object") {
    base.kind = ProtectKind::kObject;
    base.copies = 0;
  } else if (value.starts_with("replicas:")) {
    base.kind = ProtectKind::kReplicas;
    ASSIGN_OR_RETURN(base.copies, ParseCount(value.substr(9), 2, 16, "protect=replicas:N"));
  } else if (value.starts_with("ec:") && value.find('+') != std::string_view::npos) {
    base.kind = ProtectKind::kEc;
    const size_t plus = value.find('+');
    ASSIGN_OR_RETURN(base.copies,
                     ParseCount(value.substr(3, plus - 3), 1, 31, "the K of protect=ec:K+M"));
    ASSIGN_OR_RETURN(base.parity,
                     ParseCount(value.substr(plus + 1), 1, 31, "the M of protect=ec:K+M"));
  } else {
    return Status(StatusCode::kInvalidArgument,
                  fmt::format("protect must be {}, not '{}'", kForms, value));
  }
  return base;
}

}  // namespace

Result<Objective> ParseObjective(const std::vector<std::string>& settings, Objective base) {
  bool within_set = false, after_set = false, newest_set = false;
  for (const std::string& item : settings) {
    if (item == "sync") {  // today's behaviour: the writer's copies are all there is
      base.protect = Protection{};
      continue;
    }
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
    } else if (key == "protect") {
      ASSIGN_OR_RETURN(base.protect, ParseProtection(value, base.protect));
    } else if (key == "within") {
      ASSIGN_OR_RETURN(Duration d, ParseDuration(value));
      const auto s = std::chrono::duration_cast<std::chrono::seconds>(d.value).count();
      if (s > 30 * 24 * 3600) {
        return Status(StatusCode::kInvalidArgument,
                      fmt::format("within={} is over 30 days", value));
      }
      base.protect.within_s = static_cast<uint32_t>(s);
      within_set = true;
    } else if (key == "after") {
      ASSIGN_OR_RETURN(Duration d, ParseDuration(value));
      const auto s = std::chrono::duration_cast<std::chrono::seconds>(d.value).count();
      if (s > int64_t{3650} * 24 * 3600) {
        return Status(StatusCode::kInvalidArgument,
                      fmt::format("after={} is over 3650 days", value));
      }
      base.protect.drop_after_s = static_cast<uint32_t>(s);
      after_set = true;
    } else if (key == "keep-newest") {
      auto n = ParseId(value);
      if (!n.ok() || *n > 100000) {
        return Status(StatusCode::kInvalidArgument,
                      fmt::format("keep-newest must be 0..100000 (0 removes it), not '{}'", value));
      }
      base.keep_newest = static_cast<uint32_t>(*n);
      newest_set = true;
    } else if (key == "keep-local") {
      if (value == "keep") {
        base.protect.keep_local = KeepLocal::kKeep;
      } else if (value == "drop") {
        base.protect.keep_local = KeepLocal::kDrop;
      } else if (value == "pressure") {
        base.protect.keep_local = KeepLocal::kPressure;
      } else {
        return Status(StatusCode::kInvalidArgument,
                      fmt::format("keep-local must be keep, drop or pressure, not '{}'", value));
      }
    } else {
      return Status(
          StatusCode::kInvalidArgument,
          fmt::format(
              "unknown objective key '{}' (replicas, placement, nodes, chunk-size, protect, "
              "within, keep-local, after, keep-newest, sync)",
              key));
    }
  }
  if (base.protect.kind == ProtectKind::kNone) {
    if (within_set || after_set || base.protect.keep_local != KeepLocal::kKeep ||
        (newest_set && base.keep_newest != 0)) {
      return Status(StatusCode::kInvalidArgument,
                    "within=, keep-local=, after= and keep-newest= need a protect= goal");
    }
    base.keep_newest = 0;  // a rule without a goal: it goes with it
    return base;
  }
  if (base.protect.keep_local == KeepLocal::kKeep && base.keep_newest != 0) {
    if (newest_set) {
      return Status(StatusCode::kInvalidArgument, "keep-newest= needs keep-local=drop or pressure");
    }
    base.keep_newest = 0;  // keep-local=keep again: every copy stays anyway
  }
  if (base.protect.keep_local != KeepLocal::kDrop && base.protect.drop_after_s != 0) {
    if (after_set) return Status(StatusCode::kInvalidArgument, "after= needs keep-local=drop");
    base.protect.drop_after_s = 0;  // a rule changed from drop: its delay goes with it
  }
  if (!within_set && base.protect.within_s == 0) base.protect.within_s = kDefaultProtectWithinS;
  return base;
}

std::string DescribeProtection(const Protection& p) {
  switch (p.kind) {
    case ProtectKind::kNone:
      return "none";
    case ProtectKind::kReplicas:
      return fmt::format("replicas:{}", p.copies);
    case ProtectKind::kEc:
      return fmt::format("ec:{}+{}", p.copies, p.parity);
    case ProtectKind::kObject:
      return "object";
  }
  return fmt::format("unknown({})", static_cast<uint32_t>(p.kind));
}

std::string DescribeObjective(const Objective& o) {
  std::string nodes;
  for (NodeId n : o.nodes) nodes += (nodes.empty() ? "" : ",") + std::to_string(n.value());
  std::string protect;
  if (o.protect.kind != ProtectKind::kNone) {
    static constexpr const char* kKeep[] = {"keep", "drop", "pressure"};
    const auto keep = static_cast<uint32_t>(o.protect.keep_local);
    protect =
        fmt::format(" protect={} within={}{}", DescribeProtection(o.protect),
                    FormatDuration(Duration{std::chrono::seconds(o.protect.within_s)}),
                    keep == 0 ? "" : fmt::format(" keep-local={}", keep < 3 ? kKeep[keep] : "?"));
    if (const uint32_t after = o.protect.drop_after_s; after != 0) {
      protect += after % 86400 == 0 ? fmt::format(" after={}d", after / 86400)
                 : after % 3600 == 0
                     ? fmt::format(" after={}h", after / 3600)
                     : " after=" + FormatDuration(Duration{std::chrono::seconds(after)});
    }
  }
  if (o.keep_newest != 0) protect += fmt::format(" keep-newest={}", o.keep_newest);
  return fmt::format(
      "replicas={} placement={}{}{}{}", o.replicas,
      o.placement == Placement::kLocal ? "local" : "spread", nodes.empty() ? "" : " nodes=" + nodes,
      o.chunk_size == 0 ? "" : " chunk-size=" + FormatByteSize(o.chunk_size), protect);
}

}  // namespace t0fs::client
