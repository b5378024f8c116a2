// DataClient's view of which data services answer (data_client.h): when a
// channel began to fail (retry deadlines), the suspect nodes and their
// background probe.
#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "client/data_client.h"
#include "common/logging.h"

namespace t0fs::client {

std::chrono::steady_clock::time_point DataClient::FailingSince(
    rpc::Channel* ch, std::chrono::steady_clock::time_point now) {
  std::lock_guard lock(failing_mu_);
  auto [it, added] = failing_since_.emplace(ch, now);
  if (!added && now < it->second) it->second = now;
  failing_.store(failing_since_.size());
  return it->second;
}

void DataClient::Answered(rpc::Channel* ch) {
  if (failing_.load() == 0) return;
  std::lock_guard lock(failing_mu_);
  failing_since_.erase(ch);
  failing_.store(failing_since_.size());
}

void DataClient::Unreachable(NodeId node) {
  std::lock_guard lock(suspect_mu_);
  if (probe_stop_ || suspect_.count(node) != 0) return;  // probed on its schedule already
  suspect_[node] = SuspectNode{std::chrono::steady_clock::now() + kFirstProbe, kFirstProbe};
  suspects_.store(suspect_.size());
  LOG_WARN(
      "data node {} does not answer: its replicas are read last and not waited for while another "
      "answers; checking it in the background",
      node);
  if (!prober_.joinable()) prober_ = std::thread([this] { ProbeLoop(); });
  suspect_cv_.notify_all();
}

void DataClient::Reachable(NodeId node) {
  if (suspects_.load() == 0) return;  // the common case: no lock
  std::lock_guard lock(suspect_mu_);
  auto it = suspect_.find(node);
  if (it != suspect_.end()) ForgetSuspect(it, /*answered=*/true);
}

void DataClient::ForgetSuspect(std::unordered_map<NodeId, SuspectNode>::iterator it,
                               bool answered) {
  if (answered) LOG_INFO("data node {} answers again", it->first);
  suspect_.erase(it);
  suspects_.store(suspect_.size());
}

Status DataClient::NotSuspect(NodeId node) {
  if (!Suspect(node)) return Status::Ok();
  return Status(
      StatusCode::kRpcConnect,
      fmt::format("data node {} did not answer a moment ago (checked again in the background)",
                  node));
}

bool DataClient::Suspect(NodeId node) {
  if (suspects_.load() == 0) return false;
  std::lock_guard lock(suspect_mu_);
  return suspect_.count(node) != 0;
}

void DataClient::ProbeLoop() {
  std::unique_lock lock(suspect_mu_);
  while (!probe_stop_) {
    if (suspect_.empty()) {
      suspect_cv_.wait(lock, [&] { return probe_stop_ || !suspect_.empty(); });
      continue;
    }
    auto due = std::chrono::steady_clock::time_point::max();
    for (const auto& [node, s] : suspect_) due = std::min(due, s.next_probe);
    if (suspect_cv_.wait_until(lock, due, [&] { return probe_stop_; })) return;
    const auto now = std::chrono::steady_clock::now();
    std::vector<NodeId> probe;
    for (const auto& [node, s] : suspect_) {
      if (s.next_probe <= now) probe.push_back(node);
    }
    for (NodeId node : probe) {
      lock.unlock();
      const Status answered = Probe(node);
      lock.lock();
      if (probe_stop_) return;
      auto it = suspect_.find(node);
      if (it == suspect_.end()) continue;  // a request reached it meanwhile
      if (answered.ok() ||
          answered.code() == StatusCode::kMetaNoNode) {  // (or it left the cluster)
        ForgetSuspect(it, answered.ok());
        continue;
      }
      LOG_DEBUG("data node {} still does not answer: {}", node, answered.ToString());
      it->second.interval =
          std::min<std::chrono::steady_clock::duration>(it->second.interval * 2, kMaxProbe);
      it->second.next_probe = std::chrono::steady_clock::now() + it->second.interval;
    }
  }
}

Status DataClient::Probe(NodeId node) {
  const bool local = node == meta_.local_node() && !meta_.local_socket().empty();
  ASSIGN_OR_RETURN(rpc::Channel * ch, local ? LocalChannel() : ChannelFor(node));
  ch->Reset();  // a new connection: its handshake is the question
  ASSIGN_OR_RETURN(std::unique_ptr<rpc::Connection> conn, ch->Acquire());
  ch->Release(std::move(conn));
  Answered(ch);
  return Status::Ok();
}

}  // namespace t0fs::client
