// AdminClient over RPC (t0fs/admin.h): each call is one request to meta
// (or, for chunk listings, to a data node), or a few pages of one.
#include <fmt/format.h>

#include <map>

#include "rpc/channel.h"
#include "rpc/convert.h"
#include "rpc/proto/data.pb.h"
#include "t0fs/admin.h"

namespace t0fs::client {
namespace {

// Entries per page of a chunk listing.
constexpr uint32_t kChunkPage = 10000;

class RpcAdminClient final : public AdminClient {
 public:
  RpcAdminClient(std::vector<rpc::Endpoint> meta, const rpc::ClientOptions& options)
      : options_(options), channel_(std::move(meta), options) {}

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
      RETURN_IF_ERROR(CallMeta<rpc::Method::kLookup>(req, &rsp));
      ino = rsp.attr().ino();
    }
    return InodeId(ino);
  }

  Result<Attr> GetAttr(InodeId ino) override {
    pb::GetAttrReq req;
    req.set_ino(ino.value());
    pb::AttrRsp rsp;
    RETURN_IF_ERROR(CallMeta<rpc::Method::kGetAttr>(req, &rsp));
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
      RETURN_IF_ERROR(CallMeta<rpc::Method::kGetLayout>(req, &rsp));
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
    RETURN_IF_ERROR(CallMeta<rpc::Method::kObjective>(req, &rsp));
    return rpc::FromWire<Objective>(rsp.objective());
  }

  Result<ObjectiveSet> SetObjective(InodeId ino, const Objective& objective, bool recursive) override {
    pb::ObjectiveReq req;
    req.set_ino(ino.value());
    req.set_set(true);
    req.set_recursive(recursive);
    rpc::ToWire(objective, req.mutable_objective());
    pb::ObjectiveRsp rsp;
    RETURN_IF_ERROR(CallMeta<rpc::Method::kObjective>(req, &rsp));
    return ObjectiveSet{rpc::FromWire<Objective>(rsp.objective()), rsp.changed()};
  }

  Result<ClusterStatus> GetStatus() override {
    pb::ClusterStatusRsp rsp;
    RETURN_IF_ERROR(CallMeta<rpc::Method::kClusterStatus>(pb::Empty(), &rsp));
    return rpc::FromWire<ClusterStatus>(rsp);
  }

  Status Drain(NodeId node) override { return SetAdminState(node, pb::NODE_DRAINING); }
  Status Undrain(NodeId node) override { return SetAdminState(node, pb::NODE_ACTIVE); }

  Result<NamespaceCheck> CheckNamespace() override {
    pb::FsckRsp rsp;
    RETURN_IF_ERROR(CallMeta<rpc::Method::kFsck>(pb::Empty(), &rsp));
    NamespaceCheck check;
    check.inodes = rsp.inodes();
    check.chunks = rsp.chunks();
    check.problems.assign(rsp.problems().begin(), rsp.problems().end());
    check.below_objective.assign(rsp.below_objective().begin(), rsp.below_objective().end());
    return check;
  }

  Result<std::vector<ChunkRef>> ChunkRefs() override {
    std::vector<ChunkRef> refs;
    for (uint64_t after = 0;;) {
      pb::ChunkListReq req;
      req.set_after(after);
      req.set_max(kChunkPage);
      pb::ChunkListRsp rsp;
      RETURN_IF_ERROR(CallMeta<rpc::Method::kChunkList>(req, &rsp));
      for (const pb::ChunkRef& c : rsp.chunks()) {
        refs.push_back(ChunkRef{ChunkId(c.chunk()), NodeId(c.node()), VolumeId(c.volume()),
                                c.version(), InodeId(c.ino()), c.index(), c.garbage(), c.cell()});
        after = std::max(after, c.chunk());
      }
      if (rsp.eof() || rsp.chunks_size() == 0) break;
    }
    return refs;
  }

