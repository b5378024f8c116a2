// Credentials file: `access_key = ...` / `secret_key = ...`, mode 0600.
#include <sys/stat.h>

#include <cerrno>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "s3/s3.h"

namespace t0fs::s3 {
namespace {

std::string_view Trim(std::string_view s) {
  size_t b = s.find_first_not_of(" \t\r");
  if (b == std::string_view::npos) return {};
  size_t e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

}  // namespace

Result<Credentials> ParseCredentials(std::string_view text, std::string_view origin) {
  Credentials creds;
  int line_no = 0;
  while (!text.empty()) {
    size_t nl = text.find('\n');
    std::string_view line = Trim(text.substr(0, nl));
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    ++line_no;
    if (line.empty() || line.front() == '#') continue;
    size_t eq = line.find('=');
    // The line itself is never quoted back: it may hold a key.
    if (eq == std::string_view::npos) {
      return Status(StatusCode::kInvalidArgument,
                    fmt::format("s3 credentials {}: line {} is not 'name = value'", origin, line_no));
    }
    std::string_view name = Trim(line.substr(0, eq));
    std::string_view value = Trim(line.substr(eq + 1));
    if (name == "access_key") {
      creds.access_key = std::string(value);
    } else if (name == "secret_key") {
      creds.secret_key = std::string(value);
    } else {
      return Status(StatusCode::kInvalidArgument,
                    fmt::format("s3 credentials {}: line {}: unknown name '{}' (expected access_key or secret_key)",
                                origin, line_no, name.substr(0, 32)));
    }
  }
  if (creds.access_key.empty()) {
    return Status(StatusCode::kInvalidArgument, fmt::format("s3 credentials {}: no access_key", origin));
  }
  if (creds.secret_key.empty()) {
    return Status(StatusCode::kInvalidArgument, fmt::format("s3 credentials {}: no secret_key", origin));
  }
  return creds;
}

Result<Credentials> LoadCredentials(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return Status::FromErrno(errno, "s3 credentials " + path);
  if ((st.st_mode & 077) != 0) {
    return Status(StatusCode::kPermissionDenied,
                  fmt::format("s3 credentials {} are accessible by others (mode {:o}); run chmod 600 {}", path,
                              st.st_mode & 0777, path));
  }
  std::ifstream in(path);
  if (!in) return Status(StatusCode::kIoError, fmt::format("s3 credentials {}: cannot read", path));
  std::stringstream text;
  text << in.rdbuf();
  return ParseCredentials(text.str(), path);
}

}  // namespace t0fs::s3
