#include "client/open_handles.h"

#include <fcntl.h>

#include <vector>

#include "common/logging.h"

namespace t0fs::client {

OpenHandles::Key OpenHandles::Add(InodeId ino, int flags, HandleId handle, SessionId session) {
  std::lock_guard lock(mu_);
  const Key key = next_++;
  entries_.emplace(key, Entry{ino, flags & O_ACCMODE, handle, session});
  return key;
}

HandleId OpenHandles::Current(Key key) const {
  std::lock_guard lock(mu_);
  auto it = entries_.find(key);
  return it == entries_.end() ? HandleId() : it->second.handle;
}

HandleId OpenHandles::Remove(Key key) {
  std::lock_guard lock(mu_);
  auto it = entries_.find(key);
  if (it == entries_.end()) return HandleId();
  const HandleId handle = it->second.handle;
  entries_.erase(it);
  return handle;
}

size_t OpenHandles::size() const {
  std::lock_guard lock(mu_);
  return entries_.size();
}

size_t OpenHandles::Renew(SessionId now, const Reopen& reopen, const Release& release) {
  struct Pending {
    Key key;
    InodeId ino;
    int flags;
  };
  std::vector<Pending> pending;
  {
    std::lock_guard lock(mu_);
    for (auto& [key, e] : entries_) {
      if (e.session == now) continue;
      e.session = now;  // taken: a second Renew for the same session leaves it
      pending.push_back({key, e.ino, e.flags});
    }
  }
  size_t renewed = 0;
  for (const Pending& p : pending) {
    Result<HandleId> handle = reopen(p.ino, p.flags);
    if (!handle.ok()) {
      LOG_ERROR(
          "inode {} was open when meta expired this client's session; opening it again under the "
          "new session failed: {}{}",
          p.ino, handle.status().ToString(),
          handle.status().code() == StatusCode::kNotFound
              ? " (it was unlinked, and meta freed it with the expired session: its data is gone)"
              : " (an unlink elsewhere may free it while it is open here)");
      continue;
    }
    // The handle given up: the new one when the File closed meanwhile, else
    // the one it replaces (of the expired session: meta knows it no more; or
    // of a session a racing Renew opened in between, which holds it still).
    HandleId given_up = *handle;
    {
      std::lock_guard lock(mu_);
      auto it = entries_.find(p.key);
      if (it != entries_.end()) std::swap(given_up, it->second.handle);
    }
    release(given_up);
    ++renewed;
  }
  return renewed;
}

}  // namespace t0fs::client
