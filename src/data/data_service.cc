#include "data/data_service.h"

#include <fmt/format.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>

#include "common/host_name.h"
#include "common/io_backend.h"
#include "common/logging.h"
#include "common/secret.h"
#include "data/chunk_handlers.h"
#include "data/object_read.h"
#include "data/orphan_sweep.h"
#include "metrics/process_metrics.h"
#include "rpc/proto/meta.pb.h"

namespace t0fs::data {
namespace {

// Chunks a lazy open may keep unnamed (two descriptors each): a quarter of
// the descriptor limit, raised to the hard limit first, at most 16384.
size_t UnnamedCapacity() {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0) return 256;
  if (limit.rlim_cur < limit.rlim_max) {
    rlimit raised = limit;
    raised.rlim_cur = limit.rlim_max;
    if (::setrlimit(RLIMIT_NOFILE, &raised) == 0) limit = raised;
  }
  return static_cast<size_t>(std::min<rlim_t>(16384, limit.rlim_cur / 4));
}

}  // namespace

DataService::DataService(DataConfig config)
    : config_(std::move(config)), store_(config_.open_chunk_cache, UnnamedCapacity()), gate_(config_.clock_skew) {}

DataService::~DataService() { Stop(); }

Result<std::unique_ptr<DataService>> DataService::Start(const DataConfig& config) {
  std::unique_ptr<DataService> svc(new DataService(config));
  DataService& s = *svc;
  ASSIGN_OR_RETURN(s.secret_, LoadSecret(config.secret_file));
  ASSIGN_OR_RETURN(IoBackendKind io, ParseIoBackendKind(config.io_backend));
  SetDefaultIoBackend(io);
  if (config.volumes.empty()) return Status(StatusCode::kInvalidArgument, "no volumes configured");
  for (const std::string& dir : config.volumes) {
    ASSIGN_OR_RETURN(Volume vol, Volume::Open(dir));
    if (std::string warning = FileSystemWarning(dir); !warning.empty()) {
      LOG_WARN("volume {}: {}", dir, warning);
    }
    s.volumes_.push_back(std::move(vol));
  }
  // A node id recorded in the volumes wins over 0; a conflicting one is an error.
  NodeId recorded;
  for (const Volume& vol : s.volumes_) {
    NodeId n = vol.identity().node;
    if (!n.valid()) continue;
    if (recorded.valid() && recorded != n) {
      return Status(StatusCode::kInvalidArgument,
                    fmt::format("volumes belong to different nodes ({} and {})", recorded, n));
    }
    recorded = n;
  }
  if (config.node_id != 0 && recorded.valid() && recorded.value() != config.node_id) {
    return Status(StatusCode::kInvalidArgument,
                  fmt::format("--node-id {} but the volumes belong to node {}", config.node_id, recorded));
  }
  s.node_ = config.node_id != 0 ? NodeId(config.node_id) : recorded;

  s.local_socket_ = config.local_socket.empty() ? config.volumes.front() + "/data.sock" : config.local_socket;
  if (s.local_socket_.size() > 107) {
    s.local_socket_ = fmt::format("/tmp/t0fs-data-{}-{}.sock", ::getuid(), ::getpid());
  }
  ASSIGN_OR_RETURN(rpc::Endpoint tcp, rpc::Endpoint::Parse(config.listen));
  ASSIGN_OR_RETURN(rpc::Endpoint unix_ep, rpc::Endpoint::Parse("unix:" + s.local_socket_));
  rpc::ServerOptions opts;
  opts.name = "data";
  opts.listen = {tcp, unix_ep};
  opts.threads = config.threads;
  opts.secret = s.secret_;
  opts.limits.max_payload = static_cast<uint32_t>(config.max_io.bytes + (64 << 10));
  // No endpoint, nothing to record (the traffic counters below stay: heartbeats carry them).
  opts.metrics = config.metrics.listen.empty() ? nullptr : s.registry_.get();
  s.traffic_ = AddChunkTrafficMetrics(*s.registry_);
  s.removals_ = AddRemovalMetrics(*s.registry_);
  s.scrubber_ = std::make_unique<Scrubber>(s.store_, config.scrub_rate.bytes, config.scrub_pause);
  rpc::ClientOptions copts;
  copts.secret = s.secret_;
  copts.role = "node";
  copts.io_timeout.value = std::chrono::seconds(30);
  rpc::ClientOptions peer = copts;
  peer.role = "peer";
  s.copier_ = std::make_unique<Copier>(s.store_, peer, config.copy_threads, config.copy_rate.bytes);
  auto handlers = MakeChunkHandlers(s.store_, s.config_, s.gate_, *s.scrubber_, s.traffic_);
  handlers.push_back(MakeObjectReadHandler(*s.copier_, s.gate_, config.max_io.bytes, s.traffic_));
  s.server_ = std::make_unique<rpc::Server>(opts, std::move(handlers));
  RETURN_IF_ERROR(s.server_->Start());

  rpc::Endpoint bound = s.server_->bound(0);
  s.advertise_ = config.advertise.empty() ? bound.ToString() : config.advertise;
  if (config.advertise.empty() && (bound.host == "0.0.0.0" || bound.host == "::")) {
    return Status(StatusCode::kInvalidArgument,
                  "listening on all interfaces: give --advertise with the address peers should use");
  }
  // Several meta servers over one store: heartbeats go to one, then the next
  // when it fails -- or when it does not answer within a second while the
  // next does (a hung meta server must not make this node look down: its
  // node-timeout is 10 s, the i/o timeout 30 s). A heartbeat or a
  // registration run by two servers is harmless (both record the same).
  ASSIGN_OR_RETURN(std::vector<rpc::Endpoint> meta_eps, rpc::Endpoint::ParseList(config.meta));
  rpc::ClientOptions meta_opts = copts;
  meta_opts.hedge_after.value = std::chrono::seconds(1);
  s.meta_ = std::make_unique<rpc::Channel>(std::move(meta_eps), meta_opts);
  metrics::AddProcessMetrics(*s.registry_);
  metrics::AddBuildInfo(*s.registry_, "data");
  AddVolumeMetrics(
      *s.registry_, s.volumes_, s.store_, [&s] { return s.copier_->bytes_total(); },
      [&s] { return s.node().value(); });
  AddObjectReadMetrics(*s.registry_, s.copier_->read_ahead());
  s.metrics_server_ = std::make_unique<metrics::MetricsServer>(*s.registry_, metrics::MetricsServerOptions{.name = "t0fs data"});
  RETURN_IF_ERROR(s.metrics_server_->Start(config.metrics.listen).WithContext("metrics-listen"));
  if (s.metrics_server_->running()) {
    s.metrics_address_ = s.metrics_server_->address();
    LOG_INFO("metrics on {}", s.metrics_server_->url());
  }
  LOG_INFO("serving chunks on {} and {} ({} volume(s))", s.advertise_, s.local_socket_, s.volumes_.size());
  s.heartbeat_ = std::thread([&s] { s.HeartbeatLoop(); });
  s.usage_ = std::thread([&s] { s.UsageLoop(); });
  if (config.orphan_sweep.value.count() > 0) s.sweep_ = std::thread([&s] { s.SweepLoop(); });
  return svc;
}

