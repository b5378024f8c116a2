#include "rpc/parking.h"

#include "rpc/parking_state.h"

namespace t0fs::rpc {

Parking::Parking() : state_(std::make_shared<State>()) {}

Parking::~Parking() = default;

uint64_t Parking::generation() const {
  std::lock_guard lock(state_->mu);
  return state_->generation;
}

void Parking::Wake(uint64_t except) {
  std::lock_guard lock(state_->mu);
  ++state_->generation;
  for (auto it = state_->waiters.begin(); it != state_->waiters.end();) {
    if (except != 0 && it->second.tag == except) {
      ++it;
      continue;
    }
    asio::post(it->second.executor, [timer = it->second.timer] {
      if (auto t = timer.lock()) t->cancel();
    });
    it = state_->waiters.erase(it);
  }
}

size_t Parking::parked() const {
  std::lock_guard lock(state_->mu);
  return state_->waiters.size();
}

bool Parking::State::Add(asio::any_io_executor executor,
                         const std::shared_ptr<asio::steady_timer>& timer, uint64_t tag,
                         uint64_t seen, uint64_t* id) {
  std::lock_guard lock(mu);
  if (generation != seen) return false;
  *id = ++next_id;
  waiters.emplace(*id, Waiter{std::move(executor), timer, tag});
  return true;
}

void Parking::State::Remove(uint64_t id) {
  std::lock_guard lock(mu);
  waiters.erase(id);
}

}  // namespace t0fs::rpc
