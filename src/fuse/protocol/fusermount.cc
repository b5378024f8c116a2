#include "fuse/protocol/fusermount.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <fmt/format.h>

extern char** environ;

namespace t0fs::fuse {
namespace {

Result<std::string> FindFusermount() {
  std::vector<std::string> candidates = {"/usr/bin/fusermount3", "/bin/fusermount3",
                                         "/usr/local/bin/fusermount3"};
  if (const char* path = std::getenv("PATH")) {
    std::string_view rest(path);
    while (!rest.empty()) {
      size_t colon = rest.find(':');
      std::string_view dir = rest.substr(0, colon);
      if (!dir.empty()) candidates.push_back(fmt::format("{}/fusermount3", dir));
      if (colon == std::string_view::npos) break;
      rest.remove_prefix(colon + 1);
    }
  }
  for (const auto& candidate : candidates) {
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return Status(StatusCode::kNotFound,
                "fusermount3 not found (install the fuse3 package, or mount as root)");
}

// Starts `args` with `extra_env` added and `keep_fd` inherited; returns the
// child's pid. Between fork and exec only async-signal-safe calls are made, so
// this is safe in a multi-threaded process.
Result<pid_t> Spawn(const std::string& path, const std::vector<std::string>& args,
                    const std::string& extra_env, int keep_fd) {
  std::vector<char*> argv;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  std::vector<char*> envp;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    if (std::strncmp(*e, "_FUSE_COMMFD=", 13) != 0) envp.push_back(*e);
  }
  if (!extra_env.empty()) envp.push_back(const_cast<char*>(extra_env.c_str()));
  envp.push_back(nullptr);

  pid_t pid = ::fork();
  if (pid < 0) return Status::FromErrno(errno, "fork for fusermount3");
  if (pid == 0) {
    if (keep_fd >= 0) ::fcntl(keep_fd, F_SETFD, 0);
    ::execve(path.c_str(), argv.data(), envp.data());
    ::_exit(127);
  }
  return pid;
}

Result<int> Wait(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return Status::FromErrno(errno, "waitpid fusermount3");
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

Result<UniqueFd> ReceiveFd(int sock) {
  char byte = 0;
  iovec iov{&byte, 1};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))];
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof(control);
  ssize_t n;
  do {
    n = ::recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
  } while (n < 0 && errno == EINTR);
  if (n < 0) return Status::FromErrno(errno, "receive /dev/fuse fd from fusermount3");
  if (n == 0) return Status(StatusCode::kIoError, "fusermount3 sent no fd");
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS &&
        c->cmsg_len >= CMSG_LEN(sizeof(int))) {
      int fd;
      std::memcpy(&fd, CMSG_DATA(c), sizeof(int));
      return UniqueFd(fd);
    }
  }
  return Status(StatusCode::kIoError, "fusermount3 reply carried no fd");
}

}  // namespace

Result<UniqueFd> FusermountMount(const std::string& mountpoint, const std::string& options) {
  ASSIGN_OR_RETURN(std::string path, FindFusermount());
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
    return Status::FromErrno(errno, "socketpair for fusermount3");
  }
  UniqueFd ours(sv[0]);
  UniqueFd theirs(sv[1]);
  ASSIGN_OR_RETURN(pid_t pid, Spawn(path, {"fusermount3", "-o", options, "--", mountpoint},
                                     fmt::format("_FUSE_COMMFD={}", theirs.get()), theirs.get()));
  (void)theirs.Close();  // so recvmsg sees EOF if fusermount3 dies without sending
  auto fd = ReceiveFd(ours.get());
  ASSIGN_OR_RETURN(int code, Wait(pid));
  if (!fd.ok()) {
    return Status(StatusCode::kIoError,
                  fmt::format("fusermount3 -o {} -- {} failed (exit {}); see its message above",
                              options, mountpoint, code));
  }
  return fd;
}

Status FusermountUnmount(const std::string& mountpoint) {
  ASSIGN_OR_RETURN(std::string path, FindFusermount());
  ASSIGN_OR_RETURN(pid_t pid,
                   Spawn(path, {"fusermount3", "-u", "-z", "-q", "--", mountpoint}, "", -1));
  ASSIGN_OR_RETURN(int code, Wait(pid));
  if (code != 0) {
    return Status(StatusCode::kIoError,
                  fmt::format("fusermount3 -u -z {} failed (exit {})", mountpoint, code));
  }
  return Status::Ok();
}

}  // namespace t0fs::fuse
