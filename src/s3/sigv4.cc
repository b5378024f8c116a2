#include "s3/sigv4.h"

#include <openssl/sha.h>

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

#include "common/secret.h"

namespace t0fs::s3 {
namespace {

bool Unreserved(unsigned char c) {
  return std::isalnum(c) != 0 || c == '-' || c == '.' || c == '_' || c == '~';
}

std::string Hmac(std::string_view key, std::string_view data) {
  Digest d = HmacSha256(key, data);
  return std::string(reinterpret_cast<const char*>(d.data()), d.size());
}

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Trims the value and folds inner runs of spaces to one (SigV4 "Trimall").
std::string TrimAll(std::string_view v) {
  std::string out;
  bool space = false;
  for (char c : v) {
    if (c == ' ' || c == '\t') {
      space = !out.empty();
      continue;
    }
    if (space) out.push_back(' ');
    space = false;
    out.push_back(c);
  }
  return out;
}

}  // namespace

std::string UriEncode(std::string_view text, bool encode_slash) {
  std::string out;
  out.reserve(text.size());
  for (unsigned char c : text) {
    if (Unreserved(c) || (c == '/' && !encode_slash)) {
      out.push_back(static_cast<char>(c));
    } else {
      out += fmt::format("%{:02X}", c);
    }
  }
  return out;
}

std::string CanonicalQuery(std::vector<std::pair<std::string, std::string>> params) {
  for (auto& [name, value] : params) {
    name = UriEncode(name, true);
    value = UriEncode(value, true);
  }
  std::sort(params.begin(), params.end());
  std::string out;
  for (const auto& [name, value] : params) {
    if (!out.empty()) out.push_back('&');
    out += name;
    out.push_back('=');
    out += value;
  }
  return out;
}

std::string Sha256Hex(std::string_view data) {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(data.data()), data.size(), digest);
  return HexEncode(std::string_view(reinterpret_cast<const char*>(digest), sizeof digest));
}

std::string SigningKey(std::string_view secret_key, std::string_view date, std::string_view region,
                       std::string_view service) {
  std::string k_date = Hmac("AWS4" + std::string(secret_key), date);
  std::string k_region = Hmac(k_date, region);
  std::string k_service = Hmac(k_region, service);
  return Hmac(k_service, "aws4_request");
}

Signature SignV4(const SigningInput& input, std::string_view access_key, std::string_view secret_key,
                 std::string_view region, std::string_view amz_date) {
  std::vector<std::pair<std::string, std::string>> headers;
  headers.reserve(input.headers.size());
  for (const auto& [name, value] : input.headers) headers.emplace_back(Lower(name), TrimAll(value));
  std::sort(headers.begin(), headers.end());

  Signature sig;
  std::string canonical_headers;
  for (const auto& [name, value] : headers) {
    canonical_headers += name + ":" + value + "\n";
    if (!sig.signed_headers.empty()) sig.signed_headers.push_back(';');
    sig.signed_headers += name;
  }
  sig.canonical_request = fmt::format("{}\n{}\n{}\n{}\n{}\n{}", input.method, input.canonical_uri,
                                      input.canonical_query, canonical_headers, sig.signed_headers,
                                      input.payload_sha256);
  std::string_view date = amz_date.substr(0, 8);
  std::string scope = fmt::format("{}/{}/s3/aws4_request", date, region);
  sig.string_to_sign =
      fmt::format("AWS4-HMAC-SHA256\n{}\n{}\n{}", amz_date, scope, Sha256Hex(sig.canonical_request));
  std::string key = SigningKey(secret_key, date, region, "s3");
  sig.signature = HexEncode(Hmac(key, sig.string_to_sign));
  sig.authorization = fmt::format("AWS4-HMAC-SHA256 Credential={}/{},SignedHeaders={},Signature={}", access_key,
                                  scope, sig.signed_headers, sig.signature);
  return sig;
}

}  // namespace t0fs::s3
