#include "meta/change_feed.h"

#include <algorithm>
#include <random>

namespace t0fs::meta {
namespace {

uint64_t NewEpoch() {
  std::random_device rd;
  uint64_t e = 0;
  while (e == 0) e = (uint64_t(rd()) << 32) | rd();
  return e;
}

}  // namespace

ChangeFeed::ChangeFeed(size_t capacity) : epoch_(NewEpoch()), ring_(std::max<size_t>(capacity, 1)) {}

void ChangeFeed::Add(SessionId by, std::span<const Change> changes) {
  {
    std::lock_guard lock(mu_);
    for (const Change& c : changes) {
      Entry& e = ring_[next_ % ring_.size()];
      e.by = by;
      e.change = c;
      ++next_;
    }
  }
  waiting_.Wake(by.value());  // its own change is nothing new to a session
}

ChangeFeed::Page ChangeFeed::Since(SessionId asker, uint64_t epoch, uint64_t after, size_t max) const {
  if (max == 0 || max > kMaxPage) max = kMaxPage;
  Page page;
  page.epoch = epoch_;
  std::lock_guard lock(mu_);
  page.next = next_;
  if (epoch == 0) return page;  // a first ask starts from now
  const uint64_t oldest = next_ > ring_.size() ? next_ - ring_.size() : 1;
  if (epoch != epoch_ || after < oldest || after > next_) {
    page.complete = false;
    return page;
  }
  uint64_t n = after;
  for (; n < next_ && n - after < max; ++n) {
    const Entry& e = ring_[n % ring_.size()];
    if (asker.valid() && e.by == asker) continue;
    page.changes.push_back(e.change);
  }
  page.next = n;
  page.more = n < next_;
  return page;
}

}  // namespace t0fs::meta
