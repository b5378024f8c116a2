// Every RPC method: its stable numeric id and its request and reply messages.
//
// Ids are on the wire (docs/formats/rpc.md): never renumber or reuse one.
// The table below ties each id to its messages; callers (Channel::Call<M>)
// and handlers (rpc::Handle<M>, server.h) both take their types from it, so
// a request sent under the wrong method, or a handler registered under the
// wrong id, does not compile.
//
// Bulk data travels beside the message, never inside it: ChunkWrite's
// request and the replies of ChunkRead and ObjectRead carry raw bytes, OpenLocal's reply and
// AdoptLocal's request carry two descriptors (SCM_RIGHTS); see
// Channel::Call's `bulk` argument.
#pragma once

#include <cstdint>
#include <string_view>

namespace t0fs::pb {
class Hello;
class Empty;
class OpenSessionReq;
class OpenSessionRsp;
class SessionReq;
class LookupReq;
class GetAttrReq;
class AttrRsp;
class SetAttrReq;
class MakeNodeReq;
class MakeNodeRsp;
class RemoveReq;
class RemoveRsp;
class ChangesReq;
class ChangesRsp;
class RenameReq;
class LinkReq;
class ReadLinkRsp;
class ReadDirReq;
class ReadDirRsp;
class StatFsRsp;
class XattrReq;
class XattrRsp;
class OpenReq;
class OpenRsp;
class ReleaseReq;
class GetLayoutReq;
class LayoutRsp;
class AllocateReq;
class CommitReq;
class ReserveChunksReq;
class ReserveChunksRsp;
class RegisterNodeReq;
class RegisterNodeRsp;
class HeartbeatReq;
class HeartbeatRsp;
class ClusterStatusRsp;
class FsckRsp;
class ChunkListReq;
class ChunkListRsp;
class ObjectiveReq;
class ObjectiveRsp;
class ReportReplicaReq;
class NodeAdminReq;
class QueueOrphansReq;
class QueueOrphansRsp;
class ChunkReadReq;
class ObjectReadReq;
class ChunkReadRsp;
class ChunkWriteReq;
class ChunkEmptyRsp;
class ChunkTruncateReq;
class ChunkRemoveReq;
class ChunkSyncReq;
class ChunkStatReq;
class ChunkStatRsp;
class OpenLocalReq;
class AdoptLocalReq;
class OpenLocalRsp;
class ListChunksReq;
class ListChunksRsp;
class PrepareLocalReq;
class PrepareLocalRsp;
}  // namespace t0fs::pb

namespace t0fs::rpc {

enum class Method : uint16_t {
  kHello = 1,  // authentication handshake, every service

  // meta: sessions
  kOpenSession = 10,
  kRenewSession = 11,
  kCloseSession = 12,
  kChanges = 13,
  // meta: namespace
  kLookup = 20,
  kGetAttr = 21,
  kSetAttr = 22,
  kMakeNode = 23,
  kUnlink = 24,
  kRmdir = 25,
  kRename = 26,
  kLink = 27,
  kReadLink = 28,
  kReadDir = 29,
  kStatFs = 30,
  kGetXattr = 31,
  kSetXattr = 32,
  kListXattr = 33,
  kRemoveXattr = 34,
  // meta: files and layouts
  kOpen = 40,
  kRelease = 41,
  kGetLayout = 42,
  kAllocate = 43,
  kCommit = 44,
  kReserveChunks = 45,
  // meta: cluster
  kRegisterNode = 50,
  kHeartbeat = 51,
  kClusterStatus = 60,
  kFsck = 61,
  kChunkList = 62,
  kObjective = 63,
  kReportReplica = 64,
  kNodeAdmin = 65,
  kQueueOrphans = 66,

