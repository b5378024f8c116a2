// Unlink and Rmdir.
#include <fmt/format.h>

#include "meta/store/sqlite_store.h"
#include "meta/store/store_util.h"

namespace t0fs::meta {

Status SqliteStore::Unlink(const OpToken& token, InodeId parent, std::string_view name,
                           Timespec now) {
  RETURN_IF_ERROR(internal::CheckName(name));
  return Mutate(token, [&](Outcome&) -> Status {
    RETURN_IF_ERROR(LoadDir(parent).status());
    ASSIGN_OR_RETURN(auto entry, FindDentry(parent, name));
    if (!entry) return Status(StatusCode::kNotFound, fmt::format("{} in {}", name, parent));
    ASSIGN_OR_RETURN(InodeAttr attr, LoadAttr(entry->ino));
    if (internal::IsDir(attr.mode)) {
      return Status(StatusCode::kIsDirectory, fmt::format("{} is a directory", name));
    }
    RETURN_IF_ERROR(DeleteDentry(parent, name));
    RETURN_IF_ERROR(TouchDir(parent, now));
    return DropLink(attr.ino, now);
  });
}

Status SqliteStore::Rmdir(const OpToken& token, InodeId parent, std::string_view name,
                          Timespec now) {
  RETURN_IF_ERROR(internal::CheckName(name));
  return Mutate(token, [&](Outcome&) -> Status {
    RETURN_IF_ERROR(LoadDir(parent).status());
    ASSIGN_OR_RETURN(auto entry, FindDentry(parent, name));
    if (!entry) return Status(StatusCode::kNotFound, fmt::format("{} in {}", name, parent));
    if (entry->ino == kRootInode) return Status(StatusCode::kBusy, "cannot remove the root");
    ASSIGN_OR_RETURN(InodeAttr attr, LoadAttr(entry->ino));
    if (!internal::IsDir(attr.mode)) {
      return Status(StatusCode::kNotDirectory, fmt::format("{} is not a directory", name));
    }
    ASSIGN_OR_RETURN(auto child,
                     db_.QueryInt("SELECT 1 FROM dentries WHERE parent = ? LIMIT 1", attr.ino));
    if (child) return Status(StatusCode::kNotEmpty, fmt::format("directory {}", name));
    RETURN_IF_ERROR(DeleteDentry(parent, name));
    RETURN_IF_ERROR(TouchDir(parent, now));
    return RemoveDir(attr.ino, parent, now);
  });
}

}  // namespace t0fs::meta
