// Small pieces shared by the SqliteStore operations (private to the store).
#pragma once

#include <sys/stat.h>

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "meta/store/meta_store.h"
#include "meta/store/sqlite/sqlite_db.h"
#include "meta/store/sqlite/sqlite_rows.h"

namespace t0fs::meta::internal {

// Sizes and offsets are stored as SQLite INTEGER (int64).
inline constexpr uint64_t kMaxFileSize = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());

// The inode columns AttrFromRow reads, in order; prefix with a table alias
// where a query joins.
//   ino, mode, uid, gid, size, nlink, rdev, atime_s, atime_ns, mtime_s,
//   mtime_ns, ctime_s, ctime_ns, chunk_size, generation, replicas,
//   placement, placement_nodes
inline constexpr int kAttrColumnCount = 18;
InodeAttr AttrFromRow(const sqlite::Statement& row, int first_col);

// placement_nodes is stored as "1,4,7" (the SQLite engine's codec).
using sqlite::FormatNodeList;
using sqlite::ParseNodeList;

// A name for a new or existing directory entry: not empty, ".", "..", no '/'
// or NUL (kInvalidArgument), at most kMaxNameLength bytes (kNameTooLong).
Status CheckName(std::string_view name);

inline bool IsDir(uint32_t mode) {
  return S_ISDIR(mode);
}
inline bool IsReg(uint32_t mode) {
  return S_ISREG(mode);
}

inline bool IsDatabaseError(const Status& st) {
  return st.code() == StatusCode::kMetaDatabase || st.code() == StatusCode::kInternal;
}

}  // namespace t0fs::meta::internal
