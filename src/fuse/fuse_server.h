// FuseServer: a t0fs FUSE mount served by libt0fs. The CLI's `t0fs mount`
// is Mount() + Run(), with Stop() called from its signal thread.
//
// Built directly on the kernel protocol over /dev/fuse (no libfuse; see
// docs/fuse.md): Mount() mounts (mount(2) as root, fusermount3 otherwise;
// a dead mount left at the path is detached first), answers INIT, starts
// MountConfig::threads workers and returns with the file system live.
// Run() blocks until the mount goes away (umount / fusermount3 -u) or Stop().
//
//   auto client = t0fs::client::Client::Connect(options);
//   auto server = t0fs::fuse::FuseServer::Mount(**client, "/mnt/t0fs", {});
//   if (!server.ok()) return Fail(server.status());
//   std::thread([&] { WaitForSignal(); (*server)->Stop(); }).detach();
//   Status st = (*server)->Run();
//
// Ownership: the Client must outlive the FuseServer. Destroying the server
// stops it. Workers block asynchronous signals, so SIGINT/SIGTERM go to the
// caller's threads (block them there and sigwait(), or install handlers).
//
// Thread safety: Run, Stop and the accessors may be called from any thread;
// Stop is idempotent and may race with Run and with an external unmount.
#pragma once

#include <sys/types.h>

#include <memory>
#include <mutex>
#include <string>

#include "common/status.h"
#include "fuse/fuse_metrics.h"
#include "fuse/mount_config.h"
#include "fuse/ops/passthrough.h"
#include "fuse/protocol/init.h"
#include "fuse/protocol/mount.h"
#include "t0fs/client.h"

namespace t0fs::fuse {

class ChangeWatcher;
class UringQueues;

class FuseOps;
class Session;

class FuseServer {
 public:
  // Mounts `client`'s file system at `mountpoint` (an existing directory).
  // Errors: kNotFound (no mountpoint, no /dev/fuse), kNotDirectory, kBusy (a
  // live FUSE mount is already there), kFuseProtocol (INIT failed), or the
  // mount(2)/fusermount3 failure. With `registry`, every request's op,
  // result and latency and the mount's gauges are recorded there
  // (fuse_metrics.h); it must outlive the server.
  static Result<std::unique_ptr<FuseServer>> Mount(client::Client& client,
                                                   const std::string& mountpoint,
                                                   const MountConfig& config,
                                                   metrics::Registry* registry = nullptr);
  ~FuseServer();
  FuseServer(const FuseServer&) = delete;
  FuseServer& operator=(const FuseServer&) = delete;

  // Blocks until the file system is unmounted or Stop() is called; OK then,
  // or the error a worker died of.
  Status Run();
  // Unmounts (lazily: processes with open files get ENOTCONN once the
  // workers are gone), stops and joins the workers, then closes the files
  // still open (committing their sizes). Never sends a request to its own
  // mount. Bounded: the Client's retries are limited to a short grace first
  // (Client::LimitRetries), so a meta that is gone delays it by seconds, not
  // minutes. Safe from a signal-handling thread (not from an async signal
  // handler).
  void Stop();

  // What INIT negotiated (protocol minor, flags, passthrough offered).
  const NegotiatedInit& info() const { return info_; }
  bool passthrough_offered() const { return info_.passthrough_offered; }
  // One line: whether passthrough is in use, and why not.
  std::string DescribePassthrough() const;
  PassthroughTable::Stats passthrough_stats() const;
  // One line: whether requests come through FUSE over io_uring, and why not.
  std::string DescribeIoUring() const;
  bool io_uring() const;
  // Canonical absolute path of the mount.
  const std::string& mountpoint() const { return mount_.path(); }

  // Handles currently open (files the kernel has not released).
  size_t open_files() const;
  // INTERRUPT requests received since the mount.
  uint64_t interrupts_received() const;

 private:
  FuseServer(client::Client& client, const MountConfig& config);
  // Registers the gauges read from the session and ops (removed by ~FuseServer).
  void AddGauges(metrics::Registry& registry);
  static constexpr const char* kGaugeNames[] = {"t0fs_fuse_requests_in_flight",
                                                "t0fs_fuse_interrupts_total",
                                                "t0fs_fuse_open_files",
                                                "t0fs_fuse_threads",
                                                "t0fs_fuse_passthrough_enabled",
                                                "t0fs_fuse_opens_total",
                                                "t0fs_fuse_passthrough_backing_files",
                                                "t0fs_fuse_io_uring",
                                                "t0fs_fuse_io_uring_requests_total",
                                                "t0fs_fuse_invalidations_total",
                                                "t0fs_fuse_stale_names_total",
                                                "t0fs_fuse_open_attr_invalidations_total",
                                                "t0fs_fuse_changes_held_back_total"};
  void TuneReadahead() const;

  const MountConfig config_;
  metrics::Registry* registry_ = nullptr;
  std::unique_ptr<FuseMetrics> metrics_;  // outlives session_ (declared before it)
  FuseMount mount_;
  NegotiatedInit info_;
  dev_t dev_ = 0;  // the mount's device number (0: unknown)
  std::unique_ptr<FuseOps> ops_;
  std::unique_ptr<Session> session_;
  std::unique_ptr<ChangeWatcher> watcher_;  // other clients' changes; stopped before the session
  std::unique_ptr<UringQueues> uring_;  // FUSE over io_uring, when in use (destroyed before session_)
  std::string uring_error_;             // why it could not start
  std::mutex stop_mu_;  // serializes Stop()
  bool stopped_ = false;
};

}  // namespace t0fs::fuse