  Result<uint64_t> QueueOrphans(NodeId node, const std::vector<StoredChunk>& files) override {
    uint64_t queued = 0;
    for (size_t at = 0; at < files.size(); at += kChunkPage) {
      pb::QueueOrphansReq req;
      req.set_node(node.value());
      for (size_t i = at; i < std::min(files.size(), at + kChunkPage); ++i) {
        pb::OrphanFile* f = req.add_files();
        f->set_chunk(files[i].chunk.value());
        f->set_volume(files[i].volume.value());
        f->set_version(files[i].version);
      }
      pb::QueueOrphansRsp rsp;
      RETURN_IF_ERROR(CallMeta<rpc::Method::kQueueOrphans>(req, &rsp));
      queued += rsp.queued();
    }
    return queued;
  }

  Result<std::vector<StoredChunk>> StoredChunks(const std::string& address,
                                                VolumeId volume) override {
    ASSIGN_OR_RETURN(rpc::Channel * node, NodeChannel(address));
    std::vector<StoredChunk> files;
    for (uint64_t after = 0;;) {
      pb::ListChunksReq req;
      req.set_volume(volume.value());
      req.set_after(after);
      req.set_max(kChunkPage);
      pb::ListChunksRsp rsp;
      RETURN_IF_ERROR(node->Call<rpc::Method::kListChunks>(req, &rsp));
      for (const pb::ChunkInfo& c : rsp.chunks()) {
        files.push_back(
            StoredChunk{ChunkId(c.chunk()), VolumeId(c.volume()), c.length(), c.version()});
        after = std::max(after, c.chunk());
      }
      if (rsp.eof() || rsp.chunks_size() == 0) break;
    }
    return files;
  }

 private:
  // One request to meta. With several meta servers a transport failure is
  // tried once more on each of the others (the channel moves on by itself):
  // every admin request may run twice without harm (reads, objective and
  // drain changes that set a state, and QueueOrphans, which skips what is
  // queued already).
  template <rpc::Method M>
  Status CallMeta(const rpc::RequestOf<M>& req, rpc::ReplyOf<M>* rsp) {
    Status st;
    for (size_t i = 0; i < channel_.endpoint_count(); ++i) {
      st = channel_.Call<M>(req, rsp);
      if (!rpc::IsTransportError(st.code())) return st;
    }
    return st;
  }

  Status SetAdminState(NodeId node, pb::NodeAdminState state) {
    pb::NodeAdminReq req;
    req.set_node(node.value());
    req.set_admin_state(state);
    pb::Empty rsp;
    return CallMeta<rpc::Method::kNodeAdmin>(req, &rsp);
  }

  // A channel to a data node, opened on first use and kept.
  Result<rpc::Channel*> NodeChannel(const std::string& address) {
    auto it = nodes_.find(address);
    if (it == nodes_.end()) {
      ASSIGN_OR_RETURN(rpc::Endpoint ep, rpc::Endpoint::Parse(address));
      it = nodes_.emplace(address, std::make_unique<rpc::Channel>(ep, options_)).first;
    }
    return it->second.get();
  }

  const rpc::ClientOptions options_;
  rpc::Channel channel_;                                        // to meta
  std::map<std::string, std::unique_ptr<rpc::Channel>> nodes_;  // data node address → channel
};

}  // namespace

Result<std::unique_ptr<AdminClient>> AdminClient::Open(const Options& options) {
  // Several meta servers of one store ("a:7700,b:7700"): used in turn.
  ASSIGN_OR_RETURN(std::vector<rpc::Endpoint> eps, rpc::Endpoint::ParseList(options.meta));
  rpc::ClientOptions copts;
  copts.secret = options.secret;
  copts.role = "admin";
  copts.io_timeout = options.timeout;
  // A stopped server (it accepts connections, says nothing) costs a second,
  // not the timeout: the request goes to another as well (as the mount's).
  if (eps.size() > 1) copts.hedge_after.value = std::chrono::seconds(1);
  return std::unique_ptr<AdminClient>(new RpcAdminClient(std::move(eps), copts));
}

Result<std::vector<NodeStatus>> AdminClient::Nodes() {
  ASSIGN_OR_RETURN(ClusterStatus status, GetStatus());
  return std::move(status.nodes);
}

std::string LocalHostId() {
  return rpc::LocalHostId();
}

}  // namespace t0fs::client
