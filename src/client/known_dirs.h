// KnownDirs: directories of which this client knows every name, so that
// the lookup of a name that is not there is answered "no such name"
// without a meta round trip. The kernel sends such a lookup before every
// create of a new name (an untar, a dataset writer, mdtest), so this halves
// the meta requests of a create.
//
// - A directory is known from its mkdir by this client (empty then); this
//   client's own creates, removals, renames and links in it keep its names.
// - It is forgotten at the first sign of a change by someone else: another
//   client's change of a name in it (PollChanges), a poll that was not
//   complete, a change of ours in it that failed (its outcome may be
//   unknown), when it is the least recently used of too many, and
//   kMaxAge after its mkdir at the latest (a bound for a mount that does
//   not ask every meta server, whose changes it would never hear).
// - Answers are given only while other clients' changes are heard (a
//   complete poll within kFresh): a name another client just created is
//   missed for at most as long as a kernel's cached negative entry would
//   miss it (docs/fuse.md, "Consistency and caching").
//
// Thread safety: safe for concurrent use.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <cstddef>
#include <list>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "common/ids.h"

namespace t0fs::client {

class KnownDirs {
 public:
  static constexpr size_t kMaxNames = 256 * 1024;  // in all known directories
  static constexpr size_t kMaxDirs = 4096;
  static constexpr std::chrono::seconds kFresh{1};
  static constexpr std::chrono::seconds kMaxAge{60};

  // `dir` was just made by this client: empty.
  void Made(InodeId dir);
  // This client added or removed `name` in `dir` (no effect on an unknown dir).
  void Added(InodeId dir, std::string_view name);
  void Removed(InodeId dir, std::string_view name);
  void Forget(InodeId dir);
  void ForgetAll();
  // A complete poll of other clients' changes ended now.
  void Heard();
  // True when `name` is surely not in `dir`.
  bool Missing(InodeId dir, std::string_view name);

  size_t dirs() const;

 private:
  struct NameHash {  // lets the sets be searched with a string_view
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  struct Dir {
    std::unordered_set<std::string, NameHash, std::equal_to<>> names;
    std::list<InodeId>::iterator lru;
    std::chrono::steady_clock::time_point made;
  };
  void ForgetLocked(InodeId dir);
  void Touch(Dir& d);

  mutable std::mutex mu_;  // guards dirs_, lru_, names_
  std::unordered_map<InodeId, Dir> dirs_;
  std::list<InodeId> lru_;  // most recently used first
  size_t names_ = 0;
  std::atomic<int64_t> heard_until_ns_{0};  // steady clock
};

}  // namespace t0fs::client
