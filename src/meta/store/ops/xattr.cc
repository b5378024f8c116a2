// GetXattr, ListXattr, SetXattr, RemoveXattr. Names and values are bytes.
#include <fmt/format.h>

#include "meta/store/posix_store.h"
#include "meta/store/store_util.h"

namespace t0fs::meta {
namespace {

// As setxattr(2): an empty or over-long name is ERANGE.
Status CheckXattrName(std::string_view name) {
  if (name.empty() || name.size() > kMaxXattrNameLength) {
    return Status(StatusCode::kRange, fmt::format("xattr name of {} bytes", name.size()));
  }
  if (name.find('\0') != std::string_view::npos) {
    return Status(StatusCode::kInvalidArgument, "xattr name contains NUL");
  }
  return Status::Ok();
}

}  // namespace

Result<std::string> PosixStore::GetXattr(InodeId ino, std::string_view name) {
  RETURN_IF_ERROR(CheckXattrName(name));
  std::string value;
  RETURN_IF_ERROR(Read([&](ReadTxn& txn) -> Status {
    RETURN_IF_ERROR(internal::LoadInode(txn, ino).status());
    ASSIGN_OR_RETURN(std::optional<std::string> found, txn.GetXattr(ino, name));
    if (!found) return Status(StatusCode::kNoData, fmt::format("xattr {} of inode {}", name, ino));
    value = std::move(*found);
    return Status::Ok();
  }));
  return value;
}

Result<std::vector<std::string>> PosixStore::ListXattr(InodeId ino) {
  std::vector<std::string> names;
  RETURN_IF_ERROR(Read([&](ReadTxn& txn) -> Status {
    RETURN_IF_ERROR(internal::LoadInode(txn, ino).status());
    ASSIGN_OR_RETURN(names, txn.ListXattrNames(ino));
    return Status::Ok();
  }));
  return names;
}

Status PosixStore::SetXattr(const OpToken& token, InodeId ino, std::string_view name,
                            std::string_view value, uint32_t flags, Timespec now) {
  RETURN_IF_ERROR(CheckXattrName(name));
  if (value.size() > kMaxXattrValueLength) {
    return Status(StatusCode::kTooBig, fmt::format("xattr value of {} bytes", value.size()));
  }
  if ((flags & ~(XattrFlags::kCreate | XattrFlags::kReplace)) != 0) {
    return Status(StatusCode::kInvalidArgument, fmt::format("xattr flags {:#x}", flags));
  }
  return Mutate(token, [&](WriteTxn& txn, Outcome&) -> Status {
    ASSIGN_OR_RETURN(InodeRow row, internal::LoadInode(txn, ino));
    ASSIGN_OR_RETURN(std::optional<std::string> existing, txn.GetXattr(ino, name));
    if (existing && (flags & XattrFlags::kCreate) != 0) {
      return Status(StatusCode::kExists, fmt::format("xattr {}", name));
    }
    if (!existing && (flags & XattrFlags::kReplace) != 0) {
      return Status(StatusCode::kNoData, fmt::format("xattr {}", name));
    }
    RETURN_IF_ERROR(txn.PutXattr(ino, name, value));
    row.attr.ctime = now;
    return txn.PutInode(row);
  });
}

Status PosixStore::RemoveXattr(const OpToken& token, InodeId ino, std::string_view name,
                               Timespec now) {
  RETURN_IF_ERROR(CheckXattrName(name));
  return Mutate(token, [&](WriteTxn& txn, Outcome&) -> Status {
    ASSIGN_OR_RETURN(InodeRow row, internal::LoadInode(txn, ino));
    ASSIGN_OR_RETURN(std::optional<std::string> existing, txn.GetXattr(ino, name));
    if (!existing) return Status(StatusCode::kNoData, fmt::format("xattr {}", name));
    RETURN_IF_ERROR(txn.DeleteXattr(ino, name));
    row.attr.ctime = now;
    return txn.PutInode(row);
  });
}

}  // namespace t0fs::meta
