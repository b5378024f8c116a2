// The cluster secret and the HMAC used to prove knowledge of it.
//
// The secret is 32 random bytes stored hex-encoded in a file of mode 0600.
// Nodes and clients prove they hold it with HMAC-SHA256 over a fresh nonce
// (rpc/auth.h); the secret itself never crosses the wire.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/status.h"

namespace t0fs {

using Digest = std::array<uint8_t, 32>;

// Reads a secret file; refuses a file readable by group or others.
Result<std::string> LoadSecret(const std::string& path);
// Creates a new secret file (mode 0600); fails if it already exists.
Status CreateSecret(const std::string& path);
Digest HmacSha256(std::string_view key, std::string_view data);
// Constant-time comparison of two digests.
bool DigestEqual(const Digest& a, const Digest& b);
// `len` bytes from the kernel CSPRNG.
std::string RandomBytes(size_t len);
std::string HexEncode(std::string_view bytes);

}  // namespace t0fs
