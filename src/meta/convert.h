// Conversions between the wire messages (pb::) and the store's types.
#pragma once

#include "meta/store/meta_store.h"
#include "rpc/proto/meta.pb.h"

namespace t0fs::meta {

void ToWire(const InodeAttr& in, pb::Attr* out);
void ToWire(const ChunkLayout& in, pb::ChunkLayout* out);
Timespec FromWire(const pb::Timespec& ts);
OpToken FromWire(const pb::OpToken& token);

}  // namespace t0fs::meta
