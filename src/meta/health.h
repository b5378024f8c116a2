// NodeHealth: meta's view of which data nodes are alive, from heartbeats.
//
//   up       a heartbeat within suspect-after
//   suspect  none for suspect-after: still used (a GC pause, a busy disk)
//   down     none for node-timeout: not used for new data or reads;
//            after repair-grace its replicas are re-created elsewhere
//
// Draining is an administrative state kept in the store, shown alongside.
// Thread safety: safe for concurrent use.
#pragma once

#include <chrono>
#include <mutex>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "common/ids.h"

namespace t0fs::meta {

enum class Health { kUp, kSuspect, kDown };

class NodeHealth {
 public:
  using Clock = std::chrono::steady_clock;
  NodeHealth(Clock::duration suspect_after, Clock::duration down_after)
      : suspect_after_(suspect_after), down_after_(down_after) {}

  // Records a heartbeat. Returns true when the node comes back after being
  // down or unknown to this meta (its chunks need reconciling).
  bool Seen(NodeId node);
  // Marks a node seen `age` ago (used at start from the stored heartbeat).
  void SeenAgo(NodeId node, Clock::duration age);
  // A heartbeat another meta server stored `age` ago: recorded when it is
  // newer than the last one seen here. True when the node comes back after
  // being down or unknown here (as Seen).
  bool SeenElsewhere(NodeId node, Clock::duration age);
  Health Of(NodeId node) const;
  // How long the node has been silent (max if never seen).
  Clock::duration Silence(NodeId node) const;
  // Down, and silent for longer than `grace` while this meta was watching
  // (see WatchingSince): its replicas are to be re-created elsewhere.
  bool Lost(NodeId node, Clock::duration grace) const;
  // This meta watches heartbeats from `since` on: at start, and again after
  // it was itself stopped or cut off from its store. Silence before then
  // does not make a node lost (a meta stopped for five minutes finds every
  // node silent for five minutes; they are not lost).
  void WatchingSince(Clock::time_point since);
  static std::string Name(Health h);

 private:
  const Clock::duration suspect_after_, down_after_;
  mutable std::mutex mu_;  // guards last_seen_ and watching_since_
  std::unordered_map<NodeId, Clock::time_point> last_seen_;
  Clock::time_point watching_since_ = Clock::now();
};

}  // namespace t0fs::meta
