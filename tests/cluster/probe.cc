// t0fs_probe: drives libt0fs from the multi-node tests and prints what only
// the client knows — which path (local bypass or TCP) served the bytes.
//
//   t0fs_probe write META SECRET NODE PATH BYTES SEED   write + fsync + close a pattern
//   t0fs_probe read  META SECRET NODE PATH SEED         read, verify, print counters
//   t0fs_probe cat   META SECRET NODE PATH              the file's bytes to stdout (verified
//                                                       by libt0fs), counters to stderr
//   t0fs_probe mkdir META SECRET NODE PATH              a directory and its parents
//   t0fs_probe nocap DATA_ADDR LOCAL_SOCKET SECRET      chunk I/O without a valid capability
//
// NODE is the client's data node id (the --node-id of a mount). `read` prints
// one line `bytes=N local=L remote=R failovers=F` and exits 1 on any
// mismatch; `nocap` exits 0 only if every request was refused.
#include <fcntl.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "common/buffer.h"
#include "common/capability.h"
#include "common/logging.h"
#include "common/secret.h"
#include "rpc/proto/data.pb.h"
#include "rpc/channel.h"
#include "t0fs/client.h"

namespace t0fs {
namespace {

// The byte at `offset` of the pattern of `seed`: any range can be checked.
uint8_t PatternByte(uint64_t seed, uint64_t offset) {
  uint64_t x = (offset / 8) * 0x9E3779B97F4A7C15ull + seed * 0xBF58476D1CE4E5B9ull + 1;
  x ^= x >> 31;
  x *= 0x94D049BB133111EBull;
  x ^= x >> 29;
  return static_cast<uint8_t>(x >> ((offset % 8) * 8));
}

void Fill(std::span<std::byte> buf, uint64_t seed, uint64_t offset) {
  for (size_t i = 0; i < buf.size(); ++i) buf[i] = std::byte(PatternByte(seed, offset + i));
}

int Fail(const std::string& what, const Status& st) {
  std::fprintf(stderr, "t0fs_probe: %s: %s\n", what.c_str(), st.ToString().c_str());
  return 1;
}

Result<std::unique_ptr<client::Client>> Connect(const std::string& meta, const std::string& secret,
                                                const std::string& node) {
  client::ClientOptions opts;
  opts.meta = meta;
  opts.secret_file = secret;
  opts.node_id = std::stoull(node);
  opts.retry_timeout.value = std::chrono::seconds(30);
  return client::Client::Connect(opts);
}

constexpr size_t kPiece = 1 << 20;

int Write(const std::string& meta, const std::string& secret, const std::string& node, const std::string& path,
          uint64_t bytes, uint64_t seed) {
  auto c = Connect(meta, secret, node);
  if (!c.ok()) return Fail("connect", c.status());
  auto f = (*c)->CreatePath(path, 0644);
  if (!f.ok()) return Fail(path, f.status());
  AlignedBuffer buf(kPiece);
  for (uint64_t off = 0; off < bytes; off += kPiece) {
    auto piece = buf.span().first(std::min<uint64_t>(kPiece, bytes - off));
    Fill(piece, seed, off);
    auto n = (*f)->Write(off, piece);
    if (!n.ok()) return Fail(path, n.status());
  }
  Status st = (*f)->Fsync(false);
  if (st.ok()) st = (*f)->Close();
  if (!st.ok()) return Fail(path, st);
  return 0;
}

int Read(const std::string& meta, const std::string& secret, const std::string& node, const std::string& path,
         uint64_t seed) {
  auto c = Connect(meta, secret, node);
  if (!c.ok()) return Fail("connect", c.status());
  auto f = (*c)->OpenPath(path, O_RDONLY);
  if (!f.ok()) return Fail(path, f.status());
  uint64_t size = (*f)->size();
  AlignedBuffer buf(kPiece);
  AlignedBuffer want(kPiece);
  for (uint64_t off = 0; off < size; off += kPiece) {
    auto piece = buf.span().first(std::min<uint64_t>(kPiece, size - off));
    auto n = (*f)->Read(off, piece);
    if (!n.ok()) return Fail(path, n.status());
    if (*n != piece.size()) return Fail(path, Status(StatusCode::kIoError, "short read"));
    auto expect = want.span().first(piece.size());
    Fill(expect, seed, off);
    if (std::memcmp(piece.data(), expect.data(), piece.size()) != 0) {
      return Fail(path, Status(StatusCode::kCorruption, "data differs from the pattern near offset " + std::to_string(off)));
    }
  }
  Status st = (*f)->Close();
  if (!st.ok()) return Fail(path, st);
  client::IoCounters k = (*c)->counters();
  std::printf("bytes=%llu local=%llu remote=%llu failovers=%llu\n", static_cast<unsigned long long>(size),
              static_cast<unsigned long long>(k.local_read_bytes), static_cast<unsigned long long>(k.remote_read_bytes),
              static_cast<unsigned long long>(k.replica_failovers));
  return 0;
}

// Any file's bytes to stdout: with NODE a node that holds no replica, every
// byte comes over TCP from the data service, which verifies its checksums.
int Cat(const std::string& meta, const std::string& secret, const std::string& node, const std::string& path) {
  auto c = Connect(meta, secret, node);
  if (!c.ok()) return Fail("connect", c.status());
  auto f = (*c)->OpenPath(path, O_RDONLY);
  if (!f.ok()) return Fail(path, f.status());
  AlignedBuffer buf(kPiece);
  for (uint64_t off = 0;;) {
    auto n = (*f)->Read(off, buf.span());
    if (!n.ok()) return Fail(path, n.status());
    if (*n == 0) break;
    if (std::fwrite(buf.data(), 1, *n, stdout) != *n) return Fail(path, Status(StatusCode::kIoError, "stdout"));
    off += *n;
  }
  Status st = (*f)->Close();
  if (!st.ok()) return Fail(path, st);
  client::IoCounters k = (*c)->counters();
  std::fprintf(stderr, "local=%llu remote=%llu checksum_errors=%llu\n",
               static_cast<unsigned long long>(k.local_read_bytes), static_cast<unsigned long long>(k.remote_read_bytes),
               static_cast<unsigned long long>(k.checksum_errors));
  return 0;
}

// Chunk I/O on TCP and descriptor passing on the local socket, once without
// a capability and once with one signed by the wrong key: all refused.
int NoCap(const std::string& data_addr, const std::string& socket, const std::string& secret_file) {
  auto secret = LoadSecret(secret_file);
  if (!secret.ok()) return Fail(secret_file, secret.status());
  rpc::ClientOptions o;
  o.secret = *secret;
  int refused = 0, total = 0;
  auto check = [&](const std::string& what, const Status& st) {
    ++total;
    bool ok = st.code() == StatusCode::kDataBadCapability;
    refused += ok;
    std::printf("%s: %s (%s)\n", what.c_str(), ok ? "refused" : "NOT REFUSED", st.ToString().c_str());
  };
  Capability forged = SignCapability("not the cluster key", ChunkId(1), kCapRead | kCapWrite, WallMillis() + 60000);
  for (const char* ep_text : {data_addr.c_str(), socket.c_str()}) {
    auto ep = rpc::Endpoint::Parse(ep_text);
    if (!ep.ok()) return Fail(ep_text, ep.status());
    rpc::Channel ch(*ep, o);
    for (bool with_forged : {false, true}) {
      std::string label = std::string(ep->is_unix() ? "unix " : "tcp ") + (with_forged ? "forged cap" : "no cap");
      if (ep->is_unix()) {
        pb::OpenLocalReq req;
        req.set_chunk(1);
        req.set_volume(1);
        if (with_forged) {
          req.mutable_cap()->set_mac(forged.mac);
          req.mutable_cap()->set_expiry_ms(forged.expiry_ms);
          req.mutable_cap()->set_rights(forged.rights);
        }
        pb::OpenLocalRsp rsp;
        check(label + ": open local chunk", ch.Call<rpc::Method::kOpenLocal>(req, &rsp));
      } else {
        pb::ChunkReadReq req;
        req.set_chunk(1);
        req.set_volume(1);
        req.set_length(4096);
        if (with_forged) {
          req.mutable_cap()->set_mac(forged.mac);
          req.mutable_cap()->set_expiry_ms(forged.expiry_ms);
          req.mutable_cap()->set_rights(forged.rights);
        }
        pb::ChunkReadRsp rsp;
        AlignedBuffer buf(4096);
        size_t got = 0;
        check(label + ": chunk read", ch.Call<rpc::Method::kChunkRead>(req, &rsp, {.reply_payload = buf.span(), .reply_payload_len = &got}));
      }
    }
  }
  return refused == total ? 0 : 1;
}

int Main(int argc, char** argv) {
  InitLogging("probe", "warn");
  std::vector<std::string> a(argv + 1, argv + argc);
  if (a.size() == 7 && a[0] == "write") return Write(a[1], a[2], a[3], a[4], std::stoull(a[5]), std::stoull(a[6]));
  if (a.size() == 6 && a[0] == "read") return Read(a[1], a[2], a[3], a[4], std::stoull(a[5]));
  if (a.size() == 5 && a[0] == "mkdir") {
    auto c = Connect(a[1], a[2], a[3]);
    Status st = c.ok() ? (*c)->MakeDirs(a[4], 0755) : c.status();
    return st.ok() ? 0 : Fail(a[4], st);
  }
  if (a.size() == 4 && a[0] == "nocap") return NoCap(a[1], a[2], a[3]);
  if (a.size() == 5 && a[0] == "cat") return Cat(a[1], a[2], a[3], a[4]);
  std::fprintf(stderr,
               "usage: t0fs_probe write META SECRET NODE PATH BYTES SEED\n"
               "       t0fs_probe read META SECRET NODE PATH SEED\n"
               "       t0fs_probe cat META SECRET NODE PATH\n"
               "       t0fs_probe mkdir META SECRET NODE PATH\n"
               "       t0fs_probe nocap DATA_ADDR LOCAL_SOCKET SECRET\n");
  return 2;
}

}  // namespace
}  // namespace t0fs

int main(int argc, char** argv) { return t0fs::Main(argc, argv); }
