// Files: open/release handles, layouts, chunk allocation and commits.
#include <fcntl.h>
#include <sys/stat.h>

#include <fmt/format.h>

#include "common/logging.h"
#include "rpc/convert.h"
#include "meta/meta_service.h"
#include "meta/placement.h"
#include "rpc/proto/meta.pb.h"

namespace t0fs::meta {

using rpc::Call;
using rpc::Method;
using rpc::FromWire;
using rpc::Handle;
using rpc::ToWire;

namespace {
constexpr size_t kMaxAllocate = 1024;
constexpr size_t kMaxReleaseBatch = 4096;
}  // namespace

ChunkId MetaService::ReservedChunk(const pb::MakeNodeReq& req) const {
  constexpr uint64_t kSkewMs = 60'000;  // between the clocks of the meta servers of one store
  const ChunkId id(req.first_chunk_id());
  if (!id.valid()) return ChunkId();
  Status ok = VerifyCapability(cap_key_, id, kCapWrite, FromWire(req.first_chunk_cap()), WallMillis(), kSkewMs);
  if (!ok.ok()) {
    LOG_DEBUG("create {}: chunk {} not taken: {}", req.name(), id, ok.ToString());
    return ChunkId();
  }
  return id;
}

Result<std::vector<ReplicaTarget>> MetaService::PlaceChunk(const InodeAttr& attr, NodeId writer) {
  ASSIGN_OR_RETURN(auto nodes, ListNodes());
  return PlaceOn(ChoicesOf(nodes), attr, writer);
}

std::vector<NodeChoice> MetaService::ChoicesOf(const std::vector<NodeRecord>& nodes) {
  std::vector<NodeChoice> choices;
  for (const NodeRecord& node : nodes) {
    const Health health = health_.Of(node.node);  // (IsUp: not down)
    const bool active = node.admin_state == NodeAdminState::kActive;
    const bool lost =
        health == Health::kDown && active && health_.Lost(node.node, config_.repair_grace.value);
    choices.push_back(NodeChoice{&node, health != Health::kDown && active,
                                 planner_->LoadOf(node.node), health == Health::kSuspect,
                                 health == Health::kDown && active && !lost, lost});
  }
  return choices;
}

Result<std::shared_ptr<const std::vector<NodeRecord>>> MetaService::CachedNodes() {
  {
    std::lock_guard lock(nodes_mu_);
    if (nodes_cache_ && std::chrono::steady_clock::now() - nodes_cached_at_ < kNodeCacheTime) return nodes_cache_;
  }
  ASSIGN_OR_RETURN(auto listed, ListNodes());
  auto nodes = std::make_shared<const std::vector<NodeRecord>>(std::move(listed));
  std::lock_guard lock(nodes_mu_);
  nodes_cache_ = nodes;
  nodes_cached_at_ = std::chrono::steady_clock::now();
  return nodes;
}

void MetaService::ForgetCachedNodes() {
  std::lock_guard lock(nodes_mu_);
  nodes_cache_.reset();
}

Result<std::vector<ReplicaTarget>> MetaService::PlaceOn(const std::vector<NodeChoice>& choices,
                                                        const InodeAttr& attr, NodeId writer,
                                                        VolumeId writer_volume) {
  PlacementRequest place;
  place.writer = writer;
  place.writer_volume = writer_volume;
  place.replicas = attr.replicas;
  place.placement = attr.placement;
  place.allowed = attr.placement_nodes;
  place.chunk_size = attr.chunk_size;
  // With fewer usable nodes than the objective asks, the chunk starts with
  // what there is and repair adds the rest when nodes return.
  place.allow_fewer = true;
  return ChooseTargets(choices, place);
}

void MetaService::AddFileHandlers(HandlerList& h) {
  h.push_back(Handle<Method::kOpen>(
      [this](const pb::OpenReq& req, pb::OpenRsp& rsp, Call&) -> Status {
        ASSIGN_OR_RETURN(OpenResult opened, store_->Open(FromWire<OpToken>(req.token()), SessionId(req.session()),
                                                         InodeId(req.ino()), req.flags(), WallNow()));
        if (req.flags() & O_TRUNC) changes_.Add(SessionId(req.session()), {InodeChange(opened.attr.ino)});
        rsp.set_handle(opened.handle.value());
        ToWire(opened.attr, rsp.mutable_attr());
        const bool write = (req.flags() & O_ACCMODE) != O_RDONLY;
        LayoutToWire(opened.attr.ino, opened.attr.chunk_size, opened.layout, write ? kCapRead | kCapWrite : kCapRead,
                     rsp.mutable_layout());
        return Status::Ok();
      }));

  h.push_back(Handle<Method::kRelease>(
      [this](const pb::ReleaseReq& req, pb::Empty&, Call&) {
        if (req.more_size() == 0) return store_->Release(FromWire<OpToken>(req.token()), HandleId(req.handle()));
        if (static_cast<size_t>(req.more_size()) > kMaxReleaseBatch) {
          return Status(StatusCode::kInvalidArgument, fmt::format("release 1..{} handles per call", kMaxReleaseBatch));
        }
        std::vector<HandleId> handles{HandleId(req.handle())};
        for (uint64_t h : req.more()) handles.push_back(HandleId(h));
        return store_->ReleaseMany(FromWire<OpToken>(req.token()), handles);
      }));

  h.push_back(Handle<Method::kGetLayout>(
      [this](const pb::GetLayoutReq& req, pb::LayoutRsp& rsp, Call&) -> Status {
        ASSIGN_OR_RETURN(InodeAttr attr, store_->GetAttr(InodeId(req.ino())));
        uint64_t count = std::min<uint64_t>(req.count() == 0 ? kOpenLayoutChunks : req.count(), 65536);
        ASSIGN_OR_RETURN(auto chunks, store_->GetLayout(InodeId(req.ino()), req.first_index(), count));
        LayoutToWire(attr.ino, attr.chunk_size, chunks, req.write() ? kCapRead | kCapWrite : kCapRead,
                     rsp.mutable_layout());
        return Status::Ok();
      }));

  h.push_back(Handle<Method::kAllocate>(
      [this](const pb::AllocateReq& req, pb::LayoutRsp& rsp, Call&) -> Status {
        if (req.indices_size() == 0 || static_cast<size_t>(req.indices_size()) > kMaxAllocate) {
          return Status(StatusCode::kInvalidArgument, fmt::format("allocate 1..{} chunks per call", kMaxAllocate));
        }
        ASSIGN_OR_RETURN(InodeAttr attr, store_->GetAttr(InodeId(req.ino())));
        ASSIGN_OR_RETURN(auto targets, PlaceChunk(attr, NodeId(req.writer_node())));
        std::vector<uint64_t> indices(req.indices().begin(), req.indices().end());
        ASSIGN_OR_RETURN(auto chunks, store_->Allocate(FromWire<OpToken>(req.token()), attr.ino, indices, targets));
        LayoutToWire(attr.ino, attr.chunk_size, chunks, kCapRead | kCapWrite, rsp.mutable_layout());
        return Status::Ok();
      }));

  h.push_back(Handle<Method::kReserveChunks>(
      [this](const pb::ReserveChunksReq& req, pb::ReserveChunksRsp& rsp, Call&) -> Status {
        ASSIGN_OR_RETURN(auto nodes, CachedNodes());
        const NodeId writer(req.writer_node());
        VolumeId volume;
        for (const NodeRecord& node : *nodes) {
          if (node.node == writer) volume = VolumeFor(node, kPlacementReserve);
        }
        if (!volume.valid()) {
          return Status(StatusCode::kMetaNoVolumes, fmt::format("node {} has no volume with room for a chunk", writer));
        }
        ASSIGN_OR_RETURN(std::vector<ChunkId> ids, store_->ReserveChunkIds(req.count()));
        const uint64_t expiry = WallMillis() + static_cast<uint64_t>(config_.capability_ttl.value.count());
        for (ChunkId id : ids) {
          rsp.add_chunks(id.value());
          ToWire(SignCapability(cap_key_, id, kCapRead | kCapWrite, expiry), rsp.add_caps());
        }
        rsp.set_volume(volume.value());
        return Status::Ok();
      }));

  h.push_back(Handle<Method::kCommit>(
      [this](const pb::CommitReq& req, pb::AttrRsp& rsp, Call&) -> Status {
        CommitArgs args;
        args.ino = InodeId(req.ino());
        args.handle = HandleId(req.handle());
        args.size = req.size();
        if (req.set_mtime()) args.mtime = FromWire(req.mtime());
        for (const pb::ChunkVersion& w : req.written()) {
          WrittenChunk chunk{ChunkId(w.chunk()), w.version(), {}};
          for (uint64_t node : w.nodes()) chunk.nodes.push_back(NodeId(node));
          args.written.push_back(std::move(chunk));
        }
        const OpToken token = FromWire<OpToken>(req.token());
        ASSIGN_OR_RETURN(InodeAttr attr, store_->Commit(token, args, req.durable(), WallNow()));
        changes_.Add(token.session, {InodeChange(args.ino)});
        ToWire(attr, rsp.mutable_attr());
        return Status::Ok();
      }));
}

}  // namespace t0fs::meta
