// GetAttr, Lookup, ReadLink.
#include <fmt/format.h>

#include "meta/store/posix_store.h"
#include "meta/store/store_util.h"

namespace t0fs::meta {

Result<InodeAttr> PosixStore::GetAttr(InodeId ino) {
  InodeAttr attr;
  RETURN_IF_ERROR(Read([&](ReadTxn& txn) -> Status {
    ASSIGN_OR_RETURN(InodeRow row, internal::LoadInode(txn, ino));
    attr = std::move(row.attr);
    return Status::Ok();
  }));
  return attr;
}

Result<InodeAttr> PosixStore::Lookup(InodeId parent, std::string_view name) {
  // "." and ".." are answered too (NFS-style exports look up "..").
  if (name != "." && name != "..") RETURN_IF_ERROR(internal::CheckName(name));
  InodeAttr attr;
  RETURN_IF_ERROR(Read([&](ReadTxn& txn) -> Status {
    if (name != "." && name != "..") RETURN_IF_ERROR(txn.PrefetchEntry(parent, name));
    ASSIGN_OR_RETURN(InodeRow dir, internal::LoadDir(txn, parent));
    InodeId found = dir.attr.ino;
    if (name == "..") {
      ASSIGN_OR_RETURN(found, internal::ParentOf(txn, parent));
    } else if (name != ".") {
      ASSIGN_OR_RETURN(std::optional<DentryRow> entry, txn.GetDentry(parent, name));
      if (!entry) return Status(StatusCode::kNotFound, fmt::format("{} in {}", name, parent));
      found = entry->ino;
    }
    if (found == dir.attr.ino) {
      attr = std::move(dir.attr);
      return Status::Ok();
    }
    ASSIGN_OR_RETURN(InodeRow row, internal::LoadInode(txn, found));
    attr = std::move(row.attr);
    return Status::Ok();
  }));
  return attr;
}

Result<std::string> PosixStore::ReadLink(InodeId ino) {
  std::string target;
  RETURN_IF_ERROR(Read([&](ReadTxn& txn) -> Status {
    ASSIGN_OR_RETURN(InodeRow row, internal::LoadInode(txn, ino));
    if (!S_ISLNK(row.attr.mode)) {
      return Status(StatusCode::kInvalidArgument, fmt::format("inode {} is not a symlink", ino));
    }
    target = std::move(row.target);
    return Status::Ok();
  }));
  return target;
}

}  // namespace t0fs::meta
