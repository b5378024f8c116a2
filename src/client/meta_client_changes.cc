// MetaClient::PollChanges: other clients' changes from every meta server's
// change feed, by long polls that stay in flight between calls.
#include <poll.h>
#include <unistd.h>

#include <algorithm>

#include "client/meta_client.h"
#include "common/logging.h"
#include "rpc/proto/meta.pb.h"

namespace t0fs::client {
namespace {

// Pages of changes taken from one server in one call at most.
constexpr int kChangePages = 16;
// A server that has not answered this long past a poll's wait may hold
// changes nobody heard: the batch says so (complete = false). Not shorter:
// a busy server answering late would flip the mount to short cache times.
constexpr auto kChangesLate = std::chrono::seconds(2);

}  // namespace

Status MetaClient::AskChanges(Feed& feed, SessionId me, std::chrono::milliseconds wait) {
  pb::ChangesReq req;
  req.set_session(me.value());
  req.set_epoch(feed.epoch);
  req.set_after(feed.next);
  // A first question starts the feed: it is answered at once.
  if (feed.epoch != 0) req.set_wait_ms(static_cast<uint32_t>(wait.count()));
  ASSIGN_OR_RETURN(std::unique_ptr<rpc::Connection> conn, feed.channel->Acquire());
  std::string out, unused;
  Status sent = conn->Send(rpc::MakeCallArgs<rpc::Method::kChanges>(req, &out, &unused));
  if (!sent.ok()) return sent;  // the connection is broken: not kept
  feed.asking = std::move(conn);
  feed.quick = req.wait_ms() == 0;
  const auto now = std::chrono::steady_clock::now();
  feed.late_after = now + wait + kChangesLate;
  feed.answer_by = now + wait + kChangesTimeout;
  return Status::Ok();
}

Result<bool> MetaClient::TakeChanges(Feed& feed, ChangeBatch& batch) {
  std::unique_ptr<rpc::Connection> conn = std::move(feed.asking);
  std::string unused, in;
  pb::ChangesReq req;
  rpc::CallArgs args = rpc::MakeCallArgs<rpc::Method::kChanges>(req, &unused, &in);
  RETURN_IF_ERROR(conn->Receive(args));
  feed.channel->Release(std::move(conn));
  pb::ChangesRsp rsp;
  if (!rsp.ParseFromString(in)) {
    return rpc::MalformedReply(rpc::Method::kChanges, feed.channel->endpoint());
  }
  // A first answer starts the feed; a new epoch (the server restarted) or
  // a gap (we fell behind) loses what happened meanwhile.
  if (!rsp.complete()) batch.complete = false;
  feed.epoch = rsp.epoch();
  feed.next = rsp.next();
  for (pb::Change& c : *rsp.mutable_changes()) {
    batch.changes.push_back(
        NamespaceChange{InodeId(c.parent()), std::move(*c.mutable_name()), InodeId(c.ino())});
  }
  return rsp.more();
}

void MetaClient::InterruptPollChanges() {
  const uint64_t one = 1;
  if (changes_interrupt_.valid()) (void)!::write(changes_interrupt_.get(), &one, sizeof one);
}

Result<ChangeBatch> MetaClient::PollChanges(std::chrono::milliseconds wait) {
  ChangeBatch batch;
  const SessionId me = session();
  std::lock_guard lock(feeds_mu_);
  if (feeds_.empty()) {
    return Status(StatusCode::kInvalidArgument, "no meta server to ask for changes");
  }
  auto failed = [&](Feed& feed, const Status& st) {
    LOG_DEBUG("changes from {}: {}", feed.channel->endpoint().ToString(), st.ToString());
    if (feed.asking) feed.asking->Abandon();  // its answer may still come: not used again
    feed.asking.reset();
    batch.complete = false;
  };
  for (Feed& feed : feeds_) {
    if (feed.asking) continue;  // a long poll of an earlier call, still waiting
    Status asked = AskChanges(feed, me, wait);
    if (!asked.ok()) failed(feed, asked);
  }
  // Until the first answer, and those of every question that does not wait
  // (a first one, or one of a call without `wait`): a long poll left asked
  // is taken when it answers, not waited for once something came.
  bool answered = false;
  bool interrupted = false;
  std::vector<pollfd> fds;
  std::vector<Feed*> of;
  for (;;) {
    fds.clear();
    of.clear();
    auto until = std::chrono::steady_clock::time_point::max();
    bool quick = false;
    for (Feed& feed : feeds_) {
      if (!feed.asking) continue;
      fds.push_back(pollfd{feed.asking->fd(), POLLIN, 0});
      of.push_back(&feed);
      until = std::min(until, feed.answer_by);
      quick = quick || feed.quick;
    }
    if (fds.empty() || interrupted || (answered && !quick)) break;
    // The interrupt last: readable, it ends the wait (and is used up).
    fds.push_back(pollfd{changes_interrupt_.get(), POLLIN, 0});
    for (;;) {
      const auto left =
          std::chrono::ceil<std::chrono::milliseconds>(until - std::chrono::steady_clock::now());
      const int n =
          ::poll(fds.data(), fds.size(), static_cast<int>(std::max<int64_t>(left.count(), 0)));
      if (n >= 0 || errno != EINTR) break;
    }
    if (fds.back().revents != 0) {
      uint64_t count;
      (void)!::read(changes_interrupt_.get(), &count, sizeof count);
      interrupted = true;
    }
    const auto now = std::chrono::steady_clock::now();
    for (size_t i = 0; i < of.size(); ++i) {
      Feed& feed = *of[i];
      if (fds[i].revents == 0) {
        // No answer this long counts as lost (asked again next call).
        if (now >= feed.answer_by) {
          failed(feed, Status(StatusCode::kRpcTimeout, "no answer to a change poll in time"));
        }
        continue;
      }
      answered = true;
      // More pages: asked again at once, without waiting.
      for (int page = 0; page < kChangePages; ++page) {
        Result<bool> more = TakeChanges(feed, batch);
        if (!more.ok()) {
          failed(feed, more.status());
          break;
        }
        if (!*more) break;
        Status asked = AskChanges(feed, me, std::chrono::milliseconds(0));
        if (!asked.ok()) {
          failed(feed, asked);
          break;
        }
      }
    }
  }
  // A question still waiting a while past its wait: its server's changes
  // may be missing meanwhile.
  const auto now = std::chrono::steady_clock::now();
  for (Feed& feed : feeds_) {
    if (feed.asking && now >= feed.late_after) batch.complete = false;
  }
  return batch;
}

}  // namespace t0fs::client
