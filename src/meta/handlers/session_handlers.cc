// Client sessions: open (or resume after a reconnect), renew, close.
#include "common/logging.h"
#include "meta/meta_service.h"
#include "rpc/proto/meta.pb.h"

namespace t0fs::meta {

using rpc::Call;
using rpc::Method;
using rpc::Handle;

void MetaService::AddSessionHandlers(HandlerList& h) {
  h.push_back(Handle<Method::kOpenSession>(
      [this](const pb::OpenSessionReq& req, pb::OpenSessionRsp& rsp, Call& call) -> Status {
        SessionId session(req.resume());
        if (!session.valid() || !store_->RenewSession(session, WallNow()).ok()) {
          ASSIGN_OR_RETURN(session, store_->OpenSession(req.client_name(), req.host_id(), WallNow()));
          LOG_INFO("session {} opened by {} ({})", session, req.client_name(), call.peer);
        }
        rsp.set_session(session.value());
        rsp.set_lease_ms(static_cast<uint64_t>(config_.session_lease.value.count()));
        rsp.set_cluster_id(store_->cluster_id());
        // The client's local data node: the one it names, else the one on
        // the same host (same boot id and network namespace).
        ASSIGN_OR_RETURN(auto nodes, store_->ListNodes());
        for (const NodeRecord& node : nodes) {
          bool named = req.node_hint() != 0 && node.node.value() == req.node_hint();
          bool same_host = req.node_hint() == 0 && !req.host_id().empty() && node.host_id == req.host_id();
          if (named || same_host) {
            rsp.set_local_node(node.node.value());
            rsp.set_local_socket(node.local_socket);
            break;
          }
        }
        return Status::Ok();
      }));

  h.push_back(Handle<Method::kRenewSession>(
      [this](const pb::SessionReq& req, pb::Empty&, Call&) {
        return store_->RenewSession(SessionId(req.session()), WallNow());
      }));

  h.push_back(Handle<Method::kChanges>(
      [this](const pb::ChangesReq& req, pb::ChangesRsp& rsp, Call& call) -> Status {
        const uint64_t seen = changes_.waiting().generation();  // before looking: no wake is lost
        ChangeFeed::Page page = changes_.Since(SessionId(req.session()), req.epoch(), req.after(), req.max());
        if (req.wait_ms() > 0 && req.epoch() != 0 && page.complete && !page.more &&
            page.changes.empty()) {
          // A long poll with nothing new yet: the connection waits for the
          // next change of another session, or for the asked time.
          const auto now = std::chrono::steady_clock::now();
          if (call.park_until == std::chrono::steady_clock::time_point{}) {
            call.park_until =
                now + std::min<std::chrono::steady_clock::duration>(
                          std::chrono::milliseconds(req.wait_ms()), ChangeFeed::kMaxWait);
          }
          if (now < call.park_until) {
            call.Park(changes_.waiting(), req.session(), seen);
            return Status::Ok();
          }
        }
        rsp.set_epoch(page.epoch);
        rsp.set_next(page.next);
        rsp.set_complete(page.complete);
        rsp.set_more(page.more);
        for (ChangeFeed::Change& c : page.changes) {
          pb::Change* out = rsp.add_changes();
          out->set_parent(c.parent.value());
          out->set_name(std::move(c.name));
          out->set_ino(c.ino.value());
        }
        return Status::Ok();
      }));

  h.push_back(Handle<Method::kCloseSession>(
      [this](const pb::SessionReq& req, pb::Empty&, Call&) {
        return store_->CloseSession(SessionId(req.session()));
      }));
}

}  // namespace t0fs::meta
