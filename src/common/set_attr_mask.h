// SetAttrMask: which attributes a setattr changes. One definition for every
// layer: the FUSE adapter and libt0fs (client::SetAttrArgs), meta's store
// (meta::SetAttrArgs), and the wire (SetAttrReq.valid, whose SetAttrField
// enum in meta.proto has the same bits, checked where the wire is read).
#pragma once

#include <cstdint>

namespace t0fs {

enum SetAttrMask : uint32_t {
  kSetMode = 1,
  kSetUid = 2,
  kSetGid = 4,
  kSetSize = 8,
  kSetAtime = 16,
  kSetMtime = 32,
  kSetAtimeNow = 64,  // atime = now (ignores the given atime)
  kSetMtimeNow = 128,
  kSetCtime = 256,
};

}  // namespace t0fs
