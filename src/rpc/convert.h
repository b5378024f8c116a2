// Wire messages (pb::) to and from the internal types of libt0fs, meta and
// the CLI: the one place that knows which field goes where.
//
// The record types have the same field names on every side — libt0fs's Attr
// and meta's InodeAttr, ReplicaInfo and Replica, ChunkInfo and ChunkLayout,
// the objectives, the volume and node records — so each mapping is written
// once, as a template instantiated with each side's type. Enums cross as
// their numbers; each mapping checks that both sides' enumerators have the
// wire's numbers (kHealthy = REPLICA_HEALTHY, ...).
//
// FromWire<T>(message) returns a T; ToWire(value, message*) fills one.
// Fields a side does not have on the wire (ReplicaInfo::local, a chunk's
// capability, a volume's node) are the caller's to set.
#pragma once

#include <cstdint>
#include <type_traits>

#include "common/capability.h"
#include "common/clock.h"
#include "common/ids.h"
#include "rpc/proto/common.pb.h"
#include "rpc/proto/meta.pb.h"

namespace t0fs::rpc {

// ---- plain values

Timespec FromWire(const pb::Timespec& in);
void ToWire(const Timespec& in, pb::Timespec* out);
Capability FromWire(const pb::Capability& in);
void ToWire(const Capability& in, pb::Capability* out);

// ---- enums: the same numbers on every side

template <class E>
constexpr void CheckReplicaStates() {
  static_assert(static_cast<int>(E::kHealthy) == pb::REPLICA_HEALTHY &&
                static_cast<int>(E::kStale) == pb::REPLICA_STALE &&
                static_cast<int>(E::kPending) == pb::REPLICA_PENDING &&
                static_cast<int>(E::kOffloaded) == pb::REPLICA_OFFLOADED);
}
template <class E>
constexpr void CheckPlacements() {
  static_assert(static_cast<int>(E::kLocal) == pb::PLACEMENT_LOCAL && static_cast<int>(E::kSpread) == pb::PLACEMENT_SPREAD);
}

template <class Kind, class Keep>
constexpr void CheckProtection() {
  static_assert(static_cast<int>(Kind::kNone) == pb::PROTECT_NONE &&
                static_cast<int>(Kind::kReplicas) == pb::PROTECT_REPLICAS &&
                static_cast<int>(Kind::kEc) == pb::PROTECT_EC &&
                static_cast<int>(Kind::kObject) == pb::PROTECT_OBJECT);
  static_assert(static_cast<int>(Keep::kKeep) == pb::KEEP_LOCAL_KEEP &&
                static_cast<int>(Keep::kDrop) == pb::KEEP_LOCAL_DROP &&
                static_cast<int>(Keep::kPressure) == pb::KEEP_LOCAL_PRESSURE);
}

// ---- attributes (client::Attr, meta::InodeAttr)

template <class A>
void ToWire(const A& in, pb::Attr* out) {
  out->set_ino(in.ino.value());
  out->set_mode(in.mode);
  out->set_uid(in.uid);
  out->set_gid(in.gid);
  out->set_size(in.size);
  out->set_nlink(in.nlink);
  out->set_rdev(in.rdev);
  ToWire(in.atime, out->mutable_atime());
  ToWire(in.mtime, out->mutable_mtime());
  ToWire(in.ctime, out->mutable_ctime());
  out->set_chunk_size(in.chunk_size);
  out->set_generation(in.generation);
}

template <class A>
A FromWire(const pb::Attr& in) {
  A out;
  out.ino = InodeId(in.ino());
  out.mode = in.mode();
  out.uid = in.uid();
  out.gid = in.gid();
  out.size = in.size();
  out.nlink = in.nlink();
  out.rdev = in.rdev();
  out.atime = FromWire(in.atime());
  out.mtime = FromWire(in.mtime());
  out.ctime = FromWire(in.ctime());
  out.chunk_size = in.chunk_size();
  out.generation = in.generation();
  return out;
}

// ---- layouts: replicas (client::ReplicaInfo, meta::Replica) and chunks
// (client::ChunkInfo, meta::ChunkLayout); the capability is signed apart.

template <class R>
void ToWire(const R& in, pb::Replica* out) {
  CheckReplicaStates<decltype(in.state)>();
  out->set_node(in.node.value());
  out->set_volume(in.volume.value());
  out->set_chunk(in.chunk.value());
  out->set_version(in.version);
  out->set_state(static_cast<pb::ReplicaState>(in.state));
}

template <class R>
R FromWire(const pb::Replica& in) {
  R out;
  CheckReplicaStates<decltype(out.state)>();
  out.node = NodeId(in.node());
  out.volume = VolumeId(in.volume());
  out.chunk = ChunkId(in.chunk());
  out.version = in.version();
  out.state = static_cast<decltype(out.state)>(in.state());
  return out;
}

template <class C>
void ToWire(const C& in, pb::ChunkLayout* out) {
  out->set_index(in.index);
  for (const auto& r : in.replicas) ToWire(r, out->add_replicas());
  out->set_object_version(in.object_version);
  out->set_ec(in.ec);
}

template <class C>
C FromWire(const pb::ChunkLayout& in) {
  C out;
  out.index = in.index();
  out.object_version = in.object_version();
  out.ec = in.ec();
  using Replica = typename decltype(out.replicas)::value_type;
  for (const pb::Replica& r : in.replicas()) out.replicas.push_back(FromWire<Replica>(r));
  if constexpr (requires { out.object_readers; }) {  // the client's side only
    for (uint64_t node : in.object_readers()) out.object_readers.emplace_back(node);
  }
  return out;
}

// ---- objectives (meta::Objective, client::Objective)

template <class O>
void ToWire(const O& in, pb::Objective* out) {
  CheckPlacements<decltype(in.placement)>();
  out->set_replicas(in.replicas);
  out->set_placement(static_cast<pb::Placement>(in.placement));
  for (NodeId n : in.nodes) out->add_nodes(n.value());
  out->set_chunk_size(in.chunk_size);
  out->set_keep_newest(in.keep_newest);
  CheckProtection<decltype(in.protect.kind), decltype(in.protect.keep_local)>();
  if (in.protect.kind == decltype(in.protect.kind)::kNone) return;
  pb::Protection* p = out->mutable_protect();
  p->set_kind(static_cast<pb::ProtectKind>(in.protect.kind));
  p->set_copies(in.protect.copies);
  p->set_parity(in.protect.parity);
  p->set_within_s(in.protect.within_s);
  p->set_keep_local(static_cast<pb::KeepLocal>(in.protect.keep_local));
  p->set_drop_after_s(in.protect.drop_after_s);
}

template <class O>
O FromWire(const pb::Objective& in) {
  O out;
  CheckPlacements<decltype(out.placement)>();
  out.replicas = in.replicas();
  out.placement = static_cast<decltype(out.placement)>(in.placement());
  for (uint64_t n : in.nodes()) out.nodes.push_back(NodeId(n));
  out.chunk_size = in.chunk_size();
  out.keep_newest = in.keep_newest();
  const pb::Protection& p = in.protect();
  out.protect.kind = static_cast<decltype(out.protect.kind)>(p.kind());
  out.protect.copies = p.copies();
  out.protect.parity = p.parity();
  out.protect.within_s = p.within_s();
  out.protect.keep_local = static_cast<decltype(out.protect.keep_local)>(p.keep_local());
  out.protect.drop_after_s = p.drop_after_s();
  return out;
}

// ---- node records: volumes (meta::VolumeRecord, client::VolumeStatus) and
// what ClusterStatus reports (client::NodeStatus, client::ClusterStatus).

template <class V>
void ToWire(const V& in, pb::VolumeInfo* out) {
  out->set_volume(in.volume.value());
  out->set_volume_uuid(in.uuid);
  out->set_path(in.path);
  out->set_total_bytes(in.total_bytes);
  out->set_free_bytes(in.free_bytes);
  out->set_chunks(in.chunks);
}

template <class V>
V FromWire(const pb::VolumeInfo& in) {
  V out;
  out.volume = VolumeId(in.volume());
  out.uuid = in.volume_uuid();
  out.path = in.path();
  out.total_bytes = in.total_bytes();
  out.free_bytes = in.free_bytes();
  out.chunks = in.chunks();
  if constexpr (requires {
                  out.stored_bytes;
                }) {  // the client's side only (meta keeps it in memory)
    if (in.has_stored_bytes()) out.stored_bytes = in.stored_bytes();
  }
  return out;
}

template <class N>
N FromWire(const pb::NodeStatus& in) {
  N out;
  out.node = NodeId(in.node());
  out.address = in.address();
  out.hostname = in.hostname();
  out.state = in.state();
  out.last_heartbeat_ms_ago = in.last_heartbeat_ms_ago();
  using Volume = typename decltype(out.volumes)::value_type;
  for (const pb::VolumeInfo& v : in.volumes()) out.volumes.push_back(FromWire<Volume>(v));
  out.replicas = in.replicas();
  out.host_id = in.host_id();
  out.tcp_read_bytes = in.tcp_read_bytes();
  out.tcp_write_bytes = in.tcp_write_bytes();
  out.local_opens = in.local_opens();
  out.metrics_address = in.metrics_address();
  out.lost = in.lost();
  return out;
}

template <class S>
S FromWire(const pb::ClusterStatusRsp& in) {
  S out;
  out.cluster_id = in.cluster_id();
  using Node = typename decltype(out.nodes)::value_type;
  for (const pb::NodeStatus& n : in.nodes()) out.nodes.push_back(FromWire<Node>(n));
  out.files = in.files();
  out.directories = in.directories();
  out.chunks = in.chunks();
  out.logical_bytes = in.logical_bytes();
  out.sessions = in.sessions();
  out.open_handles = in.open_handles();
  out.garbage_chunks = in.garbage_chunks();
  out.under_replicated = in.under_replicated();
  out.copies_running = in.copies_running();
  out.copies_done = in.copies_done();
  out.copies_failed = in.copies_failed();
  out.copied_bytes = in.copied_bytes();
  out.copy_rate_bps = in.copy_rate_bps();
  out.stale_replicas = in.stale_replicas();
  out.over_replicated = in.over_replicated();
  out.metrics_address = in.metrics_address();
  out.unavailable = in.unavailable();
  out.protect_waiting_files = in.protect_waiting_files();
  out.protect_waiting_bytes = in.protect_waiting_bytes();
  out.protect_oldest_age_s = in.protect_oldest_age_s();
  out.protect_overdue_files = in.protect_overdue_files();
  out.offloaded_chunks = in.offloaded_chunks();
  out.offloaded_bytes = in.offloaded_bytes();
  return out;
}

// ---- requests

// A mutating request's replay token (meta::OpToken).
template <class T>
T FromWire(const pb::OpToken& in) {
  return T{SessionId(in.session()), in.slot(), in.seq()};
}

}  // namespace t0fs::rpc
