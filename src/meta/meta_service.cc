#include "meta/meta_service.h"

#include <fmt/format.h>

#include <algorithm>

#include "common/clock.h"
#include "common/host_name.h"
#include "common/logging.h"
#include "common/secret.h"
#include "common/url_redact.h"
#include "meta/policy.h"
#include "meta/store/store_url.h"
#include "metrics/process_metrics.h"
#include "rpc/channel.h"
#include "rpc/convert.h"

namespace t0fs::meta {
namespace {

// How long ago `node` last sent a heartbeat that was stored (never negative).
std::chrono::milliseconds HeartbeatAge(const NodeRecord& node, Timespec now) {
  const int64_t age_ms = (now.sec - node.last_heartbeat.sec) * 1000 +
                         (static_cast<int64_t>(now.nsec) - node.last_heartbeat.nsec) / 1000000;
  return std::chrono::milliseconds(std::max<int64_t>(0, age_ms));
}

}  // namespace


MetaService::MetaService(MetaConfig config, std::unique_ptr<MetaStore> store)
    : config_(std::move(config)),
      store_(std::move(store)),
      health_(config_.suspect_after.value, config_.node_timeout.value) {}

MetaService::~MetaService() { Stop(); }

Result<std::unique_ptr<MetaService>> MetaService::Start(const MetaConfig& config) {
  ASSIGN_OR_RETURN(std::string secret, LoadSecret(config.secret_file));
  ASSIGN_OR_RETURN(std::string url, StoreUrlFromFlags(config.store, config.db));
  ASSIGN_OR_RETURN(StoreLocation location, ParseStoreUrl(url));
  // One meta service per database: a second one would corrupt nothing
  // (SQLite locks) but would hand out conflicting ids and sessions.
  ASSIGN_OR_RETURN(std::optional<LockFile> lock, LockStore(location));
  StoreOptions opts;
  if (config.sync != "normal" && config.sync != "full") {
    return Status(StatusCode::kInvalidArgument, fmt::format("sync must be normal or full, not '{}'", config.sync));
  }
  opts.sqlite.sync = config.sync;
  opts.sqlite.checkpoint = config.sqlite_checkpoint;
  opts.sqlite.reserve = config.sqlite_reserve;
  opts.pg = config.pg;
  ASSIGN_OR_RETURN(std::unique_ptr<MetaStore> store, OpenStore(location, opts));
  MetaConfig resolved = config;
  resolved.store = url;
  // SQLite is one server's (the lock above); other engines may be shared.
  const bool shared = location.engine != StoreLocation::Engine::kSqlite;
  ASSIGN_OR_RETURN(auto svc,
                   StartWithStore(resolved, std::move(store), std::move(secret), shared));
  svc->db_lock_ = std::move(lock);
  return svc;
}

Result<std::unique_ptr<MetaService>> MetaService::StartWithStore(const MetaConfig& config,
                                                                 std::unique_ptr<MetaStore> store,
                                                                 std::string secret,
                                                                 bool shared_store) {
  RETURN_IF_ERROR(ValidateChunkSizes(config));
  RETURN_IF_ERROR(ValidateTiering(config));
  // Refused before anything else is written: a store of another cluster.
  const Digest fingerprint = HmacSha256(secret, "t0fs store owner");
  RETURN_IF_ERROR(store->ClaimSecret(HexEncode(std::string_view(
                                         reinterpret_cast<const char*>(fingerprint.data()), 16)))
                      .WithContext(fmt::format("{} with the secret of {}",
                                               RedactUrlPassword(config.store),
                                               config.secret_file)));
  std::unique_ptr<MetaService> svc(new MetaService(config, std::move(store)));
  MetaService& s = *svc;
  ASSIGN_OR_RETURN(s.cap_key_, s.store_->CapabilityKey());
  if (config.object.enabled()) {
    ASSIGN_OR_RETURN(s.object_tier_, ObjectTier::Open(config.object, s.store_->cluster_id()));
    LOG_INFO("object tier: {} bucket {}, keys under {}", config.object.endpoint,
             config.object.bucket, s.object_tier_->prefix());
  }
  s.planner_ = std::make_unique<RepairPlanner>(*s.store_, s.health_, s.config_, s.cap_key_,
                                               s.object_tier_.get());
  // Nodes keep the age of their last stored heartbeat across a meta restart,
  // so a node that was down stays down and one that was up is not declared
  // down (and its data re-replicated) just because meta restarted. Each is
  // checked against the committed versions at its first heartbeat.
  ASSIGN_OR_RETURN(auto nodes, s.store_->ListNodes());
  Timespec now = WallNow();
  for (const NodeRecord& node : nodes) {
    s.health_.SeenAgo(node.node, HeartbeatAge(node, now));
    s.planner_->RequestCheck(node.node);
  }
  HandlerList handlers;
  s.AddSessionHandlers(handlers);
  s.AddNamespaceHandlers(handlers);
  s.AddFileHandlers(handlers);
  s.AddClusterHandlers(handlers);
  s.AddObjectiveHandlers(handlers);
  rpc::ServerOptions opts;
  opts.name = "meta";
  ASSIGN_OR_RETURN(rpc::Endpoint ep, rpc::Endpoint::Parse(config.listen));
  opts.listen = {ep};
  opts.threads = config.threads;
  // On PostgreSQL a handler waits for the database's round trips: any free
  // thread takes any connection (on SQLite each thread keeps its own
  // connections, with no handoff between threads per request).
  opts.shared_threads = shared_store;  // a store other than SQLite: PostgreSQL
  opts.secret = std::move(secret);
  // No endpoint, nothing to record: requests are not timed at all.
  opts.metrics = config.metrics.listen.empty() ? nullptr : s.registry_.get();
  // What handlers read is set before the server takes requests.
  metrics::AddProcessMetrics(*s.registry_);
  metrics::AddBuildInfo(*s.registry_, "meta");
  AddMetaMetrics(*s.registry_, *s.store_, s.health_, *s.planner_);
  s.registry_->AddGaugeFn("t0fs_meta_change_polls_waiting",
                          "Mounts' change polls parked here until the next change (long polls).",
                          [&s] { return static_cast<double>(s.changes_.waiting().parked()); });
  if (s.object_tier_) {
    auto& writes = s.registry_->AddCounter(
        "t0fs_meta_object_manifest_writes_total",
        "Writes of the object tier's manifest by this meta server, by result.", {"result"});
    s.manifest_ok_ = &writes.With({{"result", "ok"}});
    s.manifest_failed_ = &writes.With({{"result", "failed"}});
    s.registry_->AddGaugeFn("t0fs_meta_object_manifest_files",
                            "Files listed in the last manifest this meta server wrote.",
                            [&s] { return static_cast<double>(s.manifest_files_.load()); });
    s.registry_->AddGaugeFn("t0fs_meta_object_manifest_written_seconds",
                            "Unix time of the last manifest this meta server wrote (0: none).",
                            [&s] { return static_cast<double>(s.manifest_written_.load()); });
  }
  s.metrics_server_ = std::make_unique<metrics::MetricsServer>(*s.registry_, metrics::MetricsServerOptions{.name = "t0fs meta"});
  RETURN_IF_ERROR(s.metrics_server_->Start(config.metrics.listen).WithContext("metrics-listen"));
  if (s.metrics_server_->running()) {
    s.metrics_address_ = s.metrics_server_->address();
    LOG_INFO("metrics on {}", s.metrics_server_->url());
  }
  s.shared_store_ = shared_store;
  s.server_ = std::make_unique<rpc::Server>(opts, std::move(handlers));
  RETURN_IF_ERROR(s.server_->Start());
  s.server_id_ = fmt::format("{}@{}", HostName(), s.endpoint().ToString());
  s.housekeeping_ = std::thread([&s] { s.Housekeeping(); });
  if (s.object_tier_ && config.object.manifest_interval.value.count() > 0) {
    s.manifests_ = std::thread([&s] { s.WriteManifests(); });
  }
  LOG_INFO("meta serving {} on {} (cluster {})", config.store.empty() ? std::string("its store") : RedactUrlPassword(config.store), s.endpoint().ToString(), s.store_->cluster_id());
  return svc;
}

void MetaService::Stop() {
  {
    std::lock_guard lock(stop_mu_);
    if (stopping_) return;
    stopping_ = true;
  }
  stop_cv_.notify_all();
  if (metrics_server_) metrics_server_->Stop();
  if (housekeeping_.joinable()) housekeeping_.join();
  if (manifests_.joinable()) manifests_.join();
  if (server_) server_->Stop();
}

void MetaService::Housekeeping() {
  using Clock = std::chrono::steady_clock;
  auto next_session_check = Clock::now();
  // Sessions expire, and silent nodes count as lost, only for silence this
  // server watched: from its start, and again after it was stopped
  // (SIGSTOP, a suspended VM: a wait that overran by far), after its store
  // hung, or when it did not lead (its store failed, or another server
  // led). Otherwise a meta stopped for longer than the session lease would,
  // at its first pass, close every client's session (freeing files
  // unlinked while open) and re-create every node's replicas, before the
  // clients and nodes could say they are still there.
  auto watching_since = Clock::now();
  const auto overrun =
      std::max<Clock::duration>(std::chrono::seconds(5), config_.repair_interval.value);
  auto watch_from = [&](Clock::time_point since) {
    watching_since = since;
    health_.WatchingSince(since);
  };
  for (;;) {
    const auto waited_from = Clock::now();
    {
      std::unique_lock lock(stop_mu_);
      stop_cv_.wait_for(lock, config_.repair_interval.value,
                        [&] { return stopping_ || pass_wanted_; });
      if (stopping_) return;
      pass_wanted_ = false;
    }
    if (Clock::now() - waited_from > config_.repair_interval.value + overrun) {
      LOG_WARN(
          "this meta server was stopped for {}: nodes and client sessions get their time again "
          "before any is declared lost or expired",
          FormatDuration(Duration{std::chrono::duration_cast<std::chrono::milliseconds>(
              Clock::now() - waited_from - config_.repair_interval.value)}));
      watch_from(Clock::now());
    }
    // A store that hung (its calls here took that long) kept renewals and
    // heartbeats out meanwhile, as a stop of this server would.
    const auto store_from = Clock::now();
    RefreshHealth();
    const bool led = leading_;
    if (!LeadsHousekeeping()) continue;
    if (!led || Clock::now() - store_from > overrun) watch_from(Clock::now());
    planner_->RunPass();
    if (object_tier_) {
      auto collected = object_tier_->CollectGarbage(*store_, 1000);
      if (collected.ok()) objects_deleted_ += *collected;
      std::string error = collected.ok() ? std::string() : collected.status().ToString();
      if (error != object_gc_error_ && !error.empty()) LOG_WARN("{}; retrying", error);
      object_gc_error_ = std::move(error);
    }
    if (Clock::now() < next_session_check ||
        Clock::now() - watching_since < config_.session_lease.value)
      continue;
    next_session_check = Clock::now() + std::chrono::seconds(2);
    Timespec cutoff = WallNow();
    cutoff.sec -= config_.session_lease.value.count() / 1000;
    auto expired = store_->ExpireSessions(cutoff);
    if (!expired.ok()) {
      LOG_WARN("expiring sessions: {}", expired.status().ToString());
    } else if (*expired > 0) {
      LOG_INFO("expired {} client session(s) without renewal for {}", *expired,
               FormatDuration(config_.session_lease));
    }
  }
}

void MetaService::WriteManifests() {
  const std::string key = ObjectManifestKey(object_tier_->prefix());
  bool written = false;  // since this server last started leading
  uint64_t changes_written = 0;
  std::string error_logged;
  for (;;) {
    {
      std::unique_lock lock(stop_mu_);
      if (stop_cv_.wait_for(lock, config_.object.manifest_interval.value,
                            [&] { return stopping_; }))
        return;
    }
    if (shared_store_ && !leading_) {  // (a store of its own: always the leader)
      written = false;
      continue;
    }
    const uint64_t changes = planner_->Stats().uploads_done + objects_deleted_;
    if (written && changes == changes_written) continue;
    const auto started = std::chrono::steady_clock::now();
    auto counts = object_tier_->WriteManifest(*store_, store_->cluster_id());
    (counts.ok() ? manifest_ok_ : manifest_failed_)->Inc();
    if (!counts.ok()) {
      std::string error = counts.status().ToString();
      if (error != error_logged)
        LOG_WARN("{}; retrying in {}", error, FormatDuration(config_.object.manifest_interval));
      error_logged = std::move(error);
      continue;
    }
    if (!error_logged.empty()) LOG_INFO("object tier: {} written again", key);
    error_logged.clear();
    written = true;
    changes_written = changes;
    manifest_files_ = counts->files;
    manifest_written_ = WallNow().sec;
    LOG_DEBUG("object tier: {} written: {} file(s) ({} complete), {} chunk object(s), in {} ms",
              key, counts->files, counts->complete, counts->chunks,
              std::chrono::duration_cast<std::chrono::milliseconds>(
                  std::chrono::steady_clock::now() - started)
                  .count());
  }
}

void MetaService::RefreshHealth() {
  if (!shared_store_) return;  // every heartbeat comes here
  auto nodes = ListNodes();
  if (!nodes.ok()) LOG_WARN("reading node heartbeats: {}", nodes.status().ToString());
}

Result<std::vector<NodeRecord>> MetaService::ListNodes() {
  ASSIGN_OR_RETURN(std::vector<NodeRecord> nodes, store_->ListNodes());
  if (!shared_store_) return nodes;
  const Timespec now = WallNow();
  for (const NodeRecord& node : nodes) {
    if (health_.SeenElsewhere(node.node, HeartbeatAge(node, now))) {
      LOG_INFO("node {} is up (heartbeats via another meta server)", node.node);
      planner_->RequestCheck(node.node);
    }
  }
  return nodes;
}

bool MetaService::LeadsHousekeeping() {
  if (!shared_store_) return leading_ = true;
  // Held for a few passes: a server that dies hands over after that long.
  const auto ttl = std::max<std::chrono::milliseconds>(
      std::chrono::seconds(10),
      std::chrono::duration_cast<std::chrono::milliseconds>(config_.repair_interval.value * 3));
  auto held = store_->AcquireLease("housekeeping", server_id_, WallNow(), ttl);
  if (!held.ok()) {
    LOG_WARN("housekeeping lease: {}", held.status().ToString());
    held = false;
  }
  if (*held != leading_) {
    leading_ = *held;
    if (leading_) {
      LOG_INFO("this meta server ({}) now runs the repair planner and session expiry", server_id_);
    } else {
      LOG_INFO("another meta server runs the repair planner and session expiry (not {})",
               server_id_);
    }
  }
  return leading_;
}

void MetaService::WantPass() {
  {
    std::lock_guard lock(stop_mu_);
    pass_wanted_ = true;
  }
  stop_cv_.notify_all();
}

void MetaService::NodeSeen(NodeId node) {
  if (health_.Seen(node)) {
    LOG_INFO("node {} is up; reconciling its chunks against their versions", node);
    planner_->RequestCheck(node);
  }
}

void MetaService::LayoutToWire(InodeId ino, uint64_t chunk_size,
                               const std::vector<ChunkLayout>& chunks, uint32_t rights,
                               pb::Layout* out) {
  out->set_ino(ino.value());
  out->set_chunk_size(chunk_size);
  for (const ChunkLayout& c : chunks) rpc::ToWire(c, out->add_chunks());
  uint64_t expiry = WallMillis() + static_cast<uint64_t>(config_.capability_ttl.value.count());
  for (pb::ChunkLayout& chunk : *out->mutable_chunks()) {
    if (chunk.replicas().empty()) continue;
    const ChunkId id(chunk.replicas(0).chunk());
    rpc::ToWire(SignCapability(cap_key_, id, rights, expiry), chunk.mutable_cap());
    uint64_t committed = 0;
    for (const pb::Replica& r : chunk.replicas()) committed = std::max(committed, r.version());
    if (object_tier_ != nullptr && committed != 0 && chunk.object_version() == committed) {
      for (NodeId node : ObjectReaders(id)) chunk.add_object_readers(node.value());
    }
  }
}

std::vector<NodeId> MetaService::ObjectReaders(ChunkId chunk) {
  std::vector<NodeId> up;
  auto nodes = CachedNodes();
  if (!nodes.ok()) return up;  // the replicas are still there to try
  for (const NodeRecord& n : **nodes) {
    if (IsUp(n.node)) up.push_back(n.node);
  }
  std::vector<NodeId> out;
  for (size_t i = 0; i < up.size() && out.size() < kObjectReaders; ++i) {
    out.push_back(up[(chunk.value() + i) % up.size()]);
  }
  return out;
}

}  // namespace t0fs::meta
