// Open and Release: the open handles that keep unlinked inodes alive.
#include <fcntl.h>
#include <fmt/format.h>

#include "meta/store/sqlite_store.h"
#include "meta/store/store_util.h"

namespace t0fs::meta {

Result<OpenResult> SqliteStore::Open(const OpToken& token, SessionId session, InodeId ino,
                                     uint32_t flags, Timespec now) {
  OpenResult result;
  auto body = [&](Outcome& out) -> Status {
    RETURN_IF_ERROR(RequireSession(session));
    ASSIGN_OR_RETURN(InodeAttr attr, LoadAttr(ino));
    const uint32_t access = flags & O_ACCMODE;
    const bool writes = access == O_WRONLY || access == O_RDWR;
    if (internal::IsDir(attr.mode) && writes) {
      return Status(StatusCode::kIsDirectory, fmt::format("open directory {} for writing", ino));
    }
    if ((flags & O_TRUNC) != 0 && writes && internal::IsReg(attr.mode)) {
      RETURN_IF_ERROR(Truncate(attr, 0, now));
    }
    ASSIGN_OR_RETURN(auto q, db_.Query("INSERT INTO handles (session, ino, flags) VALUES (?, ?, ?) "
                                       "RETURNING id",
                                       session, ino, flags));
    ASSIGN_OR_RETURN(bool row, q->Step());
    if (!row) return Status(StatusCode::kInternal, "insert handle returned no id");
    result.handle = HandleId(q->U64(0));
    RETURN_IF_ERROR(q->Run());
    ASSIGN_OR_RETURN(result.attr, LoadAttr(ino));
    out.ino = ino;
    out.handle = result.handle;
    return Status::Ok();
  };
  auto replay = [&](const Outcome& out) -> Status {
    result.handle = out.handle;
    ASSIGN_OR_RETURN(result.attr, LoadAttr(out.ino));
    return Status::Ok();
  };
  RETURN_IF_ERROR(Mutate(token, body, replay));
  return result;
}

Status SqliteStore::Release(const OpToken& token, HandleId handle) {
  return Mutate(token, [&](Outcome&) -> Status {
    ASSIGN_OR_RETURN(auto ino, db_.QueryInt("SELECT ino FROM handles WHERE id = ?", handle));
    if (!ino) return Status(StatusCode::kBadHandle, fmt::format("handle {}", handle));
    RETURN_IF_ERROR(db_.Run("DELETE FROM handles WHERE id = ?", handle));
    InodeId id(static_cast<uint64_t>(*ino));
    // The last writer is gone: chunks allocated ahead past the end of the
    // file and never written leave the layout.
    ASSIGN_OR_RETURN(auto writers, db_.QueryInt("SELECT 1 FROM handles WHERE ino = ? AND (flags & 3) != 0 LIMIT 1", id));
    if (!writers) RETURN_IF_ERROR(DropUnwrittenTail(id));
    return FreeIfOrphan(id);
  });
}

}  // namespace t0fs::meta
