#include "meta/convert.h"

namespace t0fs::meta {
namespace {

void ToWire(const Timespec& in, pb::Timespec* out) {
  out->set_sec(in.sec);
  out->set_nsec(in.nsec);
}

}  // namespace

void ToWire(const InodeAttr& in, pb::Attr* out) {
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

void ToWire(const ChunkLayout& in, pb::ChunkLayout* out) {
  out->set_index(in.index);
  for (const Replica& r : in.replicas) {
    auto* rep = out->add_replicas();
    rep->set_node(r.node.value());
    rep->set_volume(r.volume.value());
    rep->set_chunk(r.chunk.value());
    rep->set_version(r.version);
    rep->set_state(static_cast<pb::ReplicaState>(r.state));
  }
}

Timespec FromWire(const pb::Timespec& ts) { return Timespec{ts.sec(), ts.nsec()}; }

OpToken FromWire(const pb::OpToken& token) {
  return OpToken{SessionId(token.session()), token.slot(), token.seq()};
}

}  // namespace t0fs::meta
