// Rename: rename(2) and renameat2(2) with RENAME_NOREPLACE / RENAME_EXCHANGE.
//
// Checks run in the order Linux applies them, so that a request breaking two
// rules gets the same errno as on a local file system: flags, lookups,
// NOREPLACE/EXCHANGE existence, same inode (no-op), moving a directory below
// itself, file type mismatch, non-empty target directory.
#include <fmt/format.h>

#include "meta/store/posix_store.h"
#include "meta/store/store_util.h"

namespace t0fs::meta {

using internal::IsDir;

namespace {

Status AddNlink(WriteTxn& txn, InodeId ino, int64_t delta) {
  return internal::UpdateInode(txn, ino, [&](InodeRow& row) {
    row.attr.nlink = static_cast<uint32_t>(static_cast<int64_t>(row.attr.nlink) + delta);
  });
}

Status TouchCtime(WriteTxn& txn, InodeId ino, Timespec now) {
  return internal::UpdateInode(txn, ino, [&](InodeRow& row) { row.attr.ctime = now; });
}

Status TouchDir(WriteTxn& txn, InodeId dir, Timespec now) {
  return internal::UpdateInode(txn, dir, [&](InodeRow& row) { internal::TouchDir(row, now); });
}

// Records `parent` as the directory containing directory `dir`.
Status SetParent(WriteTxn& txn, InodeId dir, InodeId parent) {
  return internal::UpdateInode(txn, dir, [&](InodeRow& row) { row.parent = parent; });
}

// Points the existing entry `entry` at `ino`; it keeps its place.
Status Repoint(WriteTxn& txn, DentryRow entry, InodeId ino) {
  entry.ino = ino;
  return txn.PutDentry(entry);
}

// Loads `dir` and fails with kTooManyLinks when it cannot take one more
// subdirectory.
Status CheckRoomForSubdir(WriteTxn& txn, InodeId dir) {
  ASSIGN_OR_RETURN(InodeRow row, internal::LoadInode(txn, dir));
  if (row.attr.nlink >= kMaxLinks) {
    return Status(StatusCode::kTooManyLinks, fmt::format("directory {}", dir));
  }
  return Status::Ok();
}

}  // namespace

Status PosixStore::Rename(const OpToken& token, InodeId old_parent, std::string_view old_name,
                          InodeId new_parent, std::string_view new_name, uint32_t flags,
                          Timespec now, std::vector<InodeId>* changed) {
  constexpr uint32_t kKnown = RenameFlags::kNoReplace | RenameFlags::kExchange;
  if ((flags & ~kKnown) != 0 || flags == kKnown) {
    return Status(StatusCode::kInvalidArgument, fmt::format("rename flags {:#x}", flags));
  }
  RETURN_IF_ERROR(internal::CheckName(old_name));
  RETURN_IF_ERROR(internal::CheckName(new_name));
  const bool exchange = (flags & RenameFlags::kExchange) != 0;
  const bool noreplace = (flags & RenameFlags::kNoReplace) != 0;

  auto body = [&](WriteTxn& txn, Outcome&) -> Status {
    RETURN_IF_ERROR(txn.PrefetchEntry(old_parent, old_name));
    RETURN_IF_ERROR(internal::LoadDir(txn, old_parent).status());
    RETURN_IF_ERROR(internal::LoadDir(txn, new_parent).status());
    ASSIGN_OR_RETURN(std::optional<DentryRow> src, txn.GetDentry(old_parent, old_name));
    if (!src) return Status(StatusCode::kNotFound, fmt::format("{} in {}", old_name, old_parent));
    ASSIGN_OR_RETURN(std::optional<DentryRow> dst, txn.GetDentry(new_parent, new_name));
    if (exchange && !dst) {
      return Status(StatusCode::kNotFound, fmt::format("{} in {}", new_name, new_parent));
    }
    if (noreplace && dst) {
      return Status(StatusCode::kExists, fmt::format("{} in {}", new_name, new_parent));
    }
    // The same dentry, or two hard links of one inode: nothing to do.
    if (dst && dst->ino == src->ino) return Status::Ok();
    if (changed != nullptr) {  // a retried transaction starts again
      changed->assign({src->ino});
      if (dst) changed->push_back(dst->ino);
    }

    ASSIGN_OR_RETURN(InodeRow src_row, internal::LoadInode(txn, src->ino));
    const bool src_dir = IsDir(src_row.attr.mode);
    bool dst_dir = false;
    if (dst) {
      ASSIGN_OR_RETURN(InodeRow dst_row, internal::LoadInode(txn, dst->ino));
      dst_dir = IsDir(dst_row.attr.mode);
    }
    const bool moves = old_parent != new_parent;

    // A directory cannot move below itself; in an exchange each side moves.
    if (src_dir && moves) {
      ASSIGN_OR_RETURN(bool inside, internal::IsWithin(txn, new_parent, src->ino));
      if (inside) {
        return Status(StatusCode::kInvalidArgument, "cannot move a directory below itself");
      }
    }
    if (exchange && dst_dir && moves) {
      ASSIGN_OR_RETURN(bool inside, internal::IsWithin(txn, old_parent, dst->ino));
      if (inside) {
        return Status(StatusCode::kInvalidArgument, "cannot move a directory below itself");
      }
    }

    if (exchange) {
      // Directory link counts move with the directories.
      if (moves && src_dir != dst_dir) {
        int64_t delta = src_dir ? 1 : -1;
        RETURN_IF_ERROR(CheckRoomForSubdir(txn, src_dir ? new_parent : old_parent));
        RETURN_IF_ERROR(AddNlink(txn, new_parent, delta));
        RETURN_IF_ERROR(AddNlink(txn, old_parent, -delta));
      }
      RETURN_IF_ERROR(Repoint(txn, *src, dst->ino));
      RETURN_IF_ERROR(Repoint(txn, *dst, src->ino));
      if (moves && src_dir) RETURN_IF_ERROR(SetParent(txn, src->ino, new_parent));
      if (moves && dst_dir) RETURN_IF_ERROR(SetParent(txn, dst->ino, old_parent));
      RETURN_IF_ERROR(TouchCtime(txn, src->ino, now));
      RETURN_IF_ERROR(TouchCtime(txn, dst->ino, now));
      RETURN_IF_ERROR(TouchDir(txn, old_parent, now));
      return TouchDir(txn, new_parent, now);
    }

    if (dst) {
      if (src_dir && !dst_dir) {
        return Status(StatusCode::kNotDirectory, fmt::format("{} is not a directory", new_name));
      }
      if (!src_dir && dst_dir) {
        return Status(StatusCode::kIsDirectory, fmt::format("{} is a directory", new_name));
      }
      if (dst_dir) {
        ASSIGN_OR_RETURN(bool occupied, internal::HasEntries(txn, dst->ino));
        if (occupied) return Status(StatusCode::kNotEmpty, fmt::format("directory {}", new_name));
      }
    } else if (src_dir && moves) {
      RETURN_IF_ERROR(CheckRoomForSubdir(txn, new_parent));
    }

    // The source dentry goes; the target dentry (kept, or new) names the source inode.
    RETURN_IF_ERROR(txn.DeleteDentry(old_parent, old_name));
    if (dst) {
      RETURN_IF_ERROR(Repoint(txn, *dst, src->ino));
    } else {
      ASSIGN_OR_RETURN(InodeRow dir, internal::LoadInode(txn, new_parent));
      RETURN_IF_ERROR(internal::AddEntry(txn, dir, new_name, src->ino));
      RETURN_IF_ERROR(txn.PutInode(dir));
    }
    if (src_dir && moves) {
      RETURN_IF_ERROR(AddNlink(txn, old_parent, -1));
      RETURN_IF_ERROR(AddNlink(txn, new_parent, 1));
      RETURN_IF_ERROR(SetParent(txn, src->ino, new_parent));
    }
    RETURN_IF_ERROR(TouchCtime(txn, src->ino, now));
    RETURN_IF_ERROR(TouchDir(txn, old_parent, now));
    if (moves) RETURN_IF_ERROR(TouchDir(txn, new_parent, now));
    if (!dst) return Status::Ok();
    // The replaced target loses its name, as in Unlink/Rmdir.
    if (dst_dir) return internal::RemoveDir(txn, dst->ino, new_parent, now);
    ASSIGN_OR_RETURN(InodeRow replaced, internal::LoadInode(txn, dst->ino));
    return internal::DropLink(txn, std::move(replaced), now);
  };
  // Both names and both directories (one, when they are the same).
  auto prefetch = [&](ReadTxn& txn) -> Status {
    RETURN_IF_ERROR(txn.PrefetchEntry(old_parent, old_name));
    return txn.PrefetchEntry(new_parent, new_name);
  };
  return Mutate(token, body, nullptr, /*durable=*/false, prefetch);
}

}  // namespace t0fs::meta
