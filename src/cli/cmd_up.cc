// `t0fs up`: a t0fs cluster of this machine in one command.
//
// Creates the cluster directory on first use (cluster_dir.h), makes the mount
// point ready (mount_point.h: a live mount there is refused, a dead one
// detached), then runs `t0fs meta` (one per --meta-servers, over the store
// of --store), `t0fs data` (one per --nodes) and `t0fs mount` as child
// processes (supervisor.h), each logging to
// <dir>/logs/, each started once the previous one is ready.
//
// While it runs, a child that dies is reported and restarted after a
// back-off (--restart always, the default) or left down (--restart never);
// the others keep serving. A dead mount child's mount point is detached
// before the new mount. On SIGINT, SIGTERM or SIGHUP `up` stops them in
// order — the mount first (so nothing stays mounted and open files are
// released while meta still answers), then the data nodes, then meta —
// within kStopBudget; a second signal kills what is left at once.
#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/file.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include "cli/admin.h"
#include "cli/cluster_dir.h"
#include "cli/command_util.h"
#include "cli/commands.h"
#include "cli/mount_point.h"
#include "cli/supervisor.h"
#include "common/config.h"
#include "common/lock_file.h"
#include "common/url_redact.h"
#include "meta/store/store_url.h"
#include "t0fs/admin.h"

namespace t0fs::cli {
namespace {

namespace fs = std::filesystem;
using Clock = SupervisorClock;
using std::chrono::milliseconds;

// The whole ordered stop, and the share of it each stage may use before
// what is left of it is killed: the mount, then data nodes, then meta.
constexpr milliseconds kStopBudget{2800};
constexpr milliseconds kMountStopShare{1500};
constexpr milliseconds kMetaStopShare{600};
constexpr std::chrono::seconds kStartTimeout{30};

struct UpOptions {
  bool stop = false;  // --stop: stop the `t0fs up` of `dir` instead
  std::string dir = "t0fs-data";
  std::string mount = "t0fs-mnt";
  std::string meta_listen = "127.0.0.1:7700";
  std::string data_listen = "127.0.0.1:7701";
  bool meta_listen_given = false;
  bool data_listen_given = false;
  std::string chunk_size = "64M";
  std::string log_level = "info";
  std::string restart = "always";
  uint32_t nodes = 1;
  std::string store;          // empty: SQLite in the cluster directory
  uint32_t meta_servers = 0;  // 0: as recorded (1 for a new cluster)
  // The object tier protect=object copies to, passed to every meta server
  // (empty: none, or as the cluster's config file says).
  std::string object_endpoint;
  std::string object_bucket;
  std::string object_region;
  std::string object_credentials;
};

// The meta flags of the object tier options that are set.
std::vector<std::string> ObjectTierFlags(const UpOptions& o) {
  std::vector<std::string> out;
  auto add = [&](const char* flag, const std::string& value) {
    if (value.empty()) return;
    out.push_back(flag);
    out.push_back(value);
  };
  add("--object-endpoint", o.object_endpoint);
  add("--object-bucket", o.object_bucket);
  add("--object-region", o.object_region);
  // Absolute: data nodes read the file by the path meta hands them.
  std::error_code ec;
  add("--object-credentials",
      o.object_credentials.empty() ? "" : fs::absolute(o.object_credentials, ec).string());
  return out;
}

// The stop signals (SIGINT, SIGTERM, SIGHUP), blocked in every thread since
// main, are taken here; SIGCHLD (blocked by RegisterUp) only wakes the wait.
class Signals {
 public:
  // Waits up to `wait` for a signal; returns a stop signal, or 0.
  int Wait(milliseconds wait) {
    sigset_t set;
    sigemptyset(&set);
    for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGCHLD}) sigaddset(&set, sig);
    timespec timeout{static_cast<time_t>(wait.count() / 1000),
                     static_cast<long>(wait.count() % 1000) * 1000000};
    int sig = ::sigtimedwait(&set, nullptr, &timeout);
    if (sig == SIGINT || sig == SIGTERM || sig == SIGHUP) {
      ++stops_;
      return sig;
    }
    return 0;
  }
  // True once a stop signal arrived beyond `seen` of them.
  bool MoreThan(int seen) {
    (void)Wait(milliseconds(0));
    return stops_ > seen;
  }
  int stops() const { return stops_; }

