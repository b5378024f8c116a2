// AdminClient over RPC (t0fs/admin.h).
#include <charconv>

#include <fmt/format.h>

#include "common/config.h"
#include "rpc/channel.h"
#include "rpc/convert.h"
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

class RpcAdminClient final : public AdminClient {
 public:
  RpcAdminClient(const rpc::Endpoint& meta, const rpc::ClientOptions& options) : channel_(meta, options) {}

  Result<InodeId> Resolve(std::string_view path) override {
    if (path.empty() || path.front() != '/') {
      return Status(StatusCode::kInvalidArgument, "t0fs: paths are absolute");
    }
    uint64_t ino = kRootInode.value();
    for (size_t pos = 1; pos < path.size();) {
      size_t end = path.find('/', pos);
      if (end == std::string_view::npos) end = path.size();
      std::string_view part = path.substr(pos, end - pos);
      pos = end + 1;
      if (part.empty() || part == ".") continue;
      pb::LookupReq req;
      req.set_parent(ino);
      req.set_name(std::string(part));
      pb::AttrRsp rsp;
      RETURN_IF_ERROR(channel_.Call<rpc::Method::kLookup>(req, &rsp));
      ino = rsp.attr().ino();
    }
    return InodeId(ino);
  }

  Result<Attr> GetAttr(InodeId ino) override {
    pb::GetAttrReq req;
    req.set_ino(ino.value());
    pb::AttrRsp rsp;
    RETURN_IF_ERROR(channel_.Call<rpc::Method::kGetAttr>(req, &rsp));
    return rpc::FromWire<Attr>(rsp.attr());
  }

  Result<std::vector<ChunkInfo>> Chunks(InodeId ino) override {
    std::vector<ChunkInfo> chunks;
    for (uint64_t first = 0;;) {
      pb::GetLayoutReq req;
      req.set_ino(ino.value());
      req.set_first_index(first);
      req.set_count(4096);
      pb::LayoutRsp rsp;
      RETURN_IF_ERROR(channel_.Call<rpc::Method::kGetLayout>(req, &rsp));
      if (rsp.layout().chunks_size() == 0) break;
      for (const pb::ChunkLayout& c : rsp.layout().chunks()) chunks.push_back(rpc::FromWire<ChunkInfo>(c));
      first = chunks.back().index + 1;
    }
    return chunks;
  }

  Result<Objective> GetObjective(InodeId ino) override {
    pb::ObjectiveReq req;
    req.set_ino(ino.value());
    pb::ObjectiveRsp rsp;
    RETURN_IF_ERROR(channel_.Call<rpc::Method::kObjective>(req, &rsp));
    return rpc::FromWire<Objective>(rsp.objective());
  }

  Result<ObjectiveSet> SetObjective(InodeId ino, const Objective& objective, bool recursive) override {
    pb::ObjectiveReq req;
    req.set_ino(ino.value());
    req.set_set(true);
    req.set_recursive(recursive);
    rpc::ToWire(objective, req.mutable_objective());
    pb::ObjectiveRsp rsp;
    RETURN_IF_ERROR(channel_.Call<rpc::Method::kObjective>(req, &rsp));
    return ObjectiveSet{rpc::FromWire<Objective>(rsp.objective()), rsp.changed()};
  }

  Result<std::vector<NodeInfo>> Nodes() override {
    pb::ClusterStatusRsp rsp;
    RETURN_IF_ERROR(channel_.Call<rpc::Method::kClusterStatus>(pb::Empty(), &rsp));
    std::vector<NodeInfo> nodes;
    for (const pb::NodeStatus& n : rsp.nodes()) {
      nodes.push_back(NodeInfo{NodeId(n.node()), n.address(), n.hostname(), n.state(), n.host_id()});
    }
    return nodes;
  }

  Status Drain(NodeId node) override { return SetAdminState(node, pb::NODE_DRAINING); }
  Status Undrain(NodeId node) override { return SetAdminState(node, pb::NODE_ACTIVE); }

 private:
  Status SetAdminState(NodeId node, pb::NodeAdminState state) {
    pb::NodeAdminReq req;
    req.set_node(node.value());
    req.set_admin_state(state);
    pb::Empty rsp;
    return channel_.Call<rpc::Method::kNodeAdmin>(req, &rsp);
  }

  rpc::Channel channel_;
};

}  // namespace

Result<std::unique_ptr<AdminClient>> AdminClient::Open(const Options& options) {
  ASSIGN_OR_RETURN(rpc::Endpoint ep, rpc::Endpoint::Parse(options.meta));
  rpc::ClientOptions copts;
  copts.secret = options.secret;
  copts.role = "admin";
  copts.io_timeout = options.timeout;
  return std::unique_ptr<AdminClient>(new RpcAdminClient(ep, copts));
}

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
