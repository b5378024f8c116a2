// What a daemon tells its service manager (systemd units of Type=notify,
// deploy/systemd/): READY=1 once it serves, STOPPING=1 when it begins to stop,
// a STATUS= line, and watchdog pings while it is alive. Outside systemd
// ($NOTIFY_SOCKET unset) every call does nothing, so daemons call these
// unconditionally.
//
// Thread safety: every function may be called from any thread.
#pragma once

#include <functional>
#include <memory>
#include <string_view>

namespace t0fs {

void NotifyReady(std::string_view status);
void NotifyStopping(std::string_view status);
void NotifyStatus(std::string_view status);

// Pings the watchdog at half of the unit's WatchdogSec= (none without one)
// from a thread of its own, as long as `alive()` (when given) returns true:
// a daemon whose check fails, or that hangs, is restarted by systemd.
// Destruction stops the pings.
class Watchdog {
 public:
  explicit Watchdog(std::function<bool()> alive = {});
  ~Watchdog();
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

  bool enabled() const;  // the service manager asked for pings

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace t0fs