 private:
  int stops_ = 0;
};

class Up {
 public:
  Up(const UpOptions& o, ClusterDir dir, std::string mountpoint, RestartPolicy policy,
     AdminTarget admin)
      : o_(o),
        dir_(std::move(dir)),
        mountpoint_(std::move(mountpoint)),
        policy_(policy),
        admin_(std::move(admin)) {}

  // Starts every child in order; 0 when the cluster is up, else the exit code.
  int Start();
  // Supervises until a stop signal; returns the exit code.
  int Run();

 private:
  Status StartChild(ChildProcess& child);
  // Polls `ready` until it holds, the child dies, a stop signal arrives
  // (kInterrupted) or kStartTimeout passes.
  Status WaitReady(ChildProcess& child, const std::function<bool()>& ready);
  bool NodesUp();
  void OnDeath(ChildProcess& child, int code);
  void StartDueRestarts();
  // Detaches our mount if it is still there (its daemon died).
  void DetachDeadMount();
  // The ordered stop; returns the exit code.
  int StopAll(bool after_failure);
  std::vector<ChildProcess*> DataNodes();
  std::vector<ChildProcess*> MetaServers();
  // Every child: meta servers, data nodes, the mount.
  std::vector<ChildProcess*> All();

  const UpOptions& o_;
  ClusterDir dir_;
  std::string mountpoint_;
  RestartPolicy policy_;
  AdminTarget admin_;
  Signals signals_;
  std::vector<std::unique_ptr<ChildProcess>> metas_;
  std::unique_ptr<ChildProcess> mount_;
  std::vector<std::unique_ptr<ChildProcess>> data_;
  std::vector<std::string> addresses_;
  uint64_t mount_node_ = 0;
  int mount_id_ = 0;             // the mountinfo id of our live mount, 0 when none
  bool awaiting_mount_ = false;  // a restarted mount child that is not mounted yet
};

Status Up::StartChild(ChildProcess& child) {
  Status st = child.Start();
  if (!st.ok()) return st.WithContext("start " + child.name());
  return Status::Ok();
}

Status Up::WaitReady(ChildProcess& child, const std::function<bool()>& ready) {
  auto deadline = Clock::now() + kStartTimeout;
  while (Clock::now() < deadline) {
    if (auto code = child.Reap()) {
      return Status(StatusCode::kInternal,
                    fmt::format("{} exited with status {}; the end of {}:\n{}", child.name(), *code,
                                child.log(), TailOf(child.log(), 10)));
    }
    if (ready()) return Status::Ok();
    if (signals_.Wait(milliseconds(100)) != 0)
      return Status(StatusCode::kInterrupted, "stopped while starting");
  }
  return Status(StatusCode::kRpcTimeout,
                fmt::format("{} was not ready within {}s; see {}:\n{}", child.name(),
                            kStartTimeout.count(), child.log(), TailOf(child.log(), 10)));
}

bool Up::NodesUp() {
  auto cluster = admin_.admin->GetStatus();
  if (!cluster.ok()) return false;
  size_t up = 0;
  const auto now = SupervisorClock::now();
  for (const client::NodeStatus& n : cluster->nodes) {
    auto ours = std::find(addresses_.begin(), addresses_.end(), n.address);
    if (ours == addresses_.end() || n.state != "up") continue;
    // Up as of a heartbeat from the node we started, not from its previous
    // run (meta keeps a node's last heartbeat across restarts).
    const auto& child = *data_[static_cast<size_t>(ours - addresses_.begin())];
    const auto running =
        std::chrono::duration_cast<std::chrono::milliseconds>(now - child.started_at());
    if (n.last_heartbeat_ms_ago >= static_cast<uint64_t>(running.count())) continue;
    ++up;
    if (n.address == addresses_.front()) mount_node_ = n.node.value();
  }
  return up == addresses_.size();
}

std::vector<ChildProcess*> Up::DataNodes() {
  std::vector<ChildProcess*> out;
  for (auto& d : data_) out.push_back(d.get());
  return out;
}

std::vector<ChildProcess*> Up::MetaServers() {
  std::vector<ChildProcess*> out;
  for (auto& m : metas_) out.push_back(m.get());
  return out;
}

