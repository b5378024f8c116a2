// GetAttr, Lookup, ReadLink.
#include <fmt/format.h>

#include "meta/store/sqlite_store.h"
#include "meta/store/store_util.h"

namespace t0fs::meta {

Result<InodeAttr> SqliteStore::GetAttr(InodeId ino) {
  InodeAttr attr;
  RETURN_IF_ERROR(Read([&]() -> Status {
    ASSIGN_OR_RETURN(attr, LoadAttr(ino));
    return Status::Ok();
  }));
  return attr;
}

Result<InodeAttr> SqliteStore::Lookup(InodeId parent, std::string_view name) {
  // "." and ".." are answered too (NFS-style exports look up "..").
  if (name != "." && name != "..") RETURN_IF_ERROR(internal::CheckName(name));
  InodeAttr attr;
  RETURN_IF_ERROR(Read([&]() -> Status {
    ASSIGN_OR_RETURN(InodeAttr dir, LoadDir(parent));
    if (name == ".") {
      attr = dir;
      return Status::Ok();
    }
    if (name == "..") {
      ASSIGN_OR_RETURN(InodeId up, ParentOf(parent));
      ASSIGN_OR_RETURN(attr, LoadAttr(up));
      return Status::Ok();
    }
    ASSIGN_OR_RETURN(auto entry, FindDentry(parent, name));
    if (!entry) return Status(StatusCode::kNotFound, fmt::format("{} in {}", name, parent));
    ASSIGN_OR_RETURN(attr, LoadAttr(entry->ino));
    return Status::Ok();
  }));
  return attr;
}

Result<std::string> SqliteStore::ReadLink(InodeId ino) {
  std::string target;
  RETURN_IF_ERROR(Read([&]() -> Status {
    ASSIGN_OR_RETURN(auto q, db_.Query("SELECT mode, target FROM inodes WHERE ino = ?", ino));
    ASSIGN_OR_RETURN(bool row, q->Step());
    if (!row) return Status(StatusCode::kNotFound, fmt::format("inode {}", ino));
    if (!S_ISLNK(q->U32(0))) {
      return Status(StatusCode::kInvalidArgument, fmt::format("inode {} is not a symlink", ino));
    }
    target = q->Bytes(1);
    return Status::Ok();
  }));
  return target;
}

}  // namespace t0fs::meta
