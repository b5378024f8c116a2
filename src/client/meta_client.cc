#include "client/meta_client.h"

#include <fmt/format.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>

#include "common/cancel.h"
#include "common/logging.h"
#include "rpc/proto/meta.pb.h"
#include "rpc/server.h"

namespace t0fs::client {
namespace {

rpc::Channel MakeChannel(const ClientOptions& options, std::string secret) {
  // Several meta servers ("a:7700,b:7700") over one store: each request
  // goes to the next in turn (they keep nothing of a client between
  // requests); one that fails is left out a while, and the retries below go
  // to the others.
  auto eps = rpc::Endpoint::ParseList(options.meta);
  rpc::ClientOptions copts;
  copts.secret = std::move(secret);
  copts.role = "client";
  copts.io_timeout = options.rpc_timeout;
  // With another server to go to, a request without a reply after
  // kHedgeAfter goes to another as well (rpc::ClientOptions::hedge_after):
  // a hung server then costs a request that long, not the rpc timeout. A
  // request run by both is safe (op tokens): one that ran there already is
  // answered from its replay record, or waits for its rows. No reply from
  // either within kOtherServerAfter: the request fails in transport and
  // Retry sends it again.
  if (eps.ok() && eps->size() > 1) {
    copts.hedge_after.value = MetaClient::kHedgeAfter;
    copts.io_timeout.value =
        std::min<std::chrono::milliseconds>(copts.io_timeout.value, MetaClient::kOtherServerAfter);
  }
  copts.spread = true;
  return rpc::Channel(eps.ok() ? *eps : std::vector<rpc::Endpoint>{}, copts);
}

}  // namespace

MetaClient::MetaClient(const ClientOptions& options, std::string secret)
    : options_(options), channel_(MakeChannel(options, secret)) {
  auto eps = rpc::Endpoint::ParseList(options.meta);
  if (!eps.ok()) return;
  rpc::ClientOptions copts;
  copts.secret = std::move(secret);
  copts.role = "client";
  copts.io_timeout = Duration{std::min<std::chrono::milliseconds>(options.rpc_timeout.value, kChangesTimeout)};
  copts.connect_timeout = copts.io_timeout;
  changes_interrupt_ = UniqueFd(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  for (const rpc::Endpoint& ep : *eps) {
    feeds_.emplace_back().channel = std::make_unique<rpc::Channel>(ep, copts);
  }
}

MetaClient::~MetaClient() { Close(); }

Status MetaClient::Connect() {
  RETURN_IF_ERROR(rpc::Endpoint::ParseList(options_.meta).status());
  // Each meta server gets a try: one that does not answer is left out by
  // the channel, and the next try goes to another.
  Status opened;
  for (size_t i = 0; i < channel_.endpoint_count(); ++i) {
    opened = OpenSession(SessionId());
    if (!rpc::IsTransportError(opened.code())) break;
  }
  RETURN_IF_ERROR(opened);
  renewer_ = std::thread([this] { RenewLoop(); });
  releaser_ = std::thread([this] { ReleaseLoop(); });
  return Status::Ok();
}

void MetaClient::Close() {
  {
    std::lock_guard lock(mu_);
    if (stopping_) return;
    stopping_ = true;
  }
  {
    std::lock_guard lock(release_mu_);
    release_stop_ = true;
  }
  release_cv_.notify_all();
  if (releaser_.joinable()) releaser_.join();  // after sending what is queued
  cv_.notify_all();
  if (renewer_.joinable()) renewer_.join();
  SessionId s = session();
  if (s.valid()) {
    pb::SessionReq req;
    req.set_session(s.value());
    pb::Empty rsp;
    (void)channel_.Call<rpc::Method::kCloseSession>(req, &rsp);  // best effort: the lease expires otherwise
  }
}

namespace {
// Closes wait this long for others to join their batch, or until it is full.
// Nobody waits for a release (the close has returned), and each batch is a
// write transaction in meta: at 3,000 closes/s a batch holds ~60 closes
// rather than ~6 at 2 ms (meta CPU per create/remove -12 %, median of 3).
constexpr auto kReleaseLinger = std::chrono::milliseconds(20);
constexpr size_t kReleaseBatch = 256;
}  // namespace

void MetaClient::ReleaseLater(HandleId handle) {
  {
    std::lock_guard lock(release_mu_);
    if (!release_stop_ && releaser_.joinable()) {
      releases_.push_back(handle);
      if (releases_.size() == 1 || releases_.size() == kReleaseBatch) release_cv_.notify_all();
      return;
    }
  }
  Status st = Release(handle);  // not connected, or closing
  if (!st.ok()) LOG_WARN("release of handle {}: {}", handle, st.ToString());
}

void MetaClient::ReportReplicaLater(const ReplicaInfo& replica, ReplicaProblem problem) {
  std::lock_guard lock(release_mu_);
  if (release_stop_ || !releaser_.joinable() || later_reports_.size() >= kMaxLaterReports) return;
  later_reports_.emplace_back(replica, problem);
  release_cv_.notify_all();
}

void MetaClient::ReleaseLoop() {
  std::unique_lock lock(release_mu_);
  for (;;) {
    release_cv_.wait(
        lock, [&] { return release_stop_ || !releases_.empty() || !later_reports_.empty(); });
    if (release_stop_) later_reports_.clear();  // hints: not worth a wait at close
    if (!later_reports_.empty()) {
      std::vector<std::pair<ReplicaInfo, ReplicaProblem>> reports;
      reports.swap(later_reports_);
      lock.unlock();
      for (const auto& [replica, problem] : reports) {
        Status st = ReportReplica(replica, problem, Status::Ok());
        if (!st.ok()) LOG_DEBUG("report on chunk {}: {}", replica.chunk, st.ToString());
      }
      lock.lock();
      continue;
    }
    if (releases_.empty()) return;  // stopping, and nothing left to send
    if (!release_stop_ && releases_.size() < kReleaseBatch) {
      release_cv_.wait_for(lock, kReleaseLinger,
                           [&] { return release_stop_ || releases_.size() >= kReleaseBatch; });
    }
    const size_t n = std::min(releases_.size(), kReleaseBatch);
    std::vector<HandleId> batch(releases_.begin(), releases_.begin() + static_cast<ptrdiff_t>(n));
    releases_.erase(releases_.begin(), releases_.begin() + static_cast<ptrdiff_t>(n));
    lock.unlock();
    Status st = ReleaseBatch(batch);
    lock.lock();
    if (st.ok() || st.code() == StatusCode::kInvalidArgument || release_stop_) {
      if (!st.ok())
        LOG_WARN("release of {} handle(s) from {}: {}", batch.size(), batch.front(), st.ToString());
      release_backoff_ = std::chrono::milliseconds(0);
      continue;
    }
    // Sent again after a while (the handles first, in their order).
    release_backoff_ = std::min<std::chrono::milliseconds>(
        std::max<std::chrono::milliseconds>(release_backoff_ * 2, std::chrono::seconds(1)),
        kReleaseBackoffMax);
    LOG_WARN("release of {} handle(s) from {}: {}; trying again in {} s", batch.size(),
             batch.front(), st.ToString(), release_backoff_.count() / 1000);
    releases_.insert(releases_.begin(), batch.begin(), batch.end());
    release_cv_.wait_for(lock, release_backoff_, [&] { return release_stop_; });
  }
}

Status MetaClient::OpenSession(SessionId resume) {
  pb::OpenSessionReq req;
  req.set_client_name(options_.name.empty() ? fmt::format("libt0fs pid {}", ::getpid()) : options_.name);
  req.set_host_id(rpc::LocalHostId());
  req.set_node_hint(options_.node_id);
  req.set_resume(resume.value());
  pb::OpenSessionRsp rsp;
  RETURN_IF_ERROR(channel_.Call<rpc::Method::kOpenSession>(req, &rsp));
  std::lock_guard lock(mu_);
  session_ = SessionId(rsp.session());
  local_node_ = NodeId(rsp.local_node());
  local_socket_ = rsp.local_socket();
  cluster_id_ = rsp.cluster_id();
  lease_ms_ = std::max<uint64_t>(rsp.lease_ms(), 1000);
  return Status::Ok();
}

SessionId MetaClient::session() const {
  std::lock_guard lock(mu_);
  return session_;
}

NodeId MetaClient::local_node() const {
  std::lock_guard lock(mu_);
  return local_node_;
}

std::string MetaClient::cluster_id() const {
  std::lock_guard lock(mu_);
  return cluster_id_;
}

std::string MetaClient::local_socket() const {
  std::lock_guard lock(mu_);
  return local_socket_;
}

void MetaClient::SetSessionListener(std::function<void()> listener) {
  std::lock_guard lock(mu_);
  listener_ = std::move(listener);
}

MetaClient::Slot MetaClient::AcquireSlot() {
  std::lock_guard lock(mu_);
  uint32_t index;
  if (!free_slots_.empty()) {
    index = free_slots_.back();
    free_slots_.pop_back();
  } else {
    index = static_cast<uint32_t>(slot_seq_.size());
    slot_seq_.push_back(0);
  }
  return Slot{index, ++slot_seq_[index]};
}

void MetaClient::ReleaseSlot(Slot slot) {
  std::lock_guard lock(mu_);
  free_slots_.push_back(slot.index);
}

void MetaClient::LimitRetries(Duration limit) {
  auto at = std::chrono::steady_clock::now() + limit.value;
  retry_limit_ns_.store(std::chrono::duration_cast<std::chrono::nanoseconds>(at.time_since_epoch()).count());
}

std::chrono::steady_clock::time_point MetaClient::RetryDeadline(std::chrono::steady_clock::time_point start) const {
  auto deadline = start + options_.retry_timeout.value;
  int64_t limit = retry_limit_ns_.load();
  if (limit != 0) {
    deadline = std::min(deadline, std::chrono::steady_clock::time_point(std::chrono::nanoseconds(limit)));
  }
  return deadline;
}

Status MetaClient::Retry(rpc::Method method, const std::function<Status()>& attempt) {
  const auto start = std::chrono::steady_clock::now();
  auto backoff = std::chrono::milliseconds(20);
  bool warned = false;
  int new_sessions = 0;
  size_t tries = 0;
  for (;;) {
    const SessionId used = session();  // what the attempt names (set per attempt)
    Status st = attempt();
    ++tries;
    if (st.code() == StatusCode::kMetaNoSession) {
      // Our session expired (e.g. we were partitioned longer than the
      // lease): nothing was applied; replace it and try again. Twice at
      // most: a request meta still refuses with a new session would
      // otherwise open sessions without end.
      if (++new_sessions > 2) return st;
      RETURN_IF_ERROR(ReplaceSession(used));
      continue;
    }
    // kTryAgain: meta's store could not finish the operation (a conflict it
    // retried long enough, or its database failing over); safe to send again
    // (op tokens), like a transport failure. kMetaNodesDown: no data node is
    // up to take a new chunk (the only one restarts): waited for as well.
    const bool transport = rpc::IsTransportError(st.code());
    if (!transport) {
      if (failing_since_ns_.load(std::memory_order_relaxed) != 0)
        failing_since_ns_.store(0);  // it answered
    } else {
      int64_t none = 0;
      failing_since_ns_.compare_exchange_strong(
          none,
          std::chrono::duration_cast<std::chrono::nanoseconds>(start.time_since_epoch()).count());
    }
    const int64_t since_ns = failing_since_ns_.load();
    const auto since = since_ns == 0 ? start
                                     : std::min(start, std::chrono::steady_clock::time_point(
                                                           std::chrono::nanoseconds(since_ns)));
    const bool again =
        transport || st.code() == StatusCode::kTryAgain || st.code() == StatusCode::kMetaNodesDown;
    // With several meta servers, one that failed in transport is left out
    // for a while (rpc::Channel): the others get a try each even past the
    // deadline (a request that waited out a hung server's reply timeout
    // would otherwise fail, the others never asked).
    const bool another_server = transport && tries < channel_.endpoint_count() &&
                                retry_limit_ns_.load() == 0;  // (not while stopping)
    if (!again || (!another_server && std::chrono::steady_clock::now() >= RetryDeadline(since))) {
      if (warned && st.ok()) LOG_INFO("meta {} is reachable again", options_.meta);
      return st;
    }
    if (CancelRequested()) {
      LOG_INFO("meta {}: {} ({} not retried: the caller was interrupted)", options_.meta,
               st.ToString(), rpc::MethodName(method));
      return st;
    }
    if (!warned) {
      LOG_WARN("meta {}: {} (retrying {} for up to {})", options_.meta, st.ToString(), rpc::MethodName(method),
               FormatDuration(options_.retry_timeout));
      warned = true;
    }
    std::this_thread::sleep_for(backoff);
    backoff = std::min(backoff * 2, std::chrono::milliseconds(1000));
  }
}

Status MetaClient::ReplaceSession(SessionId refused) {
  {
    // Requests meeting the expiry at once replace the session once: the
    // others find it replaced already.
    std::lock_guard replacing(replace_mu_);
    if (session() != refused) return Status::Ok();
    LOG_WARN("meta session {} expired; opening a new one", refused);
    RETURN_IF_ERROR(OpenSession(SessionId()));
  }
  TellListener();
  return Status::Ok();
}

void MetaClient::TellListener() {
  std::function<void()> listener;
  {
    std::lock_guard lock(mu_);
    listener = listener_;
  }
  if (listener) listener();
}

void MetaClient::RenewLoop() {
  uint32_t failures = 0;  // in a row
  for (;;) {
    std::chrono::milliseconds wait;
    {
      std::unique_lock lock(mu_);
      wait = std::chrono::milliseconds(lease_ms_ / 3);
      // A failed renewal is tried again soon (1 s, doubling), not a third
      // of the lease later: two more failures would let the session expire.
      if (failures > 0)
        wait = std::min(wait, kRenewRetry * (1 << std::min<uint32_t>(failures - 1, 5)));
      if (cv_.wait_for(lock, wait, [&] { return stopping_; })) return;
    }
    // Not under replace_mu_: a renewal waiting on a hung meta server must
    // not hold up a request that replaces the session through another.
    const SessionId before = session();
    // Resuming keeps the session alive and refreshes the local node.
    Status st = OpenSession(before);
    const SessionId after = session();
    if (!st.ok()) {
      ++failures;
      LOG_WARN("renewing meta session {}: {}", before, st.ToString());
      continue;
    }
    failures = 0;
    if (after != before) {
      LOG_WARN("meta session {} had expired; now session {}", before, after);
      TellListener();
    }
  }
}

}  // namespace t0fs::client
