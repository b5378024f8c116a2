#include "common/url_redact.h"

#include <fmt/format.h>

namespace t0fs {

std::string RedactUrlPassword(std::string_view url) {
  const size_t scheme = url.find("://");
  if (scheme == std::string_view::npos) return std::string(url);
  const size_t at = url.find('@', scheme + 3);
  const size_t slash = url.find('/', scheme + 3);
  if (at == std::string_view::npos || (slash != std::string_view::npos && slash < at)) {
    return std::string(url);
  }
  const size_t colon = url.find(':', scheme + 3);
  if (colon == std::string_view::npos || colon > at) return std::string(url);
  return fmt::format("{}***{}", url.substr(0, colon + 1), url.substr(at));
}

}  // namespace t0fs
