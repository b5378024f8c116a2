// OpenHandles: the meta handle of every open File, kept so that they can be
// registered again under a new session. Meta closes a session that was not
// renewed for a lease (this client was cut off, or stopped, that long) and
// with it the session's handles; without them meta would free a file that
// someone unlinks while it is still open here. When MetaClient replaces the
// session, Renew opens every File's inode again under the new session.
//
// - A file unlinked before the session expired was freed with it: its reopen
//   fails (kNotFound), which is logged with the inode; nothing else can be
//   done (as NFS's state after a lease expiry).
// - A File closed while its reopen is on the way: the new handle is released
//   when the reopen returns (Remove and Renew do not race a handle away).
//   A handle replaced by a reopen is released too (two sessions opened by
//   racing requests: the first one's handle would pin the inode otherwise).
// - Files opened while Renew runs carry the new session already.
//
// Thread safety: safe for concurrent use; no lock is held across `reopen`.
#pragma once

#include <cstdint>
#include <functional>
#include <mutex>
#include <unordered_map>

#include "common/ids.h"
#include "common/status.h"

namespace t0fs::client {

class OpenHandles {
 public:
  using Key = uint64_t;
  // Opens `ino` with `flags` (access mode only) under the current session.
  using Reopen = std::function<Result<HandleId>(InodeId ino, int flags)>;
  using Release = std::function<void(HandleId)>;

  // A File opened `ino` with `flags` and got `handle` under `session`.
  Key Add(InodeId ino, int flags, HandleId handle, SessionId session);
  // The File's handle now (the one to name in commits).
  HandleId Current(Key key) const;
  // The File closes: forgets it and returns the handle to release.
  HandleId Remove(Key key);
  // Registers every handle not of session `now` again with `reopen`;
  // returns how many were registered again. The handle each reopen
  // replaces, or the new one when its File closed meanwhile, goes to
  // `release`.
  size_t Renew(SessionId now, const Reopen& reopen, const Release& release);
  size_t size() const;

 private:
  struct Entry {
    InodeId ino;
    int flags;
    HandleId handle;
    SessionId session;
  };
  mutable std::mutex mu_;  // guards entries_, next_
  std::unordered_map<Key, Entry> entries_;
  Key next_ = 1;
};

}  // namespace t0fs::client