void DataService::Stop() {
  {
    std::lock_guard lock(mu_);
    if (stopping_) return;
    stopping_ = true;
  }
  cv_.notify_all();
  if (metrics_server_) metrics_server_->Stop();
  if (heartbeat_.joinable()) heartbeat_.join();
  if (usage_.joinable()) usage_.join();
  if (sweep_.joinable()) sweep_.join();
  if (server_) server_->Stop();
  copier_.reset();
  scrubber_.reset();
}

NodeId DataService::node() const {
  std::lock_guard lock(mu_);
  return node_;
}

Status DataService::Register() {
  pb::RegisterNodeReq req;
  req.set_node(node().value());
  req.set_host_id(rpc::LocalHostId());
  req.set_address(advertise_);
  req.set_local_socket(local_socket_);
  req.set_hostname(HostName());
  for (const Volume& vol : volumes_) {
    auto* v = req.add_volumes();
    v->set_volume(vol.identity().volume.value());
    v->set_volume_uuid(vol.identity().uuid);
    v->set_path(vol.dir());
    auto stats = vol.Stats();
    if (stats.ok()) {
      v->set_total_bytes(stats->total_bytes);
      v->set_free_bytes(stats->free_bytes);
    }
  }
  pb::RegisterNodeRsp rsp;
  RETURN_IF_ERROR(meta_->Call<rpc::Method::kRegisterNode>(req, &rsp));
  NodeId node(rsp.node());
  for (const pb::VolumeInfo& assigned : rsp.volumes()) {
    for (Volume& vol : volumes_) {
      if (vol.identity().uuid != assigned.volume_uuid()) continue;
      RETURN_IF_ERROR(vol.Bind(rsp.cluster_id(), node, VolumeId(assigned.volume())));
      store_.AddVolume(VolumeId(assigned.volume()), vol.dir());
    }
  }
  {
    std::lock_guard lock(mu_);
    node_ = node;
  }
  gate_.SetKey(rsp.capability_key());
  if (rsp.has_object_tier()) copier_->SetObjectTier(rsp.object_tier());
  registered_ = true;
  awaiting_check_ = true;
  LOG_INFO("registered with meta {} as node {}", config_.meta, node);
  return Status::Ok();
}

