// Parking: requests that wait for something to happen (a long poll) without
// holding a server thread.
//
// A handler with nothing to answer yet calls Call::Park and returns Ok: the
// connection then waits, on its own executor, until Wake (from any thread)
// or the call's park_until passes, and runs the handler again with the same
// request; the handler answers or parks again. While a request waits, its
// connection serves nothing else (requests on a connection are in order):
// a long poll goes on a connection of its own. A parked request's peer that
// goes away is noticed when the wait ends.
//
// No wake is lost between the handler's look and its parking: the handler
// reads generation() before it looks and passes it to Park; a request whose
// generation moved on meanwhile runs again at once.
//
// Thread safety: safe for concurrent use. A Parking may be destroyed before
// the requests parked in it (they hold its state).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

namespace t0fs::rpc {

class Parking {
 public:
  struct State;  // rpc/parking_state.h (the server's side)

  Parking();
  ~Parking();
  Parking(const Parking&) = delete;
  Parking& operator=(const Parking&) = delete;

  uint64_t generation() const;
  // Runs again every parked request but those parked with tag `except`
  // (0: none is left out), e.g. not the session whose own change it is.
  void Wake(uint64_t except = 0);
  // Requests parked now.
  size_t parked() const;

  const std::shared_ptr<State>& state() const { return state_; }

 private:
  std::shared_ptr<State> state_;
};

}  // namespace t0fs::rpc
