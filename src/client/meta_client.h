// MetaClient: libt0fs's connection to the meta service.
//
// - One session per Client, renewed in the background (lease/3). Renewal
//   also refreshes which data node is local (it may register after us).
// - Every call is retried on transport errors (meta restarting) until the
//   retry timeout, with backoff.
// - Mutating calls carry an OpToken (session, slot, seq) so a retry after a
//   lost reply is answered from meta's replay record instead of running
//   twice (a create retried after a meta crash does not fail with EEXIST).
//   A slot is held by one in-flight mutating call at a time.
// - If meta no longer knows the session (it expired), a new one is opened
//   and registered listeners re-open their handles (see SetSessionListener).
//
// Thread safety: safe for concurrent use.
#pragma once

#include <atomic>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "common/ids.h"
#include "rpc/channel.h"
#include "rpc/proto/meta.pb.h"
#include "t0fs/client.h"

namespace t0fs::client {

class MetaClient {
 public:
  MetaClient(const ClientOptions& options, std::string secret);
  ~MetaClient();

  // Opens the session (fails fast: a wrong secret or unreachable meta is
  // reported at once, not retried).
  Status Connect();
  void Close();

  // A read-only call of method M (rpc/methods.h), retried on transport errors.
  template <rpc::Method M>
  Status Call(const rpc::RequestOf<M>& req, rpc::ReplyOf<M>* rsp) {
    return Retry(M, [&] { return channel_.Call<M>(req, rsp); });
  }

  // A mutating call: fills req's token, retried with the same token.
  template <rpc::Method M>
  Status Mutate(rpc::RequestOf<M>& req, rpc::ReplyOf<M>* rsp) {
    Slot slot = AcquireSlot();
    pb::OpToken* token = req.mutable_token();
    token->set_slot(slot.index);
    token->set_seq(slot.seq);
    Status st = Retry(M, [&] {
      token->set_session(session().value());
      return channel_.Call<M>(req, rsp);
    });
    ReleaseSlot(slot);
    return st;
  }

  SessionId session() const;
  NodeId local_node() const;
  std::string local_socket() const;
  // The cluster's id (meta's, from the session).
  std::string cluster_id() const;
  // Called (from the renewal thread) after a new session replaced an expired one.
  void SetSessionListener(std::function<void()> listener);

  // From now on no call (of this client, data calls included) retries an
  // unreachable service past now + `limit`, whatever its retry timeout.
  void LimitRetries(Duration limit);
  // When a retry loop that started at `start` gives up.
  std::chrono::steady_clock::time_point RetryDeadline(std::chrono::steady_clock::time_point start) const;

 private:
  struct Slot {
    uint32_t index;
    uint64_t seq;
  };
  Status Retry(rpc::Method method, const std::function<Status()>& attempt);
  Status OpenSession(SessionId resume);
  Slot AcquireSlot();
  void ReleaseSlot(Slot slot);
  void RenewLoop();

  const ClientOptions options_;
  rpc::Channel channel_;

  mutable std::mutex mu_;  // guards the session fields, slots, stopping_
  SessionId session_;
  NodeId local_node_;
  std::string local_socket_;
  std::string cluster_id_;
  uint64_t lease_ms_ = 60000;
  std::vector<uint64_t> slot_seq_;   // last seq used per slot
  std::vector<uint32_t> free_slots_;
  std::function<void()> listener_;
  bool stopping_ = false;
  std::condition_variable cv_;
  std::thread renewer_;
  // LimitRetries: steady-clock nanoseconds after which retries stop (0: none).
  std::atomic<int64_t> retry_limit_ns_{0};
};

}  // namespace t0fs::client
