#include "cli/ports.h"

#include <fmt/format.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/fd.h"

namespace t0fs::cli {

bool PortFree(const std::string& host, uint16_t port) {
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  std::string service = std::to_string(port);
  if (::getaddrinfo(host.empty() ? nullptr : host.c_str(), service.c_str(), &hints, &found) != 0) {
    return false;
  }
  bool free = false;
  if (found != nullptr) {
    UniqueFd fd(::socket(found->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0));
    int one = 1;
    if (fd.valid() && ::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) == 0 &&
        ::bind(fd.get(), found->ai_addr, found->ai_addrlen) == 0) {
      free = ::listen(fd.get(), 1) == 0;
    }
  }
  ::freeaddrinfo(found);
  return free;
}

Result<uint16_t> FindFreePorts(const std::string& host, uint16_t from, uint32_t count,
                               const std::set<uint16_t>& taken) {
  for (uint32_t base = from; base + count <= 65535; ++base) {
    bool ok = true;
    for (uint32_t idx = 0; ok && idx < count; ++idx) {
      auto port = static_cast<uint16_t>(base + idx);
      ok = taken.count(port) == 0 && PortFree(host, port);
      if (!ok) base += idx;  // the next candidate starts past the busy port
    }
    if (ok) return static_cast<uint16_t>(base);
  }
  return Status(
      StatusCode::kBusy,
      fmt::format("no {} free consecutive port(s) at or above {} on {}", count, from, host));
}

}  // namespace t0fs::cli