std::vector<ChildProcess*> Up::All() {
  std::vector<ChildProcess*> out = MetaServers();
  for (ChildProcess* d : DataNodes()) out.push_back(d);
  if (mount_) out.push_back(mount_.get());
  return out;
}

int Up::Start() {
  const std::string config = dir_.config();
  // Meta servers one after the other: the first creates the store's schema.
  Status st;
  for (uint32_t idx = 0; st.ok() && idx < dir_.meta_servers(); ++idx) {
    const std::string& address = dir_.meta_listen(idx);
    std::string name = dir_.meta_servers() == 1 ? "meta" : fmt::format("meta{}", idx + 1);
    std::vector<std::string> argv{"t0fs",        "meta",       "--config", config,
                                  "--log-level", o_.log_level, "--listen", address};
    for (std::string& flag : ObjectTierFlags(o_)) argv.push_back(std::move(flag));
    metas_.push_back(
        std::make_unique<ChildProcess>(name, std::move(argv), dir_.logs() + "/" + name + ".log"));
    st = StartChild(*metas_.back());
    if (!st.ok()) break;
    AdminOptions one;
    one.dir = dir_.root();
    one.meta = address;
    auto admin = ConnectAdmin(one);
    if (!admin.ok()) {
      st = admin.status();
      break;
    }
    st = WaitReady(*metas_.back(), [&] { return admin->admin->GetStatus().ok(); });
  }
  // Data nodes: node i keeps volume<i> and listens on the data port + i.
  for (uint32_t idx = 0; st.ok() && idx < o_.nodes; ++idx) {
    std::string volume = dir_.volume(idx);
    std::error_code mk;
    fs::create_directories(volume, mk);
    auto address = dir_.data_address(idx);
    if (!address.ok()) {
      st = address.status();
      break;
    }
    addresses_.push_back(*address);
    std::string name = o_.nodes == 1 ? "data" : fmt::format("data{}", idx + 1);
    data_.push_back(std::make_unique<ChildProcess>(
        name,
        std::vector<std::string>{"t0fs", "data", "--config", config, "--log-level", o_.log_level,
                                 "--listen", *address, "--volumes", volume},
        dir_.logs() + "/" + name + ".log"));
    st = StartChild(*data_.back());
  }
  if (st.ok()) st = WaitReady(*data_.back(), [&] { return NodesUp(); });
  if (st.ok()) {
    // The mount is a client of the first node (its local bypass).
    mount_ = std::make_unique<ChildProcess>(
        "mount",
        std::vector<std::string>{"t0fs", "mount", dir_.meta_address(), mountpoint_, "--config",
                                 config, "--secret-file", dir_.secret(), "--log-level",
                                 o_.log_level, "--node-id", std::to_string(mount_node_)},
        dir_.logs() + "/mount.log");
    st = StartChild(*mount_);
  }
  if (st.ok()) st = WaitReady(*mount_, [&] { return (mount_id_ = T0fsMountId(mountpoint_)) != 0; });
  if (!st.ok()) {
    bool interrupted = st.code() == StatusCode::kInterrupted;
    if (!interrupted) Fail("up", st);
    StopAll(true);
    return interrupted ? 130 : 1;
  }

  fmt::print("t0fs up: mounted at {}\n", mountpoint_);
  if (dir_.meta_servers() > 1) {
    fmt::print("  {} meta servers on {} over {}\n", dir_.meta_servers(), dir_.meta_address(),
               RedactUrlPassword(dir_.store()));
  } else if (!dir_.store().starts_with("sqlite:")) {
    fmt::print("  metadata in {}\n", RedactUrlPassword(dir_.store()));
  }
  if (o_.nodes == 1) {
    fmt::print("  meta {}, data node {} on {}, logs in {}\n", dir_.meta_address(), mount_node_,
               addresses_.front(), dir_.logs());
  } else {
    fmt::print("  meta {}, {} data nodes on {}..{} (the mount is on node {}), logs in {}\n",
               dir_.meta_address(), o_.nodes, addresses_.front(), addresses_.back(), mount_node_,
               dir_.logs());
    fmt::print("  objectives: t0fs objective set {}/DIR replicas=2\n", mountpoint_);
  }
  fmt::print("  try:   echo hello > {}/hello && cat {}/hello\n", mountpoint_, mountpoint_);
  fmt::print("  state: t0fs status --dir {}\n", dir_.root());
  fmt::print("  a child that dies is {}\n", policy_ == RestartPolicy::kAlways
                                                ? "restarted (--restart always)"
                                                : "reported and left down (--restart never)");
  fmt::print("Press Ctrl-C to stop (unmounts, then stops the services; data stays in {}).\n",
             dir_.root());
  std::fflush(stdout);
  return 0;
}

