// Client sessions: open, renew, close, expire. Closing a session releases its
// handles (freeing inodes unlinked while open) and forgets its replay slots.
// Also the leases several meta servers on one store share work by.
#include <fmt/format.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>

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

namespace t0fs::meta {

// A lease is the property "lease:<name>" holding "<expiry sec>.<nsec> <holder>".
Result<bool> PosixStore::AcquireLease(std::string_view name, std::string_view holder,
                                      Timespec now, std::chrono::milliseconds ttl) {
  if (name.empty() || holder.empty() || ttl.count() <= 0) {
    return Status(StatusCode::kInvalidArgument, "a lease needs a name, a holder and a duration");
  }
  const std::string key = fmt::format("lease:{}", name);
  bool taken = false;
  RETURN_IF_ERROR(Write([&](WriteTxn& txn) -> Status {
    taken = false;
    ASSIGN_OR_RETURN(std::optional<std::string> current, txn.GetProperty(key));
    if (current) {
      int64_t sec = 0;
      uint32_t nsec = 0;
      int used = 0;
      if (std::sscanf(current->c_str(), "%" SCNd64 ".%" SCNu32 " %n", &sec, &nsec, &used) >= 2 &&
          used > 0) {
        const std::string_view owner = std::string_view(*current).substr(used);
        const bool expired = sec < now.sec || (sec == now.sec && nsec <= now.nsec);
        if (owner != holder && !expired) return Status::Ok();
      }
    }
    const int64_t total_ns = static_cast<int64_t>(now.nsec) + ttl.count() % 1000 * 1000000;
    const Timespec until{now.sec + ttl.count() / 1000 + total_ns / 1000000000,
                         static_cast<uint32_t>(total_ns % 1000000000)};
    taken = true;
    return txn.PutProperty(key, fmt::format("{}.{:09} {}", until.sec, until.nsec, holder));
  }));
  return taken;
}

// Urgent marks: one property, "urgent", of `<chunk> <until sec>.<nsec>`
// lines (a few, while writers wait after a node loss; kMaxUrgent at most).
namespace {

constexpr std::string_view kUrgentKey = "urgent";

struct UrgentMark {
  ChunkId chunk;
  Timespec until;
};

bool Before(Timespec a, Timespec b) {
  return a.sec < b.sec || (a.sec == b.sec && a.nsec < b.nsec);
}

// The marks of `text` still live at `now` (a malformed line is dropped).
std::vector<UrgentMark> LiveMarks(const std::optional<std::string>& text, Timespec now) {
  std::vector<UrgentMark> marks;
  if (!text) return marks;
  for (std::string_view rest = *text; !rest.empty();) {
    const size_t eol = rest.find('\n');
    const std::string line(rest.substr(0, eol));
    rest = eol == std::string_view::npos ? std::string_view() : rest.substr(eol + 1);
    uint64_t chunk = 0;
    int64_t sec = 0;
    uint32_t nsec = 0;
    if (std::sscanf(line.c_str(), "%" SCNu64 " %" SCNd64 ".%" SCNu32, &chunk, &sec, &nsec) != 3)
      continue;
    const Timespec until{sec, nsec};
    if (Before(now, until)) marks.push_back({ChunkId(chunk), until});
  }
  return marks;
}

}  // namespace

Result<bool> PosixStore::MarkUrgent(ChunkId chunk, Timespec until, Timespec now, size_t max) {
  bool added = false;
  RETURN_IF_ERROR(Write([&](WriteTxn& txn) -> Status {
    added = false;
    ASSIGN_OR_RETURN(std::optional<std::string> text, txn.GetProperty(kUrgentKey));
    std::vector<UrgentMark> marks = LiveMarks(text, now);
    auto it = std::find_if(marks.begin(), marks.end(),
                           [&](const UrgentMark& m) { return m.chunk == chunk; });
    if (it != marks.end()) {
      if (Before(it->until, until)) it->until = until;  // extended, never shortened
    } else if (marks.size() >= max) {
      return Status(StatusCode::kBusy,
                    fmt::format("{} chunks are marked urgent already", marks.size()));
    } else {
      marks.push_back({chunk, until});
      added = true;
    }
    std::string out;
    for (const UrgentMark& m : marks)
      out += fmt::format("{} {}.{:09}\n", m.chunk.value(), m.until.sec, m.until.nsec);
    return txn.PutProperty(kUrgentKey, out);
  }));
  return added;
}

Result<std::vector<ChunkId>> PosixStore::UrgentChunks(Timespec now) {
  std::vector<ChunkId> chunks;
  RETURN_IF_ERROR(Read([&](ReadTxn& txn) -> Status {
    ASSIGN_OR_RETURN(std::optional<std::string> text, txn.GetProperty(kUrgentKey));
    chunks.clear();
    for (const UrgentMark& m : LiveMarks(text, now)) chunks.push_back(m.chunk);
    return Status::Ok();
  }));
  return chunks;
}

}  // namespace t0fs::meta
