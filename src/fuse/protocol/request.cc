#include "fuse/protocol/request.h"

#include <fmt/format.h>

namespace t0fs::fuse {

Status ParseRequest(std::span<const std::byte> bytes, Request* out) {
  if (bytes.size() < sizeof(abi::InHeader)) {
    return Status(StatusCode::kFuseProtocol,
                  fmt::format("request of {} bytes is shorter than its header", bytes.size()));
  }
  std::memcpy(&out->header, bytes.data(), sizeof(abi::InHeader));
  const abi::InHeader& h = out->header;
  if (h.len != bytes.size()) {
    return Status(StatusCode::kFuseProtocol,
                  fmt::format("header says {} bytes, read {}", h.len, bytes.size()));
  }
  size_t payload = bytes.size() - sizeof(abi::InHeader);
  size_t ext = size_t(h.total_extlen) * 8;
  if (ext > payload) {
    return Status(StatusCode::kFuseProtocol,
                  fmt::format("extensions of {} bytes exceed the {} byte payload", ext, payload));
  }
  out->args = bytes.subspan(sizeof(abi::InHeader), payload - ext);
  return Status::Ok();
}

bool ArgReader::ReadString(std::string_view* out) {
  const void* nul = std::memchr(rest_.data(), 0, rest_.size());
  if (nul == nullptr) return false;
  size_t len = static_cast<const std::byte*>(nul) - rest_.data();
  if (len == 0) return false;
  *out = std::string_view(reinterpret_cast<const char*>(rest_.data()), len);
  rest_ = rest_.subspan(len + 1);
  return true;
}

bool ArgReader::ReadName(std::string_view* out) {
  std::string_view name;
  if (!ReadString(&name)) return false;
  if (name.size() > abi::kNameMax || name.find('/') != std::string_view::npos) return false;
  *out = name;
  return true;
}

bool ArgReader::ReadBytes(size_t n, std::span<const std::byte>* out) {
  if (rest_.size() < n) return false;
  *out = rest_.first(n);
  rest_ = rest_.subspan(n);
  return true;
}

}  // namespace t0fs::fuse