void Up::OnDeath(ChildProcess& child, int code) {
  fmt::print(stderr, "t0fs up: {} exited unexpectedly (status {}); end of {}:\n{}", child.name(),
             code, child.log(), TailOf(child.log(), 10));
  if (&child == mount_.get()) {
    // Its daemon is gone, so the mount is dead: every access fails with
    // ENOTCONN until it is detached. Detached right before the new mount
    // (so that meanwhile nobody writes into the directory beneath it), or
    // now when there will be none.
    awaiting_mount_ = false;
    if (policy_ == RestartPolicy::kNever) DetachDeadMount();
  }
  if (policy_ == RestartPolicy::kNever) {
    fmt::print(stderr, "t0fs up: {} stays down (--restart never); the others keep running\n",
               child.name());
  } else {
    milliseconds delay = child.NextBackoff();
    child.restart_at = Clock::now() + delay;
    fmt::print(stderr, "t0fs up: restarting {} in {:.1f}s\n", child.name(), delay.count() / 1000.0);
  }
  std::fflush(stderr);
}

void Up::DetachDeadMount() {
  if (DetachIfStillMounted(mountpoint_, mount_id_)) {
    fmt::print(stderr, "t0fs up: detached the dead mount at {}\n", mountpoint_);
  }
  mount_id_ = 0;
}

void Up::StartDueRestarts() {
  for (ChildProcess* child : All()) {
    if (child->running() || !child->restart_at || Clock::now() < *child->restart_at) continue;
    ++child->restarts;
    if (child == mount_.get()) DetachDeadMount();
    Status st = child->Start();
    if (!st.ok()) {
      fmt::print(stderr, "t0fs up: cannot restart {}: {}\n", child->name(), st.ToString());
      child->restart_at = Clock::now() + child->NextBackoff();
      continue;
    }
    fmt::print(stderr, "t0fs up: restarted {} (pid {}, restart {})\n", child->name(), child->pid(),
               child->restarts);
    if (child == mount_.get()) awaiting_mount_ = true;
  }
  if (awaiting_mount_ && (mount_id_ = T0fsMountId(mountpoint_)) != 0) {
    awaiting_mount_ = false;
    fmt::print(stderr, "t0fs up: mounted again at {}\n", mountpoint_);
  }
  std::fflush(stderr);
}

int Up::Run() {
  for (;;) {
    int sig = signals_.Wait(milliseconds(200));
    if (sig != 0) {
      fmt::print("\nt0fs up: stopping (signal {}): the mount, then data, then meta\n", sig);
      std::fflush(stdout);
      return StopAll(false);
    }
    for (ChildProcess* child : All()) {
      if (auto code = child->Reap()) OnDeath(*child, *code);
    }
    StartDueRestarts();
  }
}

int Up::StopAll(bool after_failure) {
  const auto start = Clock::now();
  const auto deadline = start + kStopBudget;
  const int seen = signals_.stops();
  auto hurry = [&] { return signals_.MoreThan(seen); };
  std::vector<std::string> killed;
  auto stop = [&](std::vector<ChildProcess*> group, Clock::time_point by) {
    std::erase(group, nullptr);
    for (const std::string& name : StopGroup(group, by, hurry)) killed.push_back(name);
  };
  // The mount first: it releases open files while meta still answers, and
  // nothing stays mounted.
  stop({mount_.get()}, start + kMountStopShare);
  // Its daemon has exited: a mount left there is dead. (A restarted mount
  // child may have mounted since its readiness was last checked.)
  if (awaiting_mount_) mount_id_ = T0fsMountId(mountpoint_);
  bool detached = DetachIfStillMounted(mountpoint_, mount_id_);
  mount_id_ = 0;
  stop(DataNodes(), deadline - kMetaStopShare);
  stop(MetaServers(), deadline);
  double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  for (const std::string& name : killed) {
    fmt::print(stderr, "t0fs up: {} did not stop in time; killed it (see {}/{}.log)\n", name,
               dir_.logs(), name);
  }
  if (detached)
    fmt::print(stderr, "t0fs up: the mount daemon left {} mounted; detached it\n", mountpoint_);
  if (after_failure) return 1;
  fmt::print("t0fs up: stopped in {:.1f}s; {} unmounted\n", seconds, mountpoint_);
  return 0;
}

