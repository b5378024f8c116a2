// `t0fs up`: a single-node t0fs in one command.
//
// Creates the cluster directory on first use (cluster_dir.h), then runs
// `t0fs meta`, `t0fs data` and `t0fs mount` as child processes of this
// binary, each logging to <dir>/logs/. Waits until each is ready before
// starting the next, prints where the file system is, and on Ctrl-C (or when
// any child dies) stops them in reverse order: the mount first, so nothing
// is left mounted. Children get SIGTERM if this process is killed.
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cli/admin.h"
#include "cli/cluster_dir.h"
#include "cli/command_util.h"
#include "cli/commands.h"
#include "common/config.h"
#include "common/lock_file.h"
#include "rpc/endpoint.h"
#include "rpc/proto/meta.pb.h"

namespace t0fs::cli {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

struct UpOptions {
  std::string dir = "t0fs-data";
  std::string mount = "t0fs-mnt";
  std::string meta_listen = "127.0.0.1:7700";
  std::string data_listen = "127.0.0.1:7701";
  std::string chunk_size = "64M";
  std::string log_level = "info";
  uint32_t nodes = 1;
};

struct Child {
  std::string name;
  pid_t pid = -1;
  std::string log;
};

Result<Child> Spawn(const std::string& name, std::vector<std::string> args, const std::string& log) {
  int log_fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (log_fd < 0) return Status::FromErrno(errno, "open " + log);
  pid_t parent = ::getpid();
  pid_t pid = ::fork();
  if (pid < 0) {
    ::close(log_fd);
    return Status::FromErrno(errno, "fork");
  }
  if (pid == 0) {
    // Die with the supervisor even if it is killed without a chance to stop us.
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (::getppid() != parent) ::_exit(1);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::dup2(log_fd, STDOUT_FILENO);
    ::dup2(log_fd, STDERR_FILENO);
    int null_fd = ::open("/dev/null", O_RDONLY);
    if (null_fd >= 0) ::dup2(null_fd, STDIN_FILENO);
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execv("/proc/self/exe", argv.data());
    ::_exit(127);
  }
  ::close(log_fd);
  return Child{name, pid, log};
}

// The child's exit status if it has exited.
std::optional<int> Reap(Child& child) {
  if (child.pid < 0) return 0;
  int status = 0;
  pid_t r = ::waitpid(child.pid, &status, WNOHANG);
  if (r != child.pid) return std::nullopt;
  child.pid = -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

void Stop(Child& child, std::chrono::seconds grace) {
  if (child.pid < 0) return;
  ::kill(child.pid, SIGTERM);
  auto deadline = Clock::now() + grace;
  while (Clock::now() < deadline) {
    if (Reap(child)) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  fmt::print(stderr, "t0fs up: {} did not stop within {}s; killing it\n", child.name, grace.count());
  ::kill(child.pid, SIGKILL);
  int status = 0;
  ::waitpid(child.pid, &status, 0);
  child.pid = -1;
}

std::string Tail(const std::string& path, size_t lines) {
  std::ifstream in(path);
  std::vector<std::string> all;
  for (std::string line; std::getline(in, line);) all.push_back(line);
  std::string out;
  for (size_t idx = all.size() > lines ? all.size() - lines : 0; idx < all.size(); ++idx) {
    out += "    " + all[idx] + "\n";
  }
  return out;
}

bool IsMounted(const std::string& path) {
  std::ifstream in("/proc/self/mountinfo");
  for (std::string line; std::getline(in, line);) {
    // Field 5 is the mount point, and the type follows " - ".
    std::istringstream fields(line);
    std::string id, parent, dev, root, point;
    fields >> id >> parent >> dev >> root >> point;
    if (point == path && line.find(" - fuse.t0fs ") != std::string::npos) return true;
  }
  return false;
}

// Polls `ready` until it is true, the child dies, or the timeout passes.
Status WaitReady(Child& child, std::chrono::seconds timeout, const std::function<bool()>& ready) {
  auto deadline = Clock::now() + timeout;
  while (Clock::now() < deadline) {
    if (auto code = Reap(child)) {
      return Status(StatusCode::kInternal, fmt::format("{} exited with status {}; the end of {}:\n{}", child.name,
                                                       *code, child.log, Tail(child.log, 10)));
    }
    if (ready()) return Status::Ok();
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return Status(StatusCode::kRpcTimeout, fmt::format("{} was not ready within {}s; see {}:\n{}", child.name,
                                                     timeout.count(), child.log, Tail(child.log, 10)));
}

class Supervisor {
 public:
  ~Supervisor() { StopAll(); }
  std::vector<Child> children;
  void StopAll() {
    // Reverse order: the mount goes first so nothing stays mounted.
    for (auto it = children.rbegin(); it != children.rend(); ++it) Stop(*it, std::chrono::seconds(15));
    children.clear();
  }
};

int RunUp(const UpOptions& o) {
  Status level = CheckLogLevel(o.log_level);
  if (!level.ok()) return Fail("up", level);
  auto chunk = ParseByteSize(o.chunk_size);
  if (!chunk.ok()) return Fail("up", chunk.status().WithContext("--chunk-size"));
  ClusterDirOptions dir_opts{o.meta_listen, o.data_listen, chunk->bytes};
  bool created = false;
  auto dir = ClusterDir::OpenOrCreate(o.dir, dir_opts, &created);
  if (!dir.ok()) return Fail("up", dir.status());
  auto lock = LockFile::Acquire(dir->root() + "/up.lock", "cluster directory " + dir->root());
  if (!lock.ok()) return Fail("up", lock.status());
  std::error_code ec;
  fs::create_directories(o.mount, ec);
  if (ec) return Fail("up", Status(StatusCode::kIoError, fmt::format("create {}: {}", o.mount, ec.message())));
  std::string mountpoint = fs::canonical(o.mount, ec).string();
  if (ec) return Fail("up", Status(StatusCode::kIoError, fmt::format("{}: {}", o.mount, ec.message())));
  fs::create_directories(dir->logs(), ec);
  fmt::print("t0fs up: {} cluster in {}\n", created ? "created a new" : "reusing the", dir->root());

  AdminOptions admin_opts;
  admin_opts.dir = dir->root();
  auto admin = ConnectAdmin(admin_opts);
  if (!admin.ok()) return Fail("up", admin.status());
  auto cluster_status = [&](pb::ClusterStatusRsp* rsp) {
    return admin->channel->Call(rpc::Method::kClusterStatus, pb::Empty(), rsp).ok();
  };

  Supervisor sup;
  auto start = [&](const std::string& name, std::vector<std::string> args) -> Status {
    ASSIGN_OR_RETURN(Child child, Spawn(name, std::move(args), dir->logs() + "/" + name + ".log"));
    sup.children.push_back(child);
    return Status::Ok();
  };
  std::string config = dir->config();
  Status st = start("meta", {"t0fs", "meta", "--config", config, "--log-level", o.log_level});
  if (st.ok()) {
    st = WaitReady(sup.children.back(), std::chrono::seconds(30), [&] {
      pb::ClusterStatusRsp rsp;
      return cluster_status(&rsp);
    });
  }
  // Data nodes: node i keeps volume<i> and listens on the data port + i.
  auto base = rpc::Endpoint::Parse(dir->data_address());
  if (!base.ok()) st = base.status().WithContext("--data-listen");
  std::vector<std::string> addresses;
  for (uint32_t idx = 0; st.ok() && idx < o.nodes; ++idx) {
    std::string volume = fmt::format("{}/volume{}", dir->root(), idx);
    std::error_code mk;
    fs::create_directories(volume, mk);
    std::string address = fmt::format("{}:{}", base->host, base->port + idx);
    addresses.push_back(address);
    std::string name = o.nodes == 1 ? "data" : fmt::format("data{}", idx + 1);
    st = start(name, {"t0fs", "data", "--config", config, "--log-level", o.log_level, "--listen", address,
                      "--volumes", volume});
  }
  uint64_t node = 0;
  std::string node_address;
  if (st.ok()) {
    st = WaitReady(sup.children.back(), std::chrono::seconds(30), [&] {
      pb::ClusterStatusRsp rsp;
      if (!cluster_status(&rsp)) return false;
      size_t up = 0;
      for (const auto& n : rsp.nodes()) {
        bool ours = std::find(addresses.begin(), addresses.end(), n.address()) != addresses.end();
        if (!ours || n.state() != "up") continue;
        ++up;
        if (n.address() == addresses.front()) {
          node = n.node();
          node_address = n.address();
        }
      }
      return up == addresses.size();
    });
  }
  if (st.ok()) {
    // The mount is a client of the first node (its local bypass).
    st = start("mount", {"t0fs", "mount", dir->meta_address(), mountpoint, "--config", config, "--secret-file",
                         dir->secret(), "--log-level", o.log_level, "--node-id", std::to_string(node)});
  }
  if (st.ok()) {
    st = WaitReady(sup.children.back(), std::chrono::seconds(30), [&] { return IsMounted(mountpoint); });
  }
  if (!st.ok()) {
    sup.StopAll();
    return Fail("up", st);
  }

  fmt::print("t0fs up: mounted at {}\n", mountpoint);
  if (o.nodes == 1) {
    fmt::print("  meta {}, data node {} on {}, logs in {}\n", dir->meta_address(), node, node_address, dir->logs());
  } else {
    fmt::print("  meta {}, {} data nodes on {}..{} (the mount is on node {}), logs in {}\n", dir->meta_address(),
               o.nodes, addresses.front(), addresses.back(), node, dir->logs());
    fmt::print("  objectives: t0fs objective set {}/DIR replicas=2 --dir {}\n", mountpoint, dir->root());
  }
  fmt::print("  try:   echo hello > {}/hello && cat {}/hello\n", mountpoint, mountpoint);
  fmt::print("  state: {} status --dir {}\n", "t0fs", dir->root());
  fmt::print("Press Ctrl-C to stop (unmounts, then stops the services; data stays in {}).\n", dir->root());
  std::fflush(stdout);

  // Wait for a stop signal or a child's death.
  sigset_t set;
  sigemptyset(&set);
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGCHLD}) sigaddset(&set, sig);
  int exit_code = 0;
  for (bool done = false; !done;) {
    timespec tick{1, 0};
    int sig = ::sigtimedwait(&set, nullptr, &tick);
    if (sig == SIGINT || sig == SIGTERM || sig == SIGHUP) {
      fmt::print("\nt0fs up: stopping\n");
      done = true;
      break;
    }
    for (Child& child : sup.children) {
      if (auto code = Reap(child)) {
        fmt::print(stderr, "t0fs up: {} exited unexpectedly (status {}); stopping the rest. End of {}:\n{}",
                   child.name, *code, child.log, Tail(child.log, 10));
        exit_code = 1;
        done = true;
      }
    }
  }
  sup.StopAll();
  if (IsMounted(mountpoint)) {
    fmt::print(stderr, "t0fs up: {} is still mounted; run: umount -l {}\n", mountpoint, mountpoint);
    return 1;
  }
  fmt::print("t0fs up: stopped; {} unmounted\n", mountpoint);
  return exit_code;
}

}  // namespace

void RegisterUp(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand("up", "Run a single-node t0fs (meta + data + mount) until Ctrl-C");
  auto o = std::make_shared<UpOptions>();
  cmd->add_option("--dir", o->dir, "cluster directory (created on first use; reused after)")->capture_default_str();
  cmd->add_option("--mount", o->mount, "where to mount (created if missing)")->capture_default_str();
  cmd->add_option("--meta-listen", o->meta_listen, "meta address for a new cluster")->capture_default_str();
  cmd->add_option("--data-listen", o->data_listen, "data node address for a new cluster")->capture_default_str();
  cmd->add_option("--chunk-size", o->chunk_size, "chunk size of files in a new cluster")->capture_default_str();
  cmd->add_option("--log-level", o->log_level, "trace, debug, info, warn or error")->capture_default_str();
  cmd->add_option("--nodes", o->nodes, "data nodes to run on this machine (own volume and port each)")
      ->capture_default_str()
      ->check(CLI::Range(1, 64));
  cmd->callback([o, exit_code] {
    // Children inherit the blocked mask and reset it before exec.
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGCHLD);
    ::sigprocmask(SIG_BLOCK, &set, nullptr);
    *exit_code = RunUp(*o);
  });
}

}  // namespace t0fs::cli
