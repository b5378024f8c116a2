// Link: a new hard link to an existing non-directory.
#include <fmt/format.h>

#include "meta/store/sqlite_store.h"
#include "meta/store/store_util.h"

namespace t0fs::meta {

Result<InodeAttr> SqliteStore::Link(const OpToken& token, InodeId ino, InodeId new_parent,
                                    std::string_view new_name, Timespec now) {
  RETURN_IF_ERROR(internal::CheckName(new_name));
  InodeAttr result;
  auto body = [&](Outcome& out) -> Status {
    ASSIGN_OR_RETURN(InodeAttr attr, LoadAttr(ino));
    if (internal::IsDir(attr.mode)) {
      return Status(StatusCode::kNotPermitted, fmt::format("hard link to directory {}", ino));
    }
    // An unlinked (but still open) file cannot get a name again.
    if (attr.nlink == 0)
      return Status(StatusCode::kNotFound, fmt::format("inode {} unlinked", ino));
    if (attr.nlink >= kMaxLinks) {
      return Status(StatusCode::kTooManyLinks,
                    fmt::format("inode {} has {} links", ino, attr.nlink));
    }
    RETURN_IF_ERROR(LoadDir(new_parent).status());
    ASSIGN_OR_RETURN(auto existing, FindDentry(new_parent, new_name));
    if (existing) return Status(StatusCode::kExists, fmt::format("{} in {}", new_name, new_parent));
    RETURN_IF_ERROR(InsertDentry(new_parent, new_name, ino));
    RETURN_IF_ERROR(
        db_.Run("UPDATE inodes SET nlink = nlink + 1, ctime_s = ?, ctime_ns = ? "
                "WHERE ino = ?",
                now.sec, now.nsec, ino));
    RETURN_IF_ERROR(TouchDir(new_parent, now));
    ASSIGN_OR_RETURN(result, LoadAttr(ino));
    out.ino = ino;
    return Status::Ok();
  };
  auto replay = [&](const Outcome& out) -> Status {
    ASSIGN_OR_RETURN(result, LoadAttr(out.ino));
    return Status::Ok();
  };
  RETURN_IF_ERROR(Mutate(token, body, replay));
  return result;
}

}  // namespace t0fs::meta
