#include "rpc/convert.h"

#include "common/set_attr_mask.h"

namespace t0fs::rpc {
namespace {

// SetAttrReq.valid carries SetAttrMask bits as they are.
constexpr bool SameBit(pb::SetAttrField wire, SetAttrMask mask) {
  return static_cast<uint32_t>(wire) == static_cast<uint32_t>(mask);
}
static_assert(SameBit(pb::SET_MODE, kSetMode) && SameBit(pb::SET_UID, kSetUid) && SameBit(pb::SET_GID, kSetGid) &&
              SameBit(pb::SET_SIZE, kSetSize) && SameBit(pb::SET_ATIME, kSetAtime) &&
              SameBit(pb::SET_MTIME, kSetMtime) && SameBit(pb::SET_ATIME_NOW, kSetAtimeNow) &&
              SameBit(pb::SET_MTIME_NOW, kSetMtimeNow) && SameBit(pb::SET_CTIME, kSetCtime));

}  // namespace

Timespec FromWire(const pb::Timespec& in) { return Timespec{in.sec(), in.nsec()}; }

void ToWire(const Timespec& in, pb::Timespec* out) {
  out->set_sec(in.sec);
  out->set_nsec(in.nsec);
}

Capability FromWire(const pb::Capability& in) { return Capability{in.mac(), in.expiry_ms(), in.rights()}; }

void ToWire(const Capability& in, pb::Capability* out) {
  out->set_mac(in.mac);
  out->set_expiry_ms(in.expiry_ms);
  out->set_rights(in.rights);
}

}  // namespace t0fs::rpc
