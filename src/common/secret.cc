#include "common/secret.h"

#include <fcntl.h>
#include <openssl/crypto.h>
#include <openssl/hmac.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "common/fd.h"
#include "common/io_backend.h"

namespace t0fs {

Result<std::string> LoadSecret(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return Status::FromErrno(errno, "cluster secret " + path);
  if ((st.st_mode & 077) != 0) {
    return Status(StatusCode::kPermissionDenied,
                  fmt::format("cluster secret {} is readable by others (mode {:o}); run chmod 600 {}",
                              path, st.st_mode & 0777, path));
  }
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  std::string secret = text.str();
  while (!secret.empty() && (secret.back() == '\n' || secret.back() == ' ')) secret.pop_back();
  if (secret.size() < 32) {
    return Status(StatusCode::kInvalidArgument,
                  fmt::format("cluster secret {} is too short (need at least 32 characters)", path));
  }
  return secret;
}

Status CreateSecret(const std::string& path) {
  UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600));
  if (!fd.valid()) return Status::FromErrno(errno, "create cluster secret " + path);
  std::string text = HexEncode(RandomBytes(32)) + "\n";
  RETURN_IF_ERROR(PwriteFull(fd.get(), reinterpret_cast<const std::byte*>(text.data()), text.size(), 0));
  if (::fsync(fd.get()) != 0) return Status::FromErrno(errno, "fsync " + path);
  return fd.Close();
}

Digest HmacSha256(std::string_view key, std::string_view data) {
  Digest out{};
  unsigned int len = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
       reinterpret_cast<const unsigned char*>(data.data()), data.size(), out.data(), &len);
  return out;
}

bool DigestEqual(const Digest& a, const Digest& b) {
  return CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

std::string RandomBytes(size_t len) {
  std::string out(len, '\0');
  size_t done = 0;
  while (done < len) {
    ssize_t n = ::getrandom(out.data() + done, len - done, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      std::abort();  // the kernel CSPRNG failing is not recoverable
    }
    done += static_cast<size_t>(n);
  }
  return out;
}

std::string HexEncode(std::string_view bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (unsigned char c : bytes) {
    out.push_back(kHex[c >> 4]);
    out.push_back(kHex[c & 15]);
  }
  return out;
}

}  // namespace t0fs
