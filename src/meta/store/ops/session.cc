// Client sessions: open, renew, close, expire. Closing a session releases its
// handles (freeing inodes unlinked while open) and forgets its replay slots.
#include <fmt/format.h>

#include "meta/store/posix_store.h"
#include "meta/store/store_util.h"

namespace t0fs::meta {

Result<SessionId> PosixStore::OpenSession(std::string_view client_name, std::string_view host_id,
                                          Timespec now) {
  SessionId session;
  RETURN_IF_ERROR(Write([&](WriteTxn& txn) -> Status {
    ASSIGN_OR_RETURN(uint64_t id, txn.NextId(Counter::kSession));
    session = SessionId(id);
    return txn.PutSession(
        SessionRecord{session, std::string(client_name), std::string(host_id), now});
  }));
  return session;
}

Status PosixStore::RenewSession(SessionId session, Timespec now) {
  return Write([&](WriteTxn& txn) -> Status {
    ASSIGN_OR_RETURN(std::optional<SessionRecord> found, txn.GetSession(session));
    if (!found) return Status(StatusCode::kMetaNoSession, fmt::format("session {}", session));
    found->last_renewed = now;
    return txn.PutSession(*found);
  });
}

Status PosixStore::CloseSession(SessionId session) {
  return Write([&](WriteTxn& txn) -> Status {
    RETURN_IF_ERROR(internal::RequireSession(txn, session));
    return internal::CloseSession(txn, session);
  });
}

Result<size_t> PosixStore::ExpireSessions(Timespec cutoff) {
  size_t closed = 0;
  RETURN_IF_ERROR(Write([&](WriteTxn& txn) -> Status {
    closed = 0;
    ASSIGN_OR_RETURN(std::vector<SessionRecord> sessions, txn.ListSessions());
    for (const SessionRecord& s : sessions) {
      if (s.last_renewed.sec > cutoff.sec ||
          (s.last_renewed.sec == cutoff.sec && s.last_renewed.nsec >= cutoff.nsec)) {
        continue;
      }
      RETURN_IF_ERROR(internal::CloseSession(txn, s.session));
      ++closed;
    }
    return Status::Ok();
  }));
  return closed;
}

}  // namespace t0fs::meta