int RunUp(const UpOptions& o) {
  Status level = CheckLogLevel(o.log_level);
  if (!level.ok()) return Fail("up", level);
  auto chunk = ParseByteSize(o.chunk_size);
  if (!chunk.ok()) return Fail("up", chunk.status().WithContext("--chunk-size"));
  auto policy = ParseRestartPolicy(o.restart);
  if (!policy.ok()) return Fail("up", policy.status());
  if (!o.store.empty()) {
    if (auto store = meta::ParseStoreUrl(o.store); !store.ok()) {
      return Fail("up", store.status().WithContext("--store"));
    }
  }

  // The mount point first: a live mount there is refused before anything
  // is created or started.
  auto mountpoint = ResolveMountPoint(o.mount);
  if (!mountpoint.ok()) return Fail("up", mountpoint.status().WithContext("--mount"));
  std::vector<std::string> notes;
  if (Status st = ClaimMountPoint(*mountpoint, &notes); !st.ok()) return Fail("up", st);
  for (const std::string& note : notes) fmt::print("t0fs up: {}\n", note);
  notes.clear();

  ClusterDirOptions dir_opts;
  dir_opts.meta_listen = o.meta_listen;
  dir_opts.data_listen = o.data_listen;
  dir_opts.meta_listen_given = o.meta_listen_given;
  dir_opts.data_listen_given = o.data_listen_given;
  dir_opts.data_nodes = o.nodes;
  dir_opts.chunk_size = chunk->bytes;
  dir_opts.store = o.store;
  dir_opts.meta_servers = o.meta_servers;
  ClusterDirOrigin origin = ClusterDirOrigin::kReused;
  auto dir = ClusterDir::OpenOrCreate(o.dir, dir_opts, &origin, &notes);
  if (!dir.ok()) return Fail("up", dir.status());
  auto lock = LockFile::Acquire(dir->root() + "/up.lock", "cluster directory " + dir->root());
  if (!lock.ok()) return Fail("up", lock.status());
  if (origin == ClusterDirOrigin::kReused) {
    if (Status st = dir->CheckPortsFree(o.nodes); !st.ok()) return Fail("up", st);
  }
  std::error_code ec;
  fs::create_directories(dir->logs(), ec);
  const char* what = origin == ClusterDirOrigin::kCreated     ? "created a new"
                     : origin == ClusterDirOrigin::kCompleted ? "completed the unfinished"
                                                              : "reusing the";
  fmt::print("t0fs up: {} cluster in {}\n", what, dir->root());
  for (const std::string& note : notes) fmt::print("t0fs up: {}\n", note);
  std::fflush(stdout);

  AdminOptions admin_opts;
  admin_opts.dir = dir->root();
  auto admin = ConnectAdmin(admin_opts);
  if (!admin.ok()) return Fail("up", admin.status());
  Up up(o, *dir, *mountpoint, *policy, std::move(*admin));
  if (int code = up.Start(); code != 0) return code;
  return up.Run();
}

