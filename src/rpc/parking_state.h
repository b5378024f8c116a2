// The state of an rpc::Parking, shared by the handlers that park requests
// in it and the connections that wait (rpc/parking.h). Internal to rpc.
#pragma once

#include <asio.hpp>
#include <cstdint>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "rpc/parking.h"

namespace t0fs::rpc {

struct Parking::State {
  struct Waiter {
    asio::any_io_executor executor;  // the connection's: its timer is touched only there
    std::weak_ptr<asio::steady_timer> timer;
    uint64_t tag = 0;
  };

  // Registers `timer` to be cancelled by a wake; false (nothing registered)
  // when the generation moved on since the handler read `seen`.
  bool Add(asio::any_io_executor executor, const std::shared_ptr<asio::steady_timer>& timer,
           uint64_t tag, uint64_t seen, uint64_t* id);
  void Remove(uint64_t id);

  mutable std::mutex mu;  // guards everything below
  uint64_t generation = 0;
  uint64_t next_id = 0;
  std::unordered_map<uint64_t, Waiter> waiters;
};

}  // namespace t0fs::rpc
