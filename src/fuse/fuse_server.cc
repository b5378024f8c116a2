#include "fuse/fuse_server.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include <fmt/format.h>

#include "common/logging.h"
#include "fuse/change_watcher.h"
#include "fuse/ops/fuse_ops.h"
#include "fuse/protocol/session.h"
#include "fuse/protocol/uring.h"

namespace t0fs::fuse {
namespace {

// The kernel answers INIT as soon as mount(2) returns; this only guards
// against a broken kernel or a wrong fd.
constexpr std::chrono::milliseconds kInitTimeout{30000};
// How long a stopping mount keeps retrying an unreachable meta or data node
// to commit the files still open (their sizes are lost past it, not their
// bytes, which are on the chunk files already).
constexpr Duration kStopGrace{std::chrono::seconds(2)};

}  // namespace

FuseServer::FuseServer(client::Client& client, const MountConfig& config)
    : config_(config), ops_(std::make_unique<FuseOps>(client, config)) {}

Result<std::unique_ptr<FuseServer>> FuseServer::Mount(client::Client& client,
                                                      const std::string& mountpoint,
                                                      const MountConfig& config,
                                                      metrics::Registry* registry) {
  RETURN_IF_ERROR(config.Validate());
  ASSIGN_OR_RETURN(std::string path, CanonicalMountpoint(mountpoint));
  RETURN_IF_ERROR(PrepareMountpoint(path));

  std::unique_ptr<FuseServer> server(new FuseServer(client, config));
  if (registry != nullptr) server->metrics_ = std::make_unique<FuseMetrics>(*registry);
  MountOptions mount_options;
  mount_options.allow_other = config.allow_other;
  mount_options.read_only = config.read_only;
  mount_options.no_exec = config.no_exec;
  // The source column of /proc/mounts names the cluster, so that `t0fs
  // status` asks only its own cluster's mounts.
  if (!client.cluster_id().empty()) mount_options.fsname = "t0fs:" + client.cluster_id();
  mount_options.max_read = 1u << 20;
  ASSIGN_OR_RETURN(server->mount_, FuseMount::Mount(path, mount_options));
  // From here on, returning an error drops `server`, whose FuseMount unmounts.

  InitOptions init_options;
  init_options.max_write = 1u << 20;
  init_options.max_readahead = static_cast<uint32_t>(
      std::min<uint64_t>(config.max_readahead.bytes, uint64_t(1) << 30));
  init_options.max_background = static_cast<uint16_t>(config.max_background);
  // Registering a backing file needs CAP_SYS_ADMIN: do not ask otherwise.
  init_options.passthrough = config.passthrough && ::geteuid() == 0;
  init_options.io_uring = config.io_uring;
  ASSIGN_OR_RETURN(server->info_,
                   HandshakeInit(server->mount_.device_fd(), init_options, kInitTimeout));

  server->ops_->passthrough().Enable(server->info_.passthrough);

  SessionOptions session_options;
  session_options.threads = config.threads;
  session_options.max_write = server->info_.max_write;
  session_options.reply_buffer =
      std::max<size_t>(mount_options.max_read, size_t(server->info_.max_pages) * kPageSize);
  session_options.proto_minor = server->info_.minor;
  session_options.trace = config.debug;
  session_options.metrics = server->metrics_.get();
  UringOptions uring_options;
  uring_options.threads_per_queue =
      std::max<size_t>(2, config.threads);
  uring_options.first_slot = std::max<size_t>(config.threads, 1);
  uring_options.reply_buffer = session_options.reply_buffer;
  // The kernel's payload: max(max_write, max_pages pages), at least 8 KiB.
  uring_options.payload_size = std::max<size_t>(
      {server->info_.max_write, size_t(server->info_.max_pages) * kPageSize, abi::kMinReadBuffer});
  if (server->info_.io_uring) session_options.extra_slots = UringThreads(uring_options);
  ASSIGN_OR_RETURN(server->session_,
                   Session::Start(server->mount_.TakeDevice(), *server->ops_, session_options));
  if (server->info_.io_uring) {
    auto uring = UringQueues::Start(server->session_->device(), server->session_->processor(), uring_options);
    if (uring.ok()) {
      server->uring_ = std::move(*uring);
      server->ops_->SetIoUring(true);
    } else {
      server->uring_error_ = uring.status().ToString();
      LOG_WARN("fuse: FUSE over io_uring not used ({}); requests come through /dev/fuse reads",
               server->uring_error_);
    }
  }

  if (config.cache_timeout.value.count() > 0) {
    server->watcher_ =
        std::make_unique<ChangeWatcher>(client, server->session_->device(), config.change_interval,
                                        server->ops_->timeouts(), server->ops_->cached_opens());
  }

  // From mountinfo, never from a stat of the path: the server does not send
  // requests to its own mount (it could wait on itself forever).
  server->dev_ = FuseMountDevice(path);
  if (server->dev_ == 0) LOG_WARN("fuse: {} is not in /proc/self/mountinfo after mounting", path);
  server->TuneReadahead();
  if (registry != nullptr) server->AddGauges(*registry);
  LOG_INFO("fuse: mounted {} ({} threads{}): {}", path, config.threads,
           server->mount_.via_fusermount() ? ", via fusermount3" : "",
           DescribeInit(server->info_));
  LOG_INFO("fuse: {}", server->DescribePassthrough());
  LOG_INFO("fuse: {}", server->DescribeIoUring());
  return server;
}

std::string FuseServer::DescribeIoUring() const {
  if (uring_) {
    return fmt::format("requests through FUSE over io_uring ({} queues, {} threads; /dev/fuse readers for "
                       "the rest)",
                       uring_->queues(), uring_->threads());
  }
  if (!config_.io_uring) return "FUSE over io_uring off (--io-uring false): requests through /dev/fuse reads";
  if (!uring_error_.empty()) return "FUSE over io_uring failed (" + uring_error_ + "): requests through /dev/fuse reads";
  if (!info_.io_uring_offered) {
    return "FUSE over io_uring not offered by the kernel (needs Linux 6.14+ and, as root, "
           "echo 1 > /sys/module/fuse/parameters/enable_uring before mounting): requests through /dev/fuse reads";
  }
  return "FUSE over io_uring not enabled: requests through /dev/fuse reads";
}

bool FuseServer::io_uring() const { return uring_ != nullptr; }

std::string FuseServer::DescribePassthrough() const {
  if (info_.passthrough) {
    return "passthrough enabled: files whose data is one chunk on this node are served by the kernel";
  }
  if (!config_.passthrough) return "passthrough off (--passthrough false): all I/O goes through the mount";
  if (::geteuid() != 0) return "passthrough not used: it needs root (CAP_SYS_ADMIN); all I/O goes through the mount";
  if (!info_.passthrough_offered) {
    return fmt::format("passthrough not offered by the kernel (FUSE 7.{}; needs Linux 6.9+ with "
                       "CONFIG_FUSE_PASSTHROUGH): all I/O goes through the mount", info_.kernel_minor);
  }
  return "passthrough not enabled";
}

PassthroughTable::Stats FuseServer::passthrough_stats() const { return ops_->passthrough().stats(); }

FuseServer::~FuseServer() {
  Stop();
  if (registry_ != nullptr) {
    for (const char* name : kGaugeNames) registry_->Remove(name);
  }
}

void FuseServer::AddGauges(metrics::Registry& registry) {
  registry_ = &registry;
  Session* session = session_.get();
  FuseOps* ops = ops_.get();
  registry.AddGaugeFn(kGaugeNames[0], "FUSE requests being served by the workers now.",
                      [session] { return static_cast<double>(session->processor().inflight().busy()); });
  registry.AddCallback(metrics::MetricType::kCounter, kGaugeNames[1], "FUSE INTERRUPT requests received.", {},
                       [session](metrics::SampleSink& sink) {
                         sink.Add(static_cast<double>(session->processor().inflight().interrupts()));
                       });
  registry.AddGaugeFn(kGaugeNames[2], "Files open through the mount (handles the kernel holds).",
                      [ops] { return static_cast<double>(ops->open_files()); });
  registry.AddGaugeFn(kGaugeNames[3], "FUSE worker threads (the bound on requests in flight).",
                      [threads = config_.threads] { return static_cast<double>(threads); });
  registry.AddGaugeFn(kGaugeNames[4], "1 if kernel FUSE passthrough is in use on this mount.",
                      [on = info_.passthrough] { return on ? 1.0 : 0.0; });
  registry.AddCallback(metrics::MetricType::kCounter, kGaugeNames[5],
                       "File opens by how they are served: passthrough (by the kernel from the local chunk "
                       "file), cached (through the mount), busy (refused: a writer of a replicated file that "
                       "is open by passthrough here), refused (the kernel refused the backing file).",
                       {"mode"}, [ops](metrics::SampleSink& sink) {
                         PassthroughTable::Stats s = ops->passthrough().stats();
                         sink.Add({"passthrough"}, static_cast<double>(s.passthrough));
                         sink.Add({"cached"}, static_cast<double>(s.cached));
                         sink.Add({"busy"}, static_cast<double>(s.refused));
                         sink.Add({"refused"}, static_cast<double>(s.failures));
                       });
  registry.AddGaugeFn(kGaugeNames[6], "Backing files registered with the kernel now (inodes open by passthrough).",
                      [ops] { return static_cast<double>(ops->passthrough().stats().backing_files); });
  registry.AddGaugeFn(kGaugeNames[7], "1 if requests come through FUSE over io_uring on this mount (0: /dev/fuse reads).",
                      [on = uring_ != nullptr] { return on ? 1.0 : 0.0; });
  registry.AddCallback(metrics::MetricType::kCounter, kGaugeNames[8],
                       "FUSE requests taken through the io_uring queues (the rest came by /dev/fuse reads).", {},
                       [uring = uring_.get()](metrics::SampleSink& sink) {
                         sink.Add(uring != nullptr ? static_cast<double>(uring->requests()) : 0.0);
                       });
  registry.AddCallback(metrics::MetricType::kCounter, kGaugeNames[9],
                       "Names and inodes the kernel forgot because another client changed them (notifications "
                       "it took; it ignores those of what it does not cache).", {},
                       [watcher = watcher_.get()](metrics::SampleSink& sink) {
                         sink.Add(watcher != nullptr ? static_cast<double>(watcher->invalidations()) : 0.0);
                       });
  registry.AddCallback(
      metrics::MetricType::kCounter, kGaugeNames[10],
      "Creates and renames that found their name taken where this mount had answered it missing "
      "(another client made it); each made the kernel look its cached names up again.",
      {},
      [ops](metrics::SampleSink& sink) { sink.Add(static_cast<double>(ops->names_forgotten())); });
  registry.AddCallback(
      metrics::MetricType::kCounter, kGaugeNames[11],
      "Opens that told the kernel its cached attributes were out of date (close-to-open: a size "
      "another client changed since is asked again, not read up to or mapped).",
      {},
      [ops](metrics::SampleSink& sink) { sink.Add(static_cast<double>(ops->attrs_forgotten())); });
  registry.AddCallback(
      metrics::MetricType::kCounter, kGaugeNames[12],
      "Other clients' changes to a file open here through the page cache, passed on to the "
      "kernel at its last close rather than while open (a notification then races the readers).",
      {}, [ops](metrics::SampleSink& sink) {
        sink.Add(static_cast<double>(ops->cached_opens().held_back()));
      });
}

Status FuseServer::Run() {
  session_->Join();
  return session_->status();
}

void FuseServer::Stop() {
  std::lock_guard lock(stop_mu_);
  if (stopped_ || !session_) return;
  stopped_ = true;
  // Nothing below may wait long for meta or a data node: a stop must finish.
  ops_->client().LimitRetries(kStopGrace);
  if (session_->ended()) {
    mount_.Forget();  // unmounted from outside; the path is not ours any more
  } else {
    // Lazy unmount (no request reaches the mount), then the workers leave
    // after the request each is serving.
    Status st_unmount = mount_.Unmount();
    if (!st_unmount.ok()) LOG_WARN("fuse: unmount {}: {}", mount_.path(), st_unmount.ToString());
  }
  if (watcher_) watcher_->Stop();  // writes to the device: before it closes
  session_->Stop();
  if (uring_) {
    uring_->Stop();
    uring_->Join();
  }
  // With the last device fd closed the kernel aborts the connection: open
  // files of the detached mount fail with ENOTCONN from now on.
  session_->CloseDevices();
  Status st = session_->status();
  if (!st.ok()) LOG_WARN("fuse: session ended with: {}", st.ToString());
  // Files still open commit what was written through them.
  ops_->CloseAll();
  LOG_INFO("fuse: {} stopped", mount_.path());
}

void FuseServer::TuneReadahead() const {
  // INIT can only lower the kernel's readahead (its offer is 128 KiB); the
  // bdi knob raises it. Best effort: needs root.
  uint64_t want_kb = config_.max_readahead.bytes / 1024;
  if (dev_ == 0 || want_kb <= info_.max_readahead / 1024 || ::geteuid() != 0) return;
  std::string knob = fmt::format("/sys/class/bdi/{}:{}/read_ahead_kb", ::major(dev_), ::minor(dev_));
  std::ofstream out(knob);
  if (out) out << want_kb;
  if (!out) {
    LOG_DEBUG("fuse: cannot raise readahead via {}", knob);
  } else {
    LOG_DEBUG("fuse: readahead raised to {} KiB", want_kb);
  }
}

size_t FuseServer::open_files() const { return ops_->open_files(); }

uint64_t FuseServer::interrupts_received() const {
  return session_ ? session_->processor().inflight().interrupts() : 0;
}

}  // namespace t0fs::fuse
