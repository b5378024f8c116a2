// Strong id types: an InodeId cannot be passed where a ChunkId is expected.
#pragma once

#include <compare>
#include <cstdint>
#include <functional>

#include <fmt/format.h>

namespace t0fs {

template <typename Tag>
class StrongId {
 public:
  constexpr StrongId() = default;
  constexpr explicit StrongId(uint64_t v) : v_(v) {}
  constexpr uint64_t value() const { return v_; }
  constexpr bool valid() const { return v_ != 0; }  // 0 is never a valid id
  constexpr auto operator<=>(const StrongId&) const = default;

 private:
  uint64_t v_ = 0;
};

struct InodeTag {};
struct ChunkTag {};
struct NodeTag {};
struct VolumeTag {};
struct SessionTag {};
struct HandleTag {};

using InodeId = StrongId<InodeTag>;      // inode number; the root is 1 (kRootInode)
using ChunkId = StrongId<ChunkTag>;      // cluster-wide unique, allocated by meta
using NodeId = StrongId<NodeTag>;        // a data node (host), stable across restarts
using VolumeId = StrongId<VolumeTag>;    // cluster-wide unique volume id
using SessionId = StrongId<SessionTag>;  // a client's session with meta
using HandleId = StrongId<HandleTag>;    // an open file handle registered with meta

inline constexpr InodeId kRootInode{1};

}  // namespace t0fs

template <typename Tag>
struct std::hash<t0fs::StrongId<Tag>> {
  size_t operator()(const t0fs::StrongId<Tag>& id) const noexcept {
    return std::hash<uint64_t>()(id.value());
  }
};

template <typename Tag>
struct fmt::formatter<t0fs::StrongId<Tag>> : fmt::formatter<uint64_t> {
  auto format(const t0fs::StrongId<Tag>& id, format_context& ctx) const {
    return fmt::formatter<uint64_t>::format(id.value(), ctx);
  }
};
