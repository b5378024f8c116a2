#include "meta/health.h"

#include <algorithm>

namespace t0fs::meta {

bool NodeHealth::Seen(NodeId node) {
  std::lock_guard lock(mu_);
  auto now = Clock::now();
  auto it = last_seen_.find(node);
  bool returned = it == last_seen_.end() || now - it->second >= down_after_;
  last_seen_[node] = now;
  return returned;
}

void NodeHealth::SeenAgo(NodeId node, Clock::duration age) {
  std::lock_guard lock(mu_);
  last_seen_[node] = Clock::now() - age;
}

bool NodeHealth::SeenElsewhere(NodeId node, Clock::duration age) {
  std::lock_guard lock(mu_);
  const auto now = Clock::now();
  const auto seen = now - age;
  auto it = last_seen_.find(node);
  if (it != last_seen_.end() && it->second >= seen) return false;
  const bool returned = it == last_seen_.end() || now - it->second >= down_after_;
  last_seen_[node] = seen;
  return returned && age < down_after_;
}

Health NodeHealth::Of(NodeId node) const {
  Clock::duration silence = Silence(node);
  if (silence < suspect_after_) return Health::kUp;
  if (silence < down_after_) return Health::kSuspect;
  return Health::kDown;
}

NodeHealth::Clock::duration NodeHealth::Silence(NodeId node) const {
  std::lock_guard lock(mu_);
  auto it = last_seen_.find(node);
  if (it == last_seen_.end()) return Clock::duration::max();
  return Clock::now() - it->second;
}

bool NodeHealth::Lost(NodeId node, Clock::duration grace) const {
  std::lock_guard lock(mu_);
  auto it = last_seen_.find(node);
  const auto now = Clock::now();
  if (it != last_seen_.end() && now - it->second < down_after_) return false;  // not down
  const Clock::time_point from =
      it == last_seen_.end() ? watching_since_ : std::max(it->second, watching_since_);
  return now - from > grace;
}

void NodeHealth::WatchingSince(Clock::time_point since) {
  std::lock_guard lock(mu_);
  watching_since_ = since;
}

std::string NodeHealth::Name(Health h) {
  switch (h) {
    case Health::kUp: return "up";
    case Health::kSuspect: return "suspect";
    case Health::kDown: return "down";
  }
  return "?";
}

}  // namespace t0fs::meta