  // data
  kChunkRead = 100,
  kChunkWrite = 101,
  kChunkTruncate = 102,
  kChunkRemove = 103,
  kChunkSync = 104,
  kChunkStat = 105,
  kOpenLocal = 106,
  kListChunks = 107,
  kAdoptLocal = 108,
  kPrepareLocal = 109,
  kObjectRead = 110,
};

std::string_view MethodName(Method m);

// The messages of method M: MethodTypes<M>::Request and ::Reply. A method
// without an entry has no messages to send (it cannot be called or handled).
template <Method M>
struct MethodTypes;

template <class Req, class Rsp>
struct Messages {
  using Request = Req;
  using Reply = Rsp;
};

// clang-format off
template <> struct MethodTypes<Method::kHello>         : Messages<pb::Hello, pb::Hello> {};
template <> struct MethodTypes<Method::kOpenSession>   : Messages<pb::OpenSessionReq, pb::OpenSessionRsp> {};
template <> struct MethodTypes<Method::kRenewSession>  : Messages<pb::SessionReq, pb::Empty> {};
template <> struct MethodTypes<Method::kCloseSession>  : Messages<pb::SessionReq, pb::Empty> {};
template <> struct MethodTypes<Method::kChanges>       : Messages<pb::ChangesReq, pb::ChangesRsp> {};
template <> struct MethodTypes<Method::kLookup>        : Messages<pb::LookupReq, pb::AttrRsp> {};
template <> struct MethodTypes<Method::kGetAttr>       : Messages<pb::GetAttrReq, pb::AttrRsp> {};
template <> struct MethodTypes<Method::kSetAttr>       : Messages<pb::SetAttrReq, pb::AttrRsp> {};
template <> struct MethodTypes<Method::kMakeNode>      : Messages<pb::MakeNodeReq, pb::MakeNodeRsp> {};
template <> struct MethodTypes<Method::kUnlink>        : Messages<pb::RemoveReq, pb::RemoveRsp> {};
template <> struct MethodTypes<Method::kRmdir>         : Messages<pb::RemoveReq, pb::RemoveRsp> {};
template <> struct MethodTypes<Method::kRename>        : Messages<pb::RenameReq, pb::Empty> {};
template <> struct MethodTypes<Method::kLink>          : Messages<pb::LinkReq, pb::AttrRsp> {};
template <> struct MethodTypes<Method::kReadLink>      : Messages<pb::GetAttrReq, pb::ReadLinkRsp> {};
template <> struct MethodTypes<Method::kReadDir>       : Messages<pb::ReadDirReq, pb::ReadDirRsp> {};
template <> struct MethodTypes<Method::kStatFs>        : Messages<pb::Empty, pb::StatFsRsp> {};
template <> struct MethodTypes<Method::kGetXattr>      : Messages<pb::XattrReq, pb::XattrRsp> {};
template <> struct MethodTypes<Method::kSetXattr>      : Messages<pb::XattrReq, pb::Empty> {};
template <> struct MethodTypes<Method::kListXattr>     : Messages<pb::XattrReq, pb::XattrRsp> {};
template <> struct MethodTypes<Method::kRemoveXattr>   : Messages<pb::XattrReq, pb::Empty> {};
template <> struct MethodTypes<Method::kOpen>          : Messages<pb::OpenReq, pb::OpenRsp> {};
template <> struct MethodTypes<Method::kRelease>       : Messages<pb::ReleaseReq, pb::Empty> {};
template <> struct MethodTypes<Method::kGetLayout>     : Messages<pb::GetLayoutReq, pb::LayoutRsp> {};
template <> struct MethodTypes<Method::kAllocate>      : Messages<pb::AllocateReq, pb::LayoutRsp> {};
template <> struct MethodTypes<Method::kCommit>        : Messages<pb::CommitReq, pb::AttrRsp> {};
template <> struct MethodTypes<Method::kReserveChunks> : Messages<pb::ReserveChunksReq, pb::ReserveChunksRsp> {};
template <> struct MethodTypes<Method::kRegisterNode>  : Messages<pb::RegisterNodeReq, pb::RegisterNodeRsp> {};
template <> struct MethodTypes<Method::kHeartbeat>     : Messages<pb::HeartbeatReq, pb::HeartbeatRsp> {};
template <> struct MethodTypes<Method::kClusterStatus> : Messages<pb::Empty, pb::ClusterStatusRsp> {};
template <> struct MethodTypes<Method::kFsck>          : Messages<pb::Empty, pb::FsckRsp> {};
template <> struct MethodTypes<Method::kChunkList>     : Messages<pb::ChunkListReq, pb::ChunkListRsp> {};
template <> struct MethodTypes<Method::kObjective>     : Messages<pb::ObjectiveReq, pb::ObjectiveRsp> {};
template <> struct MethodTypes<Method::kReportReplica> : Messages<pb::ReportReplicaReq, pb::Empty> {};
template <> struct MethodTypes<Method::kNodeAdmin>     : Messages<pb::NodeAdminReq, pb::Empty> {};
template <> struct MethodTypes<Method::kQueueOrphans>  : Messages<pb::QueueOrphansReq, pb::QueueOrphansRsp> {};
template <> struct MethodTypes<Method::kChunkRead>     : Messages<pb::ChunkReadReq, pb::ChunkReadRsp> {};      // reply: bytes
template <> struct MethodTypes<Method::kChunkWrite>    : Messages<pb::ChunkWriteReq, pb::ChunkEmptyRsp> {};    // request: bytes
template <> struct MethodTypes<Method::kChunkTruncate> : Messages<pb::ChunkTruncateReq, pb::ChunkEmptyRsp> {};
template <> struct MethodTypes<Method::kChunkRemove>   : Messages<pb::ChunkRemoveReq, pb::ChunkEmptyRsp> {};
template <> struct MethodTypes<Method::kChunkSync>     : Messages<pb::ChunkSyncReq, pb::ChunkEmptyRsp> {};
template <> struct MethodTypes<Method::kChunkStat>     : Messages<pb::ChunkStatReq, pb::ChunkStatRsp> {};
template <> struct MethodTypes<Method::kOpenLocal>     : Messages<pb::OpenLocalReq, pb::OpenLocalRsp> {};      // reply: 2 fds
template <> struct MethodTypes<Method::kListChunks>    : Messages<pb::ListChunksReq, pb::ListChunksRsp> {};
template <> struct MethodTypes<Method::kAdoptLocal>    : Messages<pb::AdoptLocalReq, pb::ChunkEmptyRsp> {};   // request: 2 fds
template <> struct MethodTypes<Method::kPrepareLocal>  : Messages<pb::PrepareLocalReq, pb::PrepareLocalRsp> {};  // reply: 2 fds per chunk
template <> struct MethodTypes<Method::kObjectRead>    : Messages<pb::ObjectReadReq, pb::ChunkReadRsp> {};     // reply: bytes
// clang-format on

template <Method M>
using RequestOf = typename MethodTypes<M>::Request;
template <Method M>
using ReplyOf = typename MethodTypes<M>::Reply;

}  // namespace t0fs::rpc
