// Link: a new hard link to an existing non-directory.
#include <fmt/format.h>

#include "meta/store/posix_store.h"
#include "meta/store/store_util.h"

namespace t0fs::meta {

Result<InodeAttr> PosixStore::Link(const OpToken& token, InodeId ino, InodeId new_parent,
                                   std::string_view new_name, Timespec now) {
  RETURN_IF_ERROR(internal::CheckName(new_name));
  InodeAttr result;
  auto body = [&](WriteTxn& txn, Outcome& out) -> Status {
    ASSIGN_OR_RETURN(InodeRow file, internal::LoadInode(txn, ino));
    if (internal::IsDir(file.attr.mode)) {
      return Status(StatusCode::kNotPermitted, fmt::format("hard link to directory {}", ino));
    }
    // An unlinked (but still open) file cannot get a name again.
    if (file.attr.nlink == 0) {
      return Status(StatusCode::kNotFound, fmt::format("inode {} unlinked", ino));
    }
    if (file.attr.nlink >= kMaxLinks) {
      return Status(StatusCode::kTooManyLinks,
                    fmt::format("inode {} has {} links", ino, file.attr.nlink));
    }
    ASSIGN_OR_RETURN(internal::DirAndEntry named, internal::LoadDirEntry(txn, new_parent, new_name));
    InodeRow& dir = named.dir;
    std::optional<DentryRow>& existing = named.entry;
    if (existing) return Status(StatusCode::kExists, fmt::format("{} in {}", new_name, new_parent));
    RETURN_IF_ERROR(internal::AddEntry(txn, dir, new_name, ino));
    internal::TouchDir(dir, now);
    RETURN_IF_ERROR(txn.PutInode(dir));
    file.attr.nlink += 1;
    file.attr.ctime = now;
    RETURN_IF_ERROR(txn.PutInode(file));
    result = file.attr;
    out.ino = ino;
    return Status::Ok();
  };
  auto replay = [&](ReadTxn& txn, const Outcome& out) -> Status {
    ASSIGN_OR_RETURN(InodeRow row, internal::LoadInode(txn, out.ino));
    result = std::move(row.attr);
    return Status::Ok();
  };
  RETURN_IF_ERROR(Mutate(token, body, replay, /*durable=*/false,
                         [&](ReadTxn& txn) { return txn.PrefetchEntry(new_parent, new_name); }));
  return result;
}

}  // namespace t0fs::meta
