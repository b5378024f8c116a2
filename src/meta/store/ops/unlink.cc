// Unlink and Rmdir.
#include <fmt/format.h>

#include "meta/store/posix_store.h"
#include "meta/store/store_util.h"

namespace t0fs::meta {

Status PosixStore::Unlink(const OpToken& token, InodeId parent, std::string_view name, Timespec now,
                          InodeAttr* dir_after, InodeId* unlinked) {
  RETURN_IF_ERROR(internal::CheckName(name));
  auto body = [&](WriteTxn& txn, Outcome&) -> Status {
    ASSIGN_OR_RETURN(internal::DirAndEntry named, internal::LoadDirEntry(txn, parent, name));
    InodeRow& dir = named.dir;
    std::optional<DentryRow>& entry = named.entry;
    if (!entry) return Status(StatusCode::kNotFound, fmt::format("{} in {}", name, parent));
    ASSIGN_OR_RETURN(InodeRow file, internal::LoadInode(txn, entry->ino));
    if (internal::IsDir(file.attr.mode)) {
      return Status(StatusCode::kIsDirectory, fmt::format("{} is a directory", name));
    }
    RETURN_IF_ERROR(txn.DeleteDentry(parent, name));
    internal::TouchDir(dir, now);
    RETURN_IF_ERROR(txn.PutInode(dir));
    if (dir_after != nullptr) *dir_after = dir.attr;
    if (unlinked != nullptr) *unlinked = file.attr.ino;
    return internal::DropLink(txn, std::move(file), now);
  };
  return Mutate(token, body, nullptr, /*durable=*/false, [&](ReadTxn& txn) {
    RETURN_IF_ERROR(txn.PrefetchEntry(parent, name));
    return txn.PrefetchRemoval(parent, name, /*directory=*/false);
  });
}

Status PosixStore::Rmdir(const OpToken& token, InodeId parent, std::string_view name,
                         Timespec now, InodeAttr* dir_after) {
  RETURN_IF_ERROR(internal::CheckName(name));
  auto body = [&](WriteTxn& txn, Outcome&) -> Status {
    ASSIGN_OR_RETURN(internal::DirAndEntry named, internal::LoadDirEntry(txn, parent, name));
    InodeRow& dir = named.dir;
    std::optional<DentryRow>& entry = named.entry;
    if (!entry) return Status(StatusCode::kNotFound, fmt::format("{} in {}", name, parent));
    if (entry->ino == kRootInode) return Status(StatusCode::kBusy, "cannot remove the root");
    ASSIGN_OR_RETURN(InodeRow child, internal::LoadInode(txn, entry->ino));
    if (!internal::IsDir(child.attr.mode)) {
      return Status(StatusCode::kNotDirectory, fmt::format("{} is not a directory", name));
    }
    ASSIGN_OR_RETURN(bool occupied, internal::HasEntries(txn, child.attr.ino));
    if (occupied) return Status(StatusCode::kNotEmpty, fmt::format("directory {}", name));
    RETURN_IF_ERROR(txn.DeleteDentry(parent, name));
    internal::TouchDir(dir, now);
    RETURN_IF_ERROR(txn.PutInode(dir));
    RETURN_IF_ERROR(internal::RemoveDir(txn, child.attr.ino, parent, now));
    if (dir_after == nullptr) return Status::Ok();
    ASSIGN_OR_RETURN(InodeRow after, internal::LoadInode(txn, parent));  // RemoveDir took a link
    *dir_after = after.attr;
    return Status::Ok();
  };
  return Mutate(token, body, nullptr, /*durable=*/false, [&](ReadTxn& txn) {
    RETURN_IF_ERROR(txn.PrefetchEntry(parent, name));
    return txn.PrefetchRemoval(parent, name, /*directory=*/true);
  });
}

}  // namespace t0fs::meta
