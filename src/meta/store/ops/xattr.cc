// GetXattr, ListXattr, SetXattr, RemoveXattr. Names and values are bytes.
#include <fmt/format.h>

#include "meta/store/sqlite_store.h"
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

Result<std::string> SqliteStore::GetXattr(InodeId ino, std::string_view name) {
  RETURN_IF_ERROR(CheckXattrName(name));
  std::string value;
  RETURN_IF_ERROR(Read([&]() -> Status {
    RETURN_IF_ERROR(LoadAttr(ino).status());
    ASSIGN_OR_RETURN(auto q, db_.Query("SELECT value FROM xattrs WHERE ino = ? AND name = ?", ino,
                                       sqlite::Blob{name}));
    ASSIGN_OR_RETURN(bool row, q->Step());
    if (!row) return Status(StatusCode::kNoData, fmt::format("xattr {} of inode {}", name, ino));
    value = q->Bytes(0);
    return Status::Ok();
  }));
  return value;
}

Result<std::vector<std::string>> SqliteStore::ListXattr(InodeId ino) {
  std::vector<std::string> names;
  RETURN_IF_ERROR(Read([&]() -> Status {
    RETURN_IF_ERROR(LoadAttr(ino).status());
    ASSIGN_OR_RETURN(auto q, db_.Query("SELECT name FROM xattrs WHERE ino = ? ORDER BY name", ino));
    for (;;) {
      ASSIGN_OR_RETURN(bool row, q->Step());
      if (!row) return Status::Ok();
      names.push_back(q->Bytes(0));
    }
  }));
  return names;
}

Status SqliteStore::SetXattr(const OpToken& token, InodeId ino, std::string_view name,
                             std::string_view value, uint32_t flags, Timespec now) {
  RETURN_IF_ERROR(CheckXattrName(name));
  if (value.size() > kMaxXattrValueLength) {
    return Status(StatusCode::kTooBig, fmt::format("xattr value of {} bytes", value.size()));
  }
  if ((flags & ~(XattrFlags::kCreate | XattrFlags::kReplace)) != 0) {
    return Status(StatusCode::kInvalidArgument, fmt::format("xattr flags {:#x}", flags));
  }
  return Mutate(token, [&](Outcome&) -> Status {
    RETURN_IF_ERROR(LoadAttr(ino).status());
    ASSIGN_OR_RETURN(auto existing, db_.QueryInt("SELECT 1 FROM xattrs WHERE ino = ? AND name = ?",
                                                 ino, sqlite::Blob{name}));
    if (existing && (flags & XattrFlags::kCreate) != 0) {
      return Status(StatusCode::kExists, fmt::format("xattr {}", name));
    }
    if (!existing && (flags & XattrFlags::kReplace) != 0) {
      return Status(StatusCode::kNoData, fmt::format("xattr {}", name));
    }
    RETURN_IF_ERROR(
        db_.Run("INSERT INTO xattrs (ino, name, value) VALUES (?, ?, ?) "
                "ON CONFLICT (ino, name) DO UPDATE SET value = excluded.value",
                ino, sqlite::Blob{name}, sqlite::Blob{value}));
    return TouchCtime(ino, now);
  });
}

Status SqliteStore::RemoveXattr(const OpToken& token, InodeId ino, std::string_view name,
                                Timespec now) {
  RETURN_IF_ERROR(CheckXattrName(name));
  return Mutate(token, [&](Outcome&) -> Status {
    RETURN_IF_ERROR(LoadAttr(ino).status());
    RETURN_IF_ERROR(
        db_.Run("DELETE FROM xattrs WHERE ino = ? AND name = ?", ino, sqlite::Blob{name}));
    if (db_.Changes() == 0) return Status(StatusCode::kNoData, fmt::format("xattr {}", name));
    return TouchCtime(ino, now);
  });
}

}  // namespace t0fs::meta
