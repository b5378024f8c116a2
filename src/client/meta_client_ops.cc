// MetaClient's typed methods: each builds its request, calls meta (Call for
// reads, Mutate with a replay token for changes) and returns libt0fs types.
#include <fcntl.h>

#include <algorithm>

#include "client/meta_client.h"
#include "rpc/convert.h"

namespace t0fs::client {
namespace {

pb::ReportReason ReasonToWire(ReplicaProblem problem) {
  switch (problem) {
    case ReplicaProblem::kChecksum:
      return pb::REPORT_CHECKSUM;
    case ReplicaProblem::kStale:
      return pb::REPORT_STALE;
    case ReplicaProblem::kRecall:
    case ReplicaProblem::kRecallOnRead:
      return pb::REPORT_RECALL;
    case ReplicaProblem::kUnreachable:
    case ReplicaProblem::kWriterWaits:
      break;
  }
  return pb::REPORT_UNREACHABLE;
}

// A wire layout as the client caches it; `local` marks replicas on `local_node`.
std::vector<CachedChunk> LayoutFromWire(const pb::Layout& layout, NodeId local_node) {
  std::vector<CachedChunk> out;
  out.reserve(layout.chunks_size());
  for (const pb::ChunkLayout& c : layout.chunks()) {
    CachedChunk chunk{rpc::FromWire<ChunkInfo>(c), rpc::FromWire(c.cap())};
    for (ReplicaInfo& r : chunk.info.replicas) r.local = local_node.valid() && r.node == local_node;
    out.push_back(std::move(chunk));
  }
  return out;
}

}  // namespace

// A request that names the client's session (OpenReq, GetLayoutReq; a
// create that opens, MakeNodeReq::open_session) names the current one at
// each attempt: after an expired session was replaced (Retry), the old one
// would be refused again and again.
template <class Req>
concept NamesSession = requires(Req& r) {
  r.set_session(uint64_t{});
}
|| requires(Req& r) {
  r.set_open_session(uint64_t{});
};

template <class Req>
void NameSession(Req& req, SessionId session) {
  if constexpr (requires { req.set_session(uint64_t{}); }) req.set_session(session.value());
  if constexpr (requires { req.set_open_session(uint64_t{}); }) {
    if (req.open_session() != 0)
      req.set_open_session(session.value());  // 0: a create that does not open
  }
}

template <rpc::Method M>
Status MetaClient::Call(const rpc::RequestOf<M>& req, rpc::ReplyOf<M>* rsp) {
  if constexpr (NamesSession<rpc::RequestOf<M>>) {
    rpc::RequestOf<M> current = req;
    return Retry(M, [&] {
      NameSession(current, session());
      return channel_.Call<M>(current, rsp);
    });
  } else {
    return Retry(M, [&] { return channel_.Call<M>(req, rsp); });
  }
}

template <rpc::Method M>
Status MetaClient::Mutate(rpc::RequestOf<M>& req, rpc::ReplyOf<M>* rsp) {
  Slot slot = AcquireSlot();
  pb::OpToken* token = req.mutable_token();
  token->set_slot(slot.index);
  token->set_seq(slot.seq);
  Status st = Retry(M, [&] {
    token->set_session(session().value());
    if constexpr (NamesSession<rpc::RequestOf<M>>) NameSession(req, session());
    return channel_.Call<M>(req, rsp);
  });
  ReleaseSlot(slot);
  return st;
}

// ---------------------------------------------------------------- namespace

Result<Attr> MetaClient::Lookup(InodeId parent, std::string_view name) {
  pb::LookupReq req;
  req.set_parent(parent.value());
  req.set_name(std::string(name));
  pb::AttrRsp rsp;
  RETURN_IF_ERROR(Call<rpc::Method::kLookup>(req, &rsp));
  return rpc::FromWire<Attr>(rsp.attr());
}

Result<Attr> MetaClient::GetAttr(InodeId ino) {
  pb::GetAttrReq req;
  req.set_ino(ino.value());
  pb::AttrRsp rsp;
  RETURN_IF_ERROR(Call<rpc::Method::kGetAttr>(req, &rsp));
  return rpc::FromWire<Attr>(rsp.attr());
}

Result<Attr> MetaClient::SetAttr(InodeId ino, const SetAttrArgs& args) {
  pb::SetAttrReq req;
  req.set_ino(ino.value());
  req.set_valid(args.mask & ~uint32_t{kSetSize});
  req.set_mode(args.mode);
  req.set_uid(args.uid);
  req.set_gid(args.gid);
  rpc::ToWire(args.atime, req.mutable_atime());
  rpc::ToWire(args.mtime, req.mutable_mtime());
  rpc::ToWire(args.ctime, req.mutable_ctime());
  pb::AttrRsp rsp;
  RETURN_IF_ERROR(Mutate<rpc::Method::kSetAttr>(req, &rsp));
  return rpc::FromWire<Attr>(rsp.attr());
}

namespace {

pb::MakeNodeReq MakeNodeReqOf(const NewNode& node) {
  pb::MakeNodeReq req;
  req.set_parent(node.parent.value());
  req.set_name(std::string(node.name));
  req.set_mode(node.mode);
  req.set_uid(node.owner.uid);
  req.set_gid(node.owner.gid);
  req.set_rdev(node.rdev);
  req.set_exclusive(node.exclusive);
  if (!node.link_target.empty()) req.set_link_target(std::string(node.link_target));
  return req;
}

// The directory's attributes after a change, when meta sent them.
template <typename Rsp>
std::optional<Attr> ParentOf(const Rsp& rsp) {
  if (!rsp.has_parent()) return std::nullopt;
  return rpc::FromWire<Attr>(rsp.parent());
}

}  // namespace

Result<MadeNode> MetaClient::MakeNode(const NewNode& node) {
  pb::MakeNodeReq req = MakeNodeReqOf(node);
  pb::MakeNodeRsp rsp;
  RETURN_IF_ERROR(Mutate<rpc::Method::kMakeNode>(req, &rsp));
  return MadeNode{rpc::FromWire<Attr>(rsp.attr()), rsp.created(), ParentOf(rsp)};
}

Result<CreatedFile> MetaClient::CreateOpen(const NewNode& node, int flags, bool first_chunk,
                                           const PreparedChunkId* prepared) {
  pb::MakeNodeReq req = MakeNodeReqOf(node);
  req.set_open_session(session().value());
  req.set_open_flags(static_cast<uint32_t>(flags & ~O_TRUNC));
  req.set_first_chunk(first_chunk && local_node().valid());
  req.set_writer_node(local_node().value());
  if (prepared != nullptr) {
    req.set_first_chunk_id(prepared->chunk.value());
    req.set_first_chunk_volume(prepared->volume.value());
    rpc::ToWire(prepared->cap, req.mutable_first_chunk_cap());
  }
  pb::MakeNodeRsp rsp;
  RETURN_IF_ERROR(Mutate<rpc::Method::kMakeNode>(req, &rsp));
  if (rsp.handle() == 0) return Status(StatusCode::kIoError, "meta created the file but did not open it (an older meta server?)");
  OpenReply opened{HandleId(rsp.handle()), SessionId(req.open_session()),
                   rpc::FromWire<Attr>(rsp.attr()), LayoutFromWire(rsp.layout(), local_node())};
  return CreatedFile{std::move(opened), rsp.created(), ParentOf(rsp)};
}

template <rpc::Method M>
Result<std::optional<Attr>> MetaClient::Remove(InodeId parent, std::string_view name) {
  pb::RemoveReq req;
  req.set_parent(parent.value());
  req.set_name(std::string(name));
  pb::RemoveRsp rsp;
  RETURN_IF_ERROR(Mutate<M>(req, &rsp));
  return ParentOf(rsp);
}

Result<std::optional<Attr>> MetaClient::Unlink(InodeId parent, std::string_view name) {
  return Remove<rpc::Method::kUnlink>(parent, name);
}

Result<std::optional<Attr>> MetaClient::Rmdir(InodeId parent, std::string_view name) {
  return Remove<rpc::Method::kRmdir>(parent, name);
}

Status MetaClient::Rename(InodeId old_parent, std::string_view old_name, InodeId new_parent,
                          std::string_view new_name, uint32_t flags) {
  pb::RenameReq req;
  req.set_old_parent(old_parent.value());
  req.set_old_name(std::string(old_name));
  req.set_new_parent(new_parent.value());
  req.set_new_name(std::string(new_name));
  req.set_flags(flags);
  pb::Empty rsp;
  return Mutate<rpc::Method::kRename>(req, &rsp);
}

Result<Attr> MetaClient::Link(InodeId ino, InodeId new_parent, std::string_view new_name) {
  pb::LinkReq req;
  req.set_ino(ino.value());
  req.set_new_parent(new_parent.value());
  req.set_new_name(std::string(new_name));
  pb::AttrRsp rsp;
  RETURN_IF_ERROR(Mutate<rpc::Method::kLink>(req, &rsp));
  return rpc::FromWire<Attr>(rsp.attr());
}

Result<std::string> MetaClient::ReadLink(InodeId ino) {
  pb::GetAttrReq req;
  req.set_ino(ino.value());
  pb::ReadLinkRsp rsp;
  RETURN_IF_ERROR(Call<rpc::Method::kReadLink>(req, &rsp));
  return rsp.target();
}

Result<DirPage> MetaClient::ReadDir(InodeId dir, uint64_t cookie, uint32_t max_entries, bool with_attrs) {
  pb::ReadDirReq req;
  req.set_ino(dir.value());
  req.set_cookie(cookie);
  req.set_max_entries(max_entries);
  req.set_with_attrs(with_attrs);
  pb::ReadDirRsp rsp;
  RETURN_IF_ERROR(Call<rpc::Method::kReadDir>(req, &rsp));
  DirPage page;
  page.eof = rsp.eof();
  for (const pb::DirEntry& e : rsp.entries()) {
    DirEntry out{e.name(), InodeId(e.ino()), e.mode(), e.cookie(), std::nullopt};
    if (e.has_attr()) out.attr = rpc::FromWire<Attr>(e.attr());
    page.entries.push_back(std::move(out));
  }
  return page;
}

Result<StatFs> MetaClient::GetStatFs() {
  pb::Empty req;
  pb::StatFsRsp rsp;
  RETURN_IF_ERROR(Call<rpc::Method::kStatFs>(req, &rsp));
  StatFs out;
  out.total_bytes = rsp.total_bytes();
  out.free_bytes = rsp.free_bytes();
  out.files = rsp.files();
  out.block_size = static_cast<uint32_t>(rsp.block_size() == 0 ? 4096 : rsp.block_size());
  out.max_name = rsp.max_name() == 0 ? 255 : rsp.max_name();
  return out;
}

Result<std::string> MetaClient::GetXattr(InodeId ino, std::string_view name) {
  pb::XattrReq req;
  req.set_ino(ino.value());
  req.set_name(std::string(name));
  pb::XattrRsp rsp;
  RETURN_IF_ERROR(Call<rpc::Method::kGetXattr>(req, &rsp));
  return rsp.value();
}

Status MetaClient::SetXattr(InodeId ino, std::string_view name, std::string_view value, uint32_t flags) {
  pb::XattrReq req;
  req.set_ino(ino.value());
  req.set_name(std::string(name));
  req.set_value(std::string(value));
  req.set_flags(flags);
  pb::Empty rsp;
  return Mutate<rpc::Method::kSetXattr>(req, &rsp);
}

Result<std::vector<std::string>> MetaClient::ListXattr(InodeId ino) {
  pb::XattrReq req;
  req.set_ino(ino.value());
  pb::XattrRsp rsp;
  RETURN_IF_ERROR(Call<rpc::Method::kListXattr>(req, &rsp));
  return std::vector<std::string>(rsp.names().begin(), rsp.names().end());
}

Status MetaClient::RemoveXattr(InodeId ino, std::string_view name) {
  pb::XattrReq req;
  req.set_ino(ino.value());
  req.set_name(std::string(name));
  pb::Empty rsp;
  return Mutate<rpc::Method::kRemoveXattr>(req, &rsp);
}

// ---------------------------------------------------------------- files

Result<OpenReply> MetaClient::Open(InodeId ino, int flags) {
  pb::OpenReq req;
  req.set_session(session().value());
  req.set_ino(ino.value());
  req.set_flags(static_cast<uint32_t>(flags));
  pb::OpenRsp rsp;
  RETURN_IF_ERROR(Mutate<rpc::Method::kOpen>(req, &rsp));
  return OpenReply{HandleId(rsp.handle()), SessionId(req.session()),
                   rpc::FromWire<Attr>(rsp.attr()), LayoutFromWire(rsp.layout(), local_node())};
}

Status MetaClient::Release(HandleId handle) {
  pb::ReleaseReq req;
  req.set_handle(handle.value());
  pb::Empty rsp;
  return Mutate<rpc::Method::kRelease>(req, &rsp);
}

Status MetaClient::ReleaseBatch(const std::vector<HandleId>& handles) {
  pb::ReleaseReq req;
  req.set_handle(handles.front().value());
  for (size_t i = 1; i < handles.size(); ++i) req.add_more(handles[i].value());
  pb::Empty rsp;
  Status st = Mutate<rpc::Method::kRelease>(req, &rsp);
  if (st.code() == StatusCode::kBadHandle) return Status::Ok();  // gone with a replaced session
  return st;
}

Result<std::vector<CachedChunk>> MetaClient::GetLayout(InodeId ino, uint64_t first, uint64_t count, bool write) {
  pb::GetLayoutReq req;
  req.set_ino(ino.value());
  req.set_first_index(first);
  req.set_count(count);
  req.set_write(write);
  req.set_session(session().value());
  pb::LayoutRsp rsp;
  RETURN_IF_ERROR(Call<rpc::Method::kGetLayout>(req, &rsp));
  return LayoutFromWire(rsp.layout(), local_node());
}

Result<std::vector<CachedChunk>> MetaClient::Allocate(InodeId ino, const std::vector<uint64_t>& indices) {
  pb::AllocateReq req;
  req.set_ino(ino.value());
  req.set_writer_node(local_node().value());
  for (uint64_t index : indices) req.add_indices(index);
  pb::LayoutRsp rsp;
  RETURN_IF_ERROR(Mutate<rpc::Method::kAllocate>(req, &rsp));
  return LayoutFromWire(rsp.layout(), local_node());
}

Result<std::vector<PreparedChunkId>> MetaClient::ReserveChunks(uint32_t count) {
  pb::ReserveChunksReq req;
  req.set_writer_node(local_node().value());
  req.set_count(count);
  pb::ReserveChunksRsp rsp;
  RETURN_IF_ERROR(Call<rpc::Method::kReserveChunks>(req, &rsp));
  if (rsp.caps_size() != rsp.chunks_size() || rsp.chunks_size() == 0) {
    return Status(StatusCode::kRpcMalformed, "ReserveChunks: chunks and capabilities do not match");
  }
  std::vector<PreparedChunkId> out;
  for (int i = 0; i < rsp.chunks_size(); ++i) {
    out.push_back(PreparedChunkId{ChunkId(rsp.chunks(i)), VolumeId(rsp.volume()), rpc::FromWire(rsp.caps(i))});
  }
  return out;
}

Result<Attr> MetaClient::Commit(const CommitRequest& commit) {
  pb::CommitReq req;
  req.set_ino(commit.ino.value());
  req.set_handle(commit.handle.value());
  req.set_size(commit.size);
  if (commit.mtime) {
    req.set_set_mtime(true);
    rpc::ToWire(*commit.mtime, req.mutable_mtime());
  }
  for (const WrittenChunk& written : commit.written) {
    pb::ChunkVersion* w = req.add_written();
    w->set_chunk(written.chunk.value());
    w->set_version(written.version);
    for (NodeId n : written.nodes) w->add_nodes(n.value());
  }
  req.set_durable(commit.durable);
  pb::AttrRsp rsp;
  RETURN_IF_ERROR(Mutate<rpc::Method::kCommit>(req, &rsp));
  return rpc::FromWire<Attr>(rsp.attr());
}

Result<Attr> MetaClient::Truncate(InodeId ino, uint64_t size, uint64_t keep_chunks) {
  pb::SetAttrReq req;
  req.set_ino(ino.value());
  req.set_valid(kSetSize);
  req.set_size(size);
  if (keep_chunks > 0) req.set_keep_chunks(keep_chunks);
  pb::AttrRsp rsp;
  RETURN_IF_ERROR(Mutate<rpc::Method::kSetAttr>(req, &rsp));
  return rpc::FromWire<Attr>(rsp.attr());
}

Status MetaClient::ReportReplica(const ReplicaInfo& replica, ReplicaProblem problem, const Status& why) {
  pb::ReportReplicaReq req;
  req.set_chunk(replica.chunk.value());
  req.set_node(replica.node.value());
  req.set_reason(ReasonToWire(problem));
  req.set_writer_waits(problem == ReplicaProblem::kWriterWaits);
  req.set_reader(problem == ReplicaProblem::kRecallOnRead);
  if (problem == ReplicaProblem::kStale) req.set_seen_version(replica.version);
  req.set_detail(why.ToString());
  pb::Empty rsp;
  return Call<rpc::Method::kReportReplica>(req, &rsp);
}

// ---------------------------------------------------------------- cluster

Result<std::vector<std::pair<NodeId, std::string>>> MetaClient::NodeAddresses() {
  pb::Empty req;
  pb::ClusterStatusRsp rsp;
  RETURN_IF_ERROR(Call<rpc::Method::kClusterStatus>(req, &rsp));
  std::vector<std::pair<NodeId, std::string>> out;
  for (const pb::NodeStatus& n : rsp.nodes()) out.emplace_back(NodeId(n.node()), n.address());
  return out;
}

}  // namespace t0fs::client
