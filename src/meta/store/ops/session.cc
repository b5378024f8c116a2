// Client sessions: open, renew, close, expire. Closing a session releases its
// handles (freeing inodes unlinked while open) and forgets its replay slots.
#include <fmt/format.h>

#include "meta/store/sqlite_store.h"
#include "meta/store/store_util.h"

namespace t0fs::meta {

Result<SessionId> SqliteStore::OpenSession(std::string_view client_name, std::string_view host_id,
                                           Timespec now) {
  SessionId session;
  RETURN_IF_ERROR(Mutate(OpToken{}, [&](Outcome&) -> Status {
    ASSIGN_OR_RETURN(auto q, db_.Query("INSERT INTO sessions (client_name, host_id, renewed_s, "
                                       "renewed_ns) VALUES (?, ?, ?, ?) RETURNING id",
                                       client_name, host_id, now.sec, now.nsec));
    ASSIGN_OR_RETURN(bool row, q->Step());
    if (!row) return Status(StatusCode::kInternal, "insert session returned no id");
    session = SessionId(q->U64(0));
    return q->Run();
  }));
  return session;
}

Status SqliteStore::RenewSession(SessionId session, Timespec now) {
  return Mutate(OpToken{}, [&](Outcome&) -> Status {
    RETURN_IF_ERROR(db_.Run("UPDATE sessions SET renewed_s = ?, renewed_ns = ? WHERE id = ?",
                            now.sec, now.nsec, session));
    if (db_.Changes() == 0) {
      return Status(StatusCode::kMetaNoSession, fmt::format("session {}", session));
    }
    return Status::Ok();
  });
}

Status SqliteStore::CloseSession(SessionId session) {
  return Mutate(OpToken{}, [&](Outcome&) -> Status {
    RETURN_IF_ERROR(RequireSession(session));
    return CloseSessionLocked(session);
  });
}

Result<size_t> SqliteStore::ExpireSessions(Timespec cutoff) {
  size_t closed = 0;
  RETURN_IF_ERROR(Mutate(OpToken{}, [&](Outcome&) -> Status {
    std::vector<SessionId> expired;
    {
      ASSIGN_OR_RETURN(auto q, db_.Query("SELECT id FROM sessions WHERE renewed_s < ? OR "
                                         "(renewed_s = ? AND renewed_ns < ?) ORDER BY id",
                                         cutoff.sec, cutoff.sec, cutoff.nsec));
      for (;;) {
        ASSIGN_OR_RETURN(bool row, q->Step());
        if (!row) break;
        expired.push_back(SessionId(q->U64(0)));
      }
    }
    for (SessionId session : expired) RETURN_IF_ERROR(CloseSessionLocked(session));
    closed = expired.size();
    return Status::Ok();
  }));
  return closed;
}

Status SqliteStore::CloseSessionLocked(SessionId session) {
  std::vector<InodeId> inodes;
  {
    ASSIGN_OR_RETURN(auto q,
                     db_.Query("SELECT DISTINCT ino FROM handles WHERE session = ?", session));
    for (;;) {
      ASSIGN_OR_RETURN(bool row, q->Step());
      if (!row) break;
      inodes.push_back(InodeId(q->U64(0)));
    }
  }
  RETURN_IF_ERROR(db_.Run("DELETE FROM handles WHERE session = ?", session));
  for (InodeId ino : inodes) RETURN_IF_ERROR(FreeIfOrphan(ino));
  RETURN_IF_ERROR(db_.Run("DELETE FROM replay WHERE session = ?", session));
  return db_.Run("DELETE FROM sessions WHERE id = ?", session);
}

}  // namespace t0fs::meta