// `t0fs up --stop`: signals the `t0fs up` holding `dir`'s lock, as Ctrl-C
// would, and waits until it has unmounted and stopped its children (the
// lock is free). Nothing running there is not an error.
int StopUp(const std::string& dir) {
  constexpr auto kWait = std::chrono::seconds(30);
  const std::string root = fs::absolute(dir).lexically_normal().string();
  const std::string path = root + "/up.lock";
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid() && errno == ENOENT) {
    fmt::print("t0fs up: no t0fs up runs on {} (no {})\n", root, path);
    return 0;
  }
  if (!fd.valid()) return Fail("up", Status::FromErrno(errno, "open " + path));
  auto held = [&] {
    if (::flock(fd.get(), LOCK_SH | LOCK_NB) != 0) return true;
    ::flock(fd.get(), LOCK_UN);
    return false;
  };
  if (!held()) {
    fmt::print("t0fs up: no t0fs up runs on {}\n", root);
    return 0;
  }
  char buf[32] = {};
  const ssize_t n = ::pread(fd.get(), buf, sizeof buf - 1, 0);
  const pid_t pid = n > 0 ? static_cast<pid_t>(std::strtol(buf, nullptr, 10)) : 0;
  if (pid <= 1)
    return Fail("up",
                Status(StatusCode::kInternal, fmt::format("{} names no pid; not stopped", path)));
  if (::kill(pid, SIGTERM) != 0 && errno != ESRCH) {
    return Fail("up", Status::FromErrno(errno, fmt::format("signal pid {}", pid)));
  }
  fmt::print("t0fs up: stopping the t0fs up of {} (pid {})\n", root, pid);
  std::fflush(stdout);
  const auto start = std::chrono::steady_clock::now();
  while (held()) {
    if (std::chrono::steady_clock::now() - start > kWait) {
      return Fail(
          "up",
          Status(StatusCode::kBusy,
                 fmt::format(
                     "pid {} still runs after {} s; `kill -9 {}`, then `t0fs umount` its mount",
                     pid, kWait.count(), pid)));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  fmt::print("t0fs up: stopped in {:.1f}s\n",
             std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  return 0;
}

}  // namespace

void RegisterUp(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand(
      "up", "Run a t0fs cluster of this machine (meta + data + mount) until Ctrl-C");
  auto o = std::make_shared<UpOptions>();
  cmd->add_option("--dir", o->dir, "cluster directory (created on first use; reused after)")
      ->capture_default_str();
  cmd->add_flag(
      "--stop", o->stop,
      "stop the t0fs up running on --dir (as Ctrl-C would: unmount, then stop the services) and "
      "wait until it has; nothing running is not an error");
  cmd->add_option("--mount", o->mount, "where to mount (created if missing)")
      ->capture_default_str();
  auto* meta = cmd->add_option(
      "--meta-listen", o->meta_listen,
      "meta address for a new cluster (default: 127.0.0.1:7700, or the next free port)");
  auto* data = cmd->add_option(
      "--data-listen", o->data_listen,
      "first data node address for a new cluster (default: 127.0.0.1:7701, or the next "
      "free ports)");
  cmd->add_option("--chunk-size", o->chunk_size, "chunk size of files in a new cluster")
      ->capture_default_str();
  cmd->add_option("--log-level", o->log_level, "trace, debug, info, warn or error")
      ->capture_default_str();
  cmd->add_option("--nodes", o->nodes,
                  "data nodes to run on this machine (own volume and port each)")
      ->capture_default_str()
      ->check(CLI::Range(1, 64));
  cmd->add_option("--store", o->store,
                  "metadata store URL for a new cluster (default: SQLite in --dir); e.g. "
                  "postgresql://t0fs@127.0.0.1:5432/t0fs, a database you created");
  cmd->add_option("--meta-servers", o->meta_servers,
                  "meta servers for a new cluster, on consecutive ports from --meta-listen "
                  "(default 1; more need a PostgreSQL --store); clients spread over them")
      ->check(CLI::Range(1, 16));
  cmd->add_option("--object-endpoint", o->object_endpoint,
                  "S3 endpoint (http://host:port) of the object tier that protect=object "
                  "copies chunks to (AWS, Ceph RGW, MinIO)");
  cmd->add_option("--object-bucket", o->object_bucket,
                  "the object tier's bucket (created beforehand)");
  cmd->add_option("--object-region", o->object_region, "the object tier's region");
  cmd->add_option("--object-credentials", o->object_credentials,
                  "file (mode 0600) with the object tier's access_key = and secret_key = lines");
  cmd->add_option(
         "--restart", o->restart,
         "when a child dies: always (restart it, with a back-off) or never (leave it down)")
      ->capture_default_str();
  cmd->callback([o, meta, data, exit_code] {
    if (o->stop) {
      *exit_code = StopUp(o->dir);
      return;
    }
    o->meta_listen_given = meta->count() > 0;
    o->data_listen_given = data->count() > 0;
    // Children inherit the blocked mask and reset it before exec.
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGCHLD);
    ::sigprocmask(SIG_BLOCK, &set, nullptr);
    *exit_code = RunUp(*o);
  });
}

}  // namespace t0fs::cli
