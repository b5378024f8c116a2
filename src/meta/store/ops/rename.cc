// Rename: rename(2) and renameat2(2) with RENAME_NOREPLACE / RENAME_EXCHANGE.
//
// Checks run in the order Linux applies them, so that a request breaking two
// rules gets the same errno as on a local file system: flags, lookups,
// NOREPLACE/EXCHANGE existence, same inode (no-op), moving a directory below
// itself, file type mismatch, non-empty target directory.
#include <fmt/format.h>

#include "meta/store/sqlite_store.h"
#include "meta/store/store_util.h"

namespace t0fs::meta {

using internal::IsDir;

Status SqliteStore::Rename(const OpToken& token, InodeId old_parent, std::string_view old_name,
                           InodeId new_parent, std::string_view new_name, uint32_t flags,
                           Timespec now) {
  constexpr uint32_t kKnown = RenameFlags::kNoReplace | RenameFlags::kExchange;
  if ((flags & ~kKnown) != 0 || flags == kKnown) {
    return Status(StatusCode::kInvalidArgument, fmt::format("rename flags {:#x}", flags));
  }
  RETURN_IF_ERROR(internal::CheckName(old_name));
  RETURN_IF_ERROR(internal::CheckName(new_name));
  const bool exchange = (flags & RenameFlags::kExchange) != 0;
  const bool noreplace = (flags & RenameFlags::kNoReplace) != 0;

  return Mutate(token, [&](Outcome&) -> Status {
    RETURN_IF_ERROR(LoadDir(old_parent).status());
    RETURN_IF_ERROR(LoadDir(new_parent).status());
    ASSIGN_OR_RETURN(auto src, FindDentry(old_parent, old_name));
    if (!src) return Status(StatusCode::kNotFound, fmt::format("{} in {}", old_name, old_parent));
    ASSIGN_OR_RETURN(auto dst, FindDentry(new_parent, new_name));
    if (exchange && !dst) {
      return Status(StatusCode::kNotFound, fmt::format("{} in {}", new_name, new_parent));
    }
    if (noreplace && dst) {
      return Status(StatusCode::kExists, fmt::format("{} in {}", new_name, new_parent));
    }
    // The same dentry, or two hard links of one inode: nothing to do.
    if (dst && dst->ino == src->ino) return Status::Ok();

    ASSIGN_OR_RETURN(InodeAttr src_attr, LoadAttr(src->ino));
    const bool src_dir = IsDir(src_attr.mode);
    InodeAttr dst_attr;
    if (dst) {
      ASSIGN_OR_RETURN(dst_attr, LoadAttr(dst->ino));
    }
    const bool dst_dir = dst && IsDir(dst_attr.mode);
    const bool moves = old_parent != new_parent;

    // A directory cannot move below itself; in an exchange each side moves.
    if (src_dir && moves) {
      ASSIGN_OR_RETURN(bool inside, IsWithin(new_parent, src->ino));
      if (inside)
        return Status(StatusCode::kInvalidArgument, "cannot move a directory below itself");
    }
    if (exchange && dst_dir && moves) {
      ASSIGN_OR_RETURN(bool inside, IsWithin(old_parent, dst->ino));
      if (inside)
        return Status(StatusCode::kInvalidArgument, "cannot move a directory below itself");
    }

    if (exchange) {
      // Directory link counts move with the directories.
      if (moves && src_dir != dst_dir) {
        int64_t delta = src_dir ? 1 : -1;
        ASSIGN_OR_RETURN(InodeAttr gaining, LoadAttr(src_dir ? new_parent : old_parent));
        if (gaining.nlink >= kMaxLinks) {
          return Status(StatusCode::kTooManyLinks, fmt::format("directory {}", gaining.ino));
        }
        RETURN_IF_ERROR(AddNlink(new_parent, delta));
        RETURN_IF_ERROR(AddNlink(old_parent, -delta));
      }
      RETURN_IF_ERROR(RepointDentry(old_parent, old_name, dst->ino));
      RETURN_IF_ERROR(RepointDentry(new_parent, new_name, src->ino));
      if (moves && src_dir) RETURN_IF_ERROR(SetParent(src->ino, new_parent));
      if (moves && dst_dir) RETURN_IF_ERROR(SetParent(dst->ino, old_parent));
      RETURN_IF_ERROR(TouchCtime(src->ino, now));
      RETURN_IF_ERROR(TouchCtime(dst->ino, now));
      RETURN_IF_ERROR(TouchDir(old_parent, now));
      return TouchDir(new_parent, now);
    }

    if (dst) {
      if (src_dir && !dst_dir) {
        return Status(StatusCode::kNotDirectory, fmt::format("{} is not a directory", new_name));
      }
      if (!src_dir && dst_dir) {
        return Status(StatusCode::kIsDirectory, fmt::format("{} is a directory", new_name));
      }
      if (dst_dir) {
        ASSIGN_OR_RETURN(auto child,
                         db_.QueryInt("SELECT 1 FROM dentries WHERE parent = ? LIMIT 1", dst->ino));
        if (child) return Status(StatusCode::kNotEmpty, fmt::format("directory {}", new_name));
      }
    } else if (src_dir && moves) {
      ASSIGN_OR_RETURN(InodeAttr np, LoadAttr(new_parent));
      if (np.nlink >= kMaxLinks) {
        return Status(StatusCode::kTooManyLinks, fmt::format("directory {}", new_parent));
      }
    }

    // The source dentry goes; the target dentry (kept, or new) names the source inode.
    RETURN_IF_ERROR(DeleteDentry(old_parent, old_name));
    if (dst) {
      RETURN_IF_ERROR(RepointDentry(new_parent, new_name, src->ino));
    } else {
      RETURN_IF_ERROR(InsertDentry(new_parent, new_name, src->ino));
    }
    if (src_dir && moves) {
      RETURN_IF_ERROR(AddNlink(old_parent, -1));
      RETURN_IF_ERROR(AddNlink(new_parent, 1));
      RETURN_IF_ERROR(SetParent(src->ino, new_parent));
    }
    RETURN_IF_ERROR(TouchCtime(src->ino, now));
    RETURN_IF_ERROR(TouchDir(old_parent, now));
    if (moves) RETURN_IF_ERROR(TouchDir(new_parent, now));
    if (!dst) return Status::Ok();
    // The replaced target loses its name, as in Unlink/Rmdir.
    if (dst_dir) return RemoveDir(dst->ino, new_parent, now);
    return DropLink(dst->ino, now);
  });
}

}  // namespace t0fs::meta