Status DataService::Heartbeat() {
  pb::HeartbeatReq req;
  std::vector<uint64_t> acked;
  {
    std::lock_guard lock(mu_);
    req.set_node(node_.value());
    acked.swap(done_);
  }
  for (uint64_t id : acked) req.add_done_commands(id);
  for (const Volume& vol : volumes_) {
    auto* v = req.add_volumes();
    v->set_volume(vol.identity().volume.value());
    v->set_volume_uuid(vol.identity().uuid);
    v->set_path(vol.dir());
    v->set_chunks(store_.ChunkCount(vol.identity().volume));
    {
      std::lock_guard lock(mu_);
      auto stored = stored_.find(vol.identity().volume);
      if (stored != stored_.end()) v->set_stored_bytes(stored->second);
    }
    auto stats = vol.Stats();
    if (stats.ok()) {
      v->set_total_bytes(stats->total_bytes);
      v->set_free_bytes(stats->free_bytes);
    }
  }
  std::vector<pb::CopyResult> copies = copier_->TakeResults();
  {
    std::lock_guard lock(mu_);
    copies.insert(copies.begin(), requeue_copies_.begin(), requeue_copies_.end());
    requeue_copies_.clear();
  }
  std::vector<pb::ReplicaProblem> problems = scrubber_->TakeProblems();
  for (const auto& c : copies) *req.add_copies() = c;
  for (const auto& p : problems) *req.add_problems() = p;
  for (uint64_t id : copier_->Active()) req.add_copying(id);
  req.set_copied_bytes_total(copier_->bytes_total());
  req.set_tcp_read_bytes(traffic_.tcp_read_bytes->Value());
  req.set_tcp_write_bytes(traffic_.tcp_write_bytes->Value());
  req.set_local_opens(traffic_.local_opens->Value());
  req.set_metrics_address(metrics_address());
  req.set_awaiting_check(awaiting_check_);
  pb::HeartbeatRsp rsp;
  const auto sent = std::chrono::steady_clock::now();  // the removals it brings were queued before
  Status st = meta_->Call<rpc::Method::kHeartbeat>(req, &rsp);
  if (!st.ok()) {
    // Not delivered: everything goes again with the next heartbeat.
    std::lock_guard lock(mu_);
    done_.insert(done_.end(), acked.begin(), acked.end());
    for (const auto& p : problems) scrubber_->Report(VolumeId(p.volume()), ChunkId(p.chunk()), p.detail());
    requeue_copies_.insert(requeue_copies_.end(), copies.begin(), copies.end());
    return st;
  }
  std::vector<uint64_t> done;
  for (const pb::NodeCommand& cmd : rsp.commands()) {
    if (cmd.kind() == pb::COMMAND_COPY || cmd.kind() == pb::COMMAND_UPLOAD ||
        cmd.kind() == pb::COMMAND_EC_ENCODE || cmd.kind() == pb::COMMAND_EC_VERIFY) {
      copier_->Enqueue(cmd);
      continue;
    }
    if (cmd.kind() == pb::COMMAND_CHECK) {
      awaiting_check_ = false;
      CheckReplicas(cmd);
      continue;
    }
    if (cmd.kind() != pb::COMMAND_REMOVE) continue;  // unknown kinds are left for a newer node
    Status removed = store_.Remove(VolumeId(cmd.volume()), ChunkId(cmd.chunk()), sent);
    if (removed.ok() || removed.code() == StatusCode::kDataNoVolume) {
      done.push_back(cmd.id());
    } else if (removed.code() == StatusCode::kTryAgain) {
      // Placed here again meanwhile: if meta still wants it gone, the
      // removal comes again (not acknowledged).
      removals_.deferred->Inc();
      LOG_INFO("remove chunk {} deferred: {}", cmd.chunk(), removed.ToString());
    } else {
      LOG_WARN("remove chunk {}: {}", cmd.chunk(), removed.ToString());
    }
  }
  std::lock_guard lock(mu_);
  done_.insert(done_.end(), done.begin(), done.end());
  return Status::Ok();
}

void DataService::CheckReplicas(const pb::NodeCommand& cmd) {
  size_t bad = 0;
  for (const pb::InventoryItem& item : cmd.expected()) {
    VolumeId volume(item.volume());
    ChunkId chunk(item.chunk());
    auto stat = store_.Stat(volume, chunk);
    std::string problem;
    if (!stat.ok()) {
      problem = stat.status().code() == StatusCode::kDataNoChunk
                    ? fmt::format("missing (version {} committed)", item.version())
                    : stat.status().ToString();
    } else if (stat->version < item.version()) {
      problem = fmt::format("at version {}, {} committed", stat->version, item.version());
    }
    if (problem.empty()) continue;
    ++bad;
    scrubber_->Report(volume, chunk, problem);
  }
  LOG_INFO("checked {} replica(s) meta expects here: {} missing or stale", cmd.expected_size(), bad);
}

