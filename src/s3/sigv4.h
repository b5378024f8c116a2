// AWS Signature Version 4 for S3: the canonical request, the string to sign,
// the signing key and the Authorization header, as pure functions of their
// inputs (no clock, no I/O) so the AWS documentation's example vectors test
// them exactly (s3_test.cc).
//
// Rules kept here (AWS "Signature Calculations for the Authorization Header"):
// the canonical URI is the path with each byte outside A-Za-z0-9-._~ and '/'
// percent-encoded once (S3 does not double-encode); query parameters are
// encoded the same way including '/', sorted by name, and a parameter
// without a value signs as "name="; header names are lower-cased, values
// trimmed and inner runs of spaces folded, headers sorted by name.
//
// Thread safety: pure functions.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace t0fs::s3 {

// SHA-256 of the empty payload, used by every request without a body.
inline constexpr std::string_view kEmptyPayloadSha256 =
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

// Percent-encodes `text` the SigV4 way; '/' is kept unless `encode_slash`.
std::string UriEncode(std::string_view text, bool encode_slash);
// "a=1&b=&c=x%2Fy" from unencoded name/value pairs, sorted by name.
std::string CanonicalQuery(std::vector<std::pair<std::string, std::string>> params);
std::string Sha256Hex(std::string_view data);

// What SigV4 signs of one request. Header names in any case; they must
// include host and x-amz-date (and x-amz-content-sha256 for S3).
struct SigningInput {
  std::string method;                                         // "GET"
  std::string canonical_uri;                                  // already encoded: "/bucket/a%20b"
  std::string canonical_query;                                // from CanonicalQuery
  std::vector<std::pair<std::string, std::string>> headers;   // the signed headers
  std::string payload_sha256;                                 // lower-case hex
};

struct Signature {
  std::string canonical_request;
  std::string signed_headers;  // "host;range;x-amz-content-sha256;x-amz-date"
  std::string string_to_sign;
  std::string signature;       // lower-case hex
  std::string authorization;   // the Authorization header value
};

// `amz_date` is the request's x-amz-date ("20130524T000000Z"); the scope is
// its date, `region` and service "s3".
Signature SignV4(const SigningInput& input, std::string_view access_key, std::string_view secret_key,
                 std::string_view region, std::string_view amz_date);

// The derived key HMAC(HMAC(HMAC(HMAC("AWS4"+secret, date), region), service),
// "aws4_request"), as raw bytes.
std::string SigningKey(std::string_view secret_key, std::string_view date, std::string_view region,
                       std::string_view service);

}  // namespace t0fs::s3
