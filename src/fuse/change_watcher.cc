#include "fuse/change_watcher.h"

#include <sys/uio.h>

#include <cerrno>
#include <cstring>

#include "common/logging.h"
#include "fuse/protocol/abi.h"

namespace t0fs::fuse {
namespace {

// Replies keep the long cache time this many intervals (and a poll's wait)
// after a complete poll answered: a late poll (a busy host, a server gone
// silent) ends it rather than let it run on. A poll waits as long at most.
constexpr int kWatchedIntervals = 4;

}  // namespace

ChangeWatcher::ChangeWatcher(client::Client& client, int device, Duration interval,
                             CacheTimeouts& timeouts, CachedOpens& opens)
    : client_(client), device_(device), interval_(interval), timeouts_(timeouts), opens_(opens) {
  thread_ = std::thread([this] { Loop(); });
}

ChangeWatcher::~ChangeWatcher() { Stop(); }

void ChangeWatcher::Stop() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  client_.InterruptPollChanges();  // a long poll in progress returns
  if (thread_.joinable()) thread_.join();
  timeouts_.WatchedUntil({});
}

void ChangeWatcher::Loop() {
  std::vector<client::NamespaceChange> previous;  // sent once; sent again this round
  bool heard = false;                             // the last poll was complete (for the log)
  for (;;) {
    // A long poll: a meta server answers at the next change of another
    // client (or after `wait`); not while a notification waits to be sent
    // again one interval on.
    const auto wait =
        previous.empty() ? kWatchedIntervals * interval_.value : std::chrono::milliseconds(0);
    const auto began = std::chrono::steady_clock::now();
    auto batch = client_.PollChanges(wait);
    const auto answered = std::chrono::steady_clock::now();
    if (!batch.ok() && batch.status().code() == StatusCode::kNotSupported) {
      LOG_INFO("fuse: {}: names and attributes are cached for the short times", batch.status().ToString());
      return;
    }
    std::vector<client::NamespaceChange> changes;
    if (batch.ok()) changes = std::move(batch->changes);
    if (!changes.empty() || !previous.empty()) {
      timeouts_.Invalidating();
      Notify(changes);
      Notify(previous);
    }
    // One interval after changes (their notifications go again then; a
    // stream of changes is taken in batches); at once after the poll that
    // sent them again; otherwise one interval after the last poll began (a
    // server that does not wait).
    auto pause = std::chrono::steady_clock::duration(interval_.value);
    if (changes.empty()) pause = wait.count() == 0 ? pause.zero() : pause - (answered - began);
    previous = std::move(changes);
    const bool complete = batch.ok() && batch->complete;
    // Until the next poll should have answered: after the interval below
    // and a wait, with a few intervals to spare.
    timeouts_.WatchedUntil(complete ? answered + wait + kWatchedIntervals * interval_.value
                                    : std::chrono::steady_clock::time_point{});
    if (complete != heard) {
      if (complete) {
        LOG_INFO("fuse: hearing other clients' changes: names and attributes cached up to the cache timeout");
      } else {
        LOG_WARN("fuse: other clients' changes may be missed ({}): short cache times until they are heard again",
                 batch.ok() ? "a meta server restarted or this mount fell behind" : batch.status().ToString());
      }
      heard = complete;
    }
    std::unique_lock lock(mu_);
    if (cv_.wait_for(lock, pause, [&] { return stop_; })) return;
  }
}

void ChangeWatcher::Notify(const std::vector<client::NamespaceChange>& changes) {
  for (const client::NamespaceChange& c : changes) {
    if (!c.name.empty()) InvalEntry(c.parent, c.name);
    if (c.ino.valid()) opens_.NotifyUnlessOpen(c.ino, [&] { InvalInode(c.ino, /*pages=*/true); });
  }
}

void ChangeWatcher::InvalEntry(InodeId parent, std::string_view name) {
  abi::NotifyInvalEntryOut out{};
  out.parent = parent.value();
  out.namelen = static_cast<uint32_t>(name.size());
  char nul = 0;
  abi::OutHeader h{};
  h.len = static_cast<uint32_t>(sizeof(h) + sizeof(out) + name.size() + 1);
  h.error = static_cast<int32_t>(abi::NotifyCode::kInvalEntry);
  iovec iov[] = {{&h, sizeof(h)}, {&out, sizeof(out)}, {const_cast<char*>(name.data()), name.size()}, {&nul, 1}};
  Write(iov, 4);
}

void ChangeWatcher::InvalInode(InodeId ino, bool pages) {
  if (OpContext::InvalInode(device_, ino, pages ? 0 : -1)) {
    invalidations_.fetch_add(1, std::memory_order_relaxed);
  }
}

void ChangeWatcher::Write(const iovec* iov, int count) {
  ssize_t n = ::writev(device_, iov, count);
  if (n >= 0) {
    invalidations_.fetch_add(1, std::memory_order_relaxed);
  } else if (errno != ENOENT && errno != ENOTDIR) {  // ENOENT: the kernel did not cache it
    LOG_DEBUG("fuse: notification to the kernel: {}", std::strerror(errno));
  }
}

}  // namespace t0fs::fuse