void DataService::UsageLoop() {
  for (;;) {
    const auto start = std::chrono::steady_clock::now();
    // The store serves a volume once meta named it (registration, on the
    // heartbeat thread): until all are, counted again a second later.
    const std::vector<VolumeId> served = store_.Volumes();
    for (VolumeId id : served) {
      auto bytes = store_.CountStoredBytes(id);
      if (!bytes.ok()) {
        LOG_WARN("counting what chunk files take on volume {}: {}", id, bytes.status().ToString());
        continue;
      }
      std::lock_guard lock(mu_);
      stored_[id] = *bytes;
    }
    const auto took = std::chrono::steady_clock::now() - start;
    const auto pause = served.size() == volumes_.size()
                           ? std::max<std::chrono::steady_clock::duration>(kUsagePause, 50 * took)
                           : std::chrono::steady_clock::duration(std::chrono::seconds(1));
    std::unique_lock lock(mu_);
    if (cv_.wait_for(lock, pause, [&] { return stopping_; })) return;
  }
}

void DataService::SweepLoop() {
  // A node that was away or crashed is the likeliest to hold orphans.
  std::chrono::milliseconds wait =
      std::min<std::chrono::milliseconds>(config_.orphan_sweep.value, kFirstSweepAfter);
  const auto stopping = [this] {
    std::lock_guard lock(mu_);
    return stopping_;
  };
  for (;;) {
    {
      std::unique_lock lock(mu_);
      if (cv_.wait_for(lock, wait, [&] { return stopping_; })) return;
    }
    const NodeId me = node();
    if (!registered_ || !me.valid()) {
      wait =
          std::min<std::chrono::milliseconds>(config_.orphan_sweep.value, std::chrono::seconds(10));
      continue;
    }
    wait = config_.orphan_sweep.value;
    const auto queue = [&](VolumeId volume, const std::vector<ChunkId>& files) -> Result<uint64_t> {
      pb::QueueOrphansReq req;
      req.set_node(me.value());
      for (ChunkId chunk : files) {
        pb::OrphanFile* f = req.add_files();
        f->set_chunk(chunk.value());
        f->set_volume(volume.value());
      }
      pb::QueueOrphansRsp rsp;
      RETURN_IF_ERROR(meta_->Call<rpc::Method::kQueueOrphans>(req, &rsp));
      return rsp.queued();
    };
    for (VolumeId volume : store_.Volumes()) {
      auto swept = SweepVolume(store_, volume, kSweepPage, queue, stopping);
      if (!swept.ok()) {
        LOG_WARN("orphan sweep of volume {}: {}; again in {}", volume, swept.status().ToString(),
                 FormatDuration(config_.orphan_sweep));
      } else if (swept->queued > 0) {
        removals_.orphans_queued->Inc(swept->queued);
        LOG_INFO(
            "orphan sweep of volume {}: {} of its {} chunk file(s) are in no layout: meta queued "
            "them for removal",
            volume, swept->queued, swept->offered);
      } else {
        LOG_DEBUG("orphan sweep of volume {}: its {} chunk file(s) all in use", volume,
                  swept->offered);
      }
    }
  }
}

void DataService::HeartbeatLoop() {
  auto last_warning = std::chrono::steady_clock::time_point{};
  for (;;) {
    // Registered, the node says so at once: meta counts it up (and places
    // data on it) from its first heartbeat.
    const bool registering = !registered_;
    Status st = registering ? Register() : Heartbeat();
    if (st.ok() && registering) st = Heartbeat();
    if (!st.ok()) {
      if (st.code() == StatusCode::kMetaNoNode) {
        registered_ = false;  // meta forgot us (a new database): register again
      }
      auto now = std::chrono::steady_clock::now();
      if (now - last_warning > std::chrono::seconds(10)) {
        LOG_WARN("meta {}: {}{}", config_.meta, st.ToString(),
                 registered_ ? "" : " (not registered yet; retrying)");
        last_warning = now;
      }
      if (st.code() == StatusCode::kDataWrongCluster) {
        LOG_ERROR("refusing to serve: {}", st.ToString());
      }
    }
    store_.TrimUnnamed(std::chrono::seconds(1));
    std::unique_lock lock(mu_);
    auto wait = registered_ ? config_.heartbeat.value : std::chrono::milliseconds(500);
    if (cv_.wait_for(lock, wait, [&] { return stopping_; })) return;
  }
}

}  // namespace t0fs::data
