#include "common/host_name.h"

#include <unistd.h>

namespace t0fs {

std::string HostName() {
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  return host;
}

}  // namespace t0fs
