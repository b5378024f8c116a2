// Request framing and the op handlers without a kernel: requests are built
// by hand (well-formed, truncated, oversized, random) and fed to the
// RequestProcessor with FuseOps over a MemClient; answers are read back from
// a SOCK_SEQPACKET socket. Nothing may crash, every request that expects an
// answer gets exactly one, and bad input gets EIO/EINVAL.
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "common/fd.h"
#include "fuse/ops/fuse_ops.h"
#include "fuse/protocol/inflight.h"
#include "fuse/protocol/processor.h"
#include "fuse/testing/mem_client.h"

namespace t0fs::fuse {
namespace {

using abi::Opcode;

// Builds argument bytes.
class Args {
 public:
  template <typename T>
  Args& Add(const T& value) {
    Append(&value, sizeof(T));
    return *this;
  }
  Args& Str(std::string_view s) {  // NUL-terminated
    Append(s.data(), s.size());
    bytes_.push_back(std::byte{0});
    return *this;
  }
  Args& Raw(std::string_view s) {  // not terminated
    Append(s.data(), s.size());
    return *this;
  }
  const std::vector<std::byte>& bytes() const { return bytes_; }

 private:
  void Append(const void* data, size_t n) {
    size_t old = bytes_.size();
    bytes_.resize(old + n);
    if (n != 0) std::memcpy(bytes_.data() + old, data, n);
  }
  std::vector<std::byte> bytes_;
};

struct Answer {
  bool replied = false;
  int error = 0;  // positive errno
  uint64_t unique = 0;
  std::vector<std::byte> payload;
  int notifications = 0;  // sent ahead of the reply (unique 0: FUSE_NOTIFY_*)

  template <typename T>
  T As() const {
    T out{};
    EXPECT_GE(payload.size(), sizeof(T));
    std::memcpy(&out, payload.data(), std::min(sizeof(T), payload.size()));
    return out;
  }
  std::string Text() const {
    return std::string(reinterpret_cast<const char*>(payload.data()), payload.size());
  }
};

// A kernel stand-in: frames requests, processes them, collects answers.
class FakeKernel {
 public:
  FakeKernel() : ops_(client_, MountConfig{}), processor_(ops_, 1, abi::kMaxMinor, true),
                 worker_(0, (1 << 20) + 4096, 1 << 20) {
    int sv[2];
    EXPECT_EQ(::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
    daemon_ = UniqueFd(sv[0]);
    kernel_ = UniqueFd(sv[1]);
    ::fcntl(kernel_.get(), F_SETFL, O_NONBLOCK);
  }

  // Sends raw bytes as one request.
  Answer SendRaw(std::span<const std::byte> bytes) {
    processor_.Process(bytes, daemon_.get(), worker_);
    return Collect();
  }

  std::vector<std::byte> Frame(uint32_t opcode, uint64_t nodeid, const Args& args,
                               uint16_t extlen = 0) {
    abi::InHeader h{};
    h.len = static_cast<uint32_t>(sizeof(h) + args.bytes().size());
    h.opcode = opcode;
    h.unique = next_unique_ += 2;
    h.nodeid = nodeid;
    h.uid = 1000;
    h.gid = 1000;
    h.pid = 42;
    h.total_extlen = extlen;
    // resize + memcpy rather than insert: g++ 12 warns falsely on the latter.
    const auto& payload = args.bytes();
    std::vector<std::byte> out(sizeof(h) + payload.size());
    std::memcpy(out.data(), &h, sizeof(h));
    if (!payload.empty()) std::memcpy(out.data() + sizeof(h), payload.data(), payload.size());
    return out;
  }

  Answer Send(Opcode op, uint64_t nodeid, const Args& args = Args()) {
    auto frame = Frame(uint32_t(op), nodeid, args);
    return SendRaw(frame);
  }

  Answer Collect() {
    std::vector<std::byte> buf((1 << 20) + 4096);
    Answer a;
    ssize_t n;
    abi::OutHeader h{};
    for (;;) {
      n = ::recv(kernel_.get(), buf.data(), buf.size(), 0);
      if (n < 0) return a;
      EXPECT_GE(size_t(n), sizeof(h));
      std::memcpy(&h, buf.data(), sizeof(h));
      if (h.unique != 0) break;
      a.notifications++;  // e.g. an OPEN's FUSE_NOTIFY_INVAL_INODE
    }
    a.replied = true;
    EXPECT_EQ(h.len, size_t(n)) << "reply length field";
    a.error = -h.error;
    a.unique = h.unique;
    a.payload.assign(buf.begin() + sizeof(h), buf.begin() + n);
    // Exactly one answer per request.
    EXPECT_LT(::recv(kernel_.get(), buf.data(), buf.size(), 0), 0) << "a second reply";
    return a;
  }

  // Helpers for well-formed requests.
  uint64_t Create(uint64_t parent, std::string_view name, uint64_t* fh) {
    abi::CreateIn in{};
    in.flags = O_RDWR | O_CREAT;
    in.mode = S_IFREG | 0644;
    Answer a = Send(Opcode::kCreate, parent, Args().Add(in).Str(name));
    EXPECT_EQ(a.error, 0);
    EXPECT_EQ(a.payload.size(), sizeof(abi::EntryOut) + sizeof(abi::OpenOut));
    abi::EntryOut e = a.As<abi::EntryOut>();
    abi::OpenOut o{};
    if (a.payload.size() >= sizeof(e) + sizeof(o)) {
      std::memcpy(&o, a.payload.data() + sizeof(e), sizeof(o));
    }
    *fh = o.fh;
    return e.nodeid;
  }

  testing::MemClient& client() { return client_; }
  FuseOps& ops() { return ops_; }

 private:
  testing::MemClient client_;
  FuseOps ops_;
  RequestProcessor processor_;
  WorkerContext worker_;
  UniqueFd daemon_, kernel_;
  uint64_t next_unique_ = 0;
};

TEST(Framing, ShorterThanAHeaderIsDroppedWithoutAnswer) {
  FakeKernel k;
  std::vector<std::byte> tiny(12);
  EXPECT_FALSE(k.SendRaw(tiny).replied);
  EXPECT_FALSE(k.SendRaw({}).replied);
}

TEST(Framing, LengthMismatchIsEio) {
  FakeKernel k;
  auto frame = k.Frame(uint32_t(Opcode::kGetattr), 1, Args().Add(abi::GetattrIn{}));
  // Truncated: the header claims more than was read.
  auto truncated = std::span<const std::byte>(frame).first(frame.size() - 4);
  Answer a = k.SendRaw(truncated);
  EXPECT_TRUE(a.replied);
  EXPECT_EQ(a.error, EIO);
  // Oversized: more bytes than the header claims.
  frame.resize(frame.size() + 100);
  EXPECT_EQ(k.SendRaw(frame).error, EIO);
}

TEST(Framing, ExtensionsLongerThanThePayloadAreEio) {
  FakeKernel k;
  auto frame = k.Frame(uint32_t(Opcode::kLookup), 1, Args().Str("x"), /*extlen=*/100);
  EXPECT_EQ(k.SendRaw(frame).error, EIO);
}

TEST(Framing, ExtensionsAreStripped) {
  FakeKernel k;
  // MkdirIn, "d\0" and padding, then one 8-byte extension (total_extlen 1).
  abi::MkdirIn in{0755, 022};
  Args args;
  args.Add(in).Str("d").Raw(std::string(6, '\0')).Raw(std::string(8, 'E'));
  auto frame = k.Frame(uint32_t(Opcode::kMkdir), 1, args, /*extlen=*/1);
  Answer a = k.SendRaw(frame);
  EXPECT_EQ(a.error, 0);
  EXPECT_TRUE(k.client().Lookup(kRootInode, "d").ok());
}

TEST(Framing, UnknownOpcodesAreEnosys) {
  FakeKernel k;
  EXPECT_EQ(k.Send(static_cast<Opcode>(7), 1).error, ENOSYS);
  EXPECT_EQ(k.Send(static_cast<Opcode>(9999), 1).error, ENOSYS);
  EXPECT_EQ(k.Send(Opcode::kStatx, 1, Args().Raw(std::string(24, '\0'))).error, ENOSYS);
  EXPECT_EQ(k.Send(Opcode::kTmpfile, 1).error, ENOSYS);
}

TEST(Framing, InitAfterStartIsEio) {
  FakeKernel k;
  EXPECT_EQ(k.Send(Opcode::kInit, 0, Args().Raw(std::string(64, '\0'))).error, EIO);
}

TEST(Framing, NoReplyOpcodesGetNoAnswer) {
  FakeKernel k;
  EXPECT_FALSE(k.Send(Opcode::kForget, 5, Args().Add(abi::ForgetIn{1})).replied);
  EXPECT_FALSE(k.Send(Opcode::kForget, 5).replied);  // truncated: still no answer
  abi::BatchForgetIn batch{1000000, 0};             // count far beyond the payload
  EXPECT_FALSE(k.Send(Opcode::kBatchForget, 0, Args().Add(batch)).replied);
  EXPECT_FALSE(k.Send(Opcode::kInterrupt, 0, Args().Add(abi::InterruptIn{12345})).replied);
  EXPECT_FALSE(k.Send(Opcode::kInterrupt, 0).replied);
  EXPECT_FALSE(k.Send(Opcode::kNotifyReply, 0).replied);
}

TEST(Framing, TruncatedArgumentsAreEinval) {
  FakeKernel k;
  // One request per opcode whose handler reads a struct, with 3 bytes only.
  for (Opcode op : {Opcode::kGetattr, Opcode::kSetattr, Opcode::kMknod, Opcode::kMkdir,
                    Opcode::kRename, Opcode::kRename2, Opcode::kLink, Opcode::kOpen,
                    Opcode::kRead, Opcode::kWrite, Opcode::kRelease, Opcode::kFsync,
                    Opcode::kSetxattr, Opcode::kGetxattr, Opcode::kListxattr, Opcode::kFlush,
                    Opcode::kOpendir, Opcode::kReaddir, Opcode::kReleasedir, Opcode::kFsyncdir,
                    Opcode::kCreate, Opcode::kFallocate, Opcode::kReaddirplus,
                    Opcode::kCopyFileRange, Opcode::kCopyFileRange64}) {
    Answer a = k.Send(op, 1, Args().Raw("abc"));
    EXPECT_TRUE(a.replied) << abi::OpcodeName(uint32_t(op));
    EXPECT_EQ(a.error, EINVAL) << abi::OpcodeName(uint32_t(op));
  }
}

TEST(Framing, NamesMustBeTerminatedAndSane) {
  FakeKernel k;
  EXPECT_EQ(k.Send(Opcode::kLookup, 1, Args().Raw("noterminator")).error, EINVAL);
  EXPECT_EQ(k.Send(Opcode::kLookup, 1, Args().Str("")).error, EINVAL);
  EXPECT_EQ(k.Send(Opcode::kLookup, 1, Args().Str("a/b")).error, EINVAL);
  EXPECT_EQ(k.Send(Opcode::kLookup, 1, Args().Str(std::string(2000, 'x'))).error, EINVAL);
  EXPECT_EQ(k.Send(Opcode::kLookup, 1, Args().Str(std::string(300, 'x'))).error, ENAMETOOLONG);
  EXPECT_EQ(k.Send(Opcode::kUnlink, 1).error, EINVAL);
  // SYMLINK without its target.
  EXPECT_EQ(k.Send(Opcode::kSymlink, 1, Args().Str("link")).error, EINVAL);
  // RENAME with only the old name.
  EXPECT_EQ(k.Send(Opcode::kRename, 1, Args().Add(abi::RenameIn{1}).Str("a")).error, EINVAL);
}

TEST(Framing, WriteSizeMustMatchThePayload) {
  FakeKernel k;
  uint64_t fh = 0;
  k.Create(1, "f", &fh);
  abi::WriteIn in{};
  in.fh = fh;
  in.size = 100;  // only 10 bytes follow
  EXPECT_EQ(k.Send(Opcode::kWrite, 1, Args().Add(in).Raw("0123456789")).error, EINVAL);
  in.size = 10;
  Answer ok = k.Send(Opcode::kWrite, 1, Args().Add(in).Raw("0123456789"));
  EXPECT_EQ(ok.error, 0);
  EXPECT_EQ(ok.As<abi::WriteOut>().size, 10u);
}

TEST(Framing, OversizedReadIsEinval) {
  FakeKernel k;
  uint64_t fh = 0;
  k.Create(1, "f", &fh);
  abi::ReadIn in{};
  in.fh = fh;
  in.size = (1 << 20) + 1;  // beyond max_read
  EXPECT_EQ(k.Send(Opcode::kRead, 1, Args().Add(in)).error, EINVAL);
}

TEST(Framing, UnknownHandlesAreEbadf) {
  FakeKernel k;
  abi::ReadIn read{};
  read.fh = 0xdead0000beefull;
  read.size = 10;
  EXPECT_EQ(k.Send(Opcode::kRead, 1, Args().Add(read)).error, EBADF);
  EXPECT_EQ(k.Send(Opcode::kReaddir, 1, Args().Add(read)).error, EBADF);
  abi::ReleaseIn rel{};
  rel.fh = 77;
  EXPECT_EQ(k.Send(Opcode::kRelease, 1, Args().Add(rel)).error, EBADF);
  // A released handle is not reused by a stale fh.
  uint64_t fh = 0;
  k.Create(1, "f", &fh);
  rel.fh = fh;
  EXPECT_EQ(k.Send(Opcode::kRelease, 2, Args().Add(rel)).error, 0);
  EXPECT_EQ(k.Send(Opcode::kRelease, 2, Args().Add(rel)).error, EBADF);
  uint64_t fh2 = 0;
  k.Create(1, "g", &fh2);
  EXPECT_NE(fh2, fh);
  read.fh = fh;
  EXPECT_EQ(k.Send(Opcode::kRead, 1, Args().Add(read)).error, EBADF);
}

TEST(Ops, CreateWriteReadGetattrRelease) {
  FakeKernel k;
  uint64_t fh = 0;
  uint64_t ino = k.Create(1, "file", &fh);
  ASSERT_NE(ino, 0u);
  abi::WriteIn w{};
  w.fh = fh;
  w.offset = 5;
  w.size = 5;
  ASSERT_EQ(k.Send(Opcode::kWrite, ino, Args().Add(w).Raw("hello")).error, 0);
  abi::ReadIn r{};
  r.fh = fh;
  r.size = 64;
  Answer data = k.Send(Opcode::kRead, ino, Args().Add(r));
  ASSERT_EQ(data.error, 0);
  EXPECT_EQ(data.Text(), std::string(5, '\0') + "hello");
  abi::GetattrIn g{};
  Answer attr = k.Send(Opcode::kGetattr, ino, Args().Add(g));
  ASSERT_EQ(attr.error, 0);
  auto out = attr.As<abi::AttrOut>();
  EXPECT_EQ(out.attr.size, 10u);
  EXPECT_EQ(out.attr.blocks, 1u);
  EXPECT_EQ(out.attr.blksize, 4096u);
  EXPECT_EQ(out.attr.uid, 1000u);  // the caller from the header
  EXPECT_EQ(out.attr_valid, 1u);
  abi::ReleaseIn rel{};
  rel.fh = fh;
  EXPECT_EQ(k.Send(Opcode::kRelease, ino, Args().Add(rel)).error, 0);
  EXPECT_EQ(k.client().open_files(), 0u);
  // An OPEN (not passthrough) tells the kernel its attributes of the file
  // are out of date before it answers (close-to-open for the size); a
  // CREATE's entry carries them fresh.
  abi::OpenIn o{};
  o.flags = O_RDONLY;
  Answer open = k.Send(Opcode::kOpen, ino, Args().Add(o));
  ASSERT_EQ(open.error, 0);
  EXPECT_EQ(open.notifications, 1);
  rel.fh = open.As<abi::OpenOut>().fh;
  Answer closed = k.Send(Opcode::kRelease, ino, Args().Add(rel));
  EXPECT_EQ(closed.error, 0);
  EXPECT_EQ(closed.notifications, 0);  // no change was held back while it was open
}

// A file another client removed, its inode kept alive by a handle elsewhere:
// an OPEN through a name the kernel still caches gets ESTALE (the kernel
// looks the name up again), unless a handle of it is open here (a reopen
// through /proc/PID/fd of a file this mount holds).
TEST(Ops, OpenOfARemovedFileIsStaleUnlessOpenHere) {
  FakeKernel k;
  uint64_t fh = 0;
  uint64_t ino = k.Create(1, "file", &fh);
  ASSERT_NE(ino, 0u);
  auto elsewhere = k.client().Open(InodeId(ino), O_RDONLY);  // another client's handle
  ASSERT_TRUE(elsewhere.ok()) << elsewhere.status().ToString();
  ASSERT_TRUE(k.client().Unlink(kRootInode, "file").ok());
  abi::OpenIn o{};
  o.flags = O_RDONLY;
  Answer reopen = k.Send(Opcode::kOpen, ino, Args().Add(o));  // while `fh` is open here
  ASSERT_EQ(reopen.error, 0);
  abi::ReleaseIn rel{};
  for (uint64_t h : {fh, reopen.As<abi::OpenOut>().fh}) {
    rel.fh = h;
    ASSERT_EQ(k.Send(Opcode::kRelease, ino, Args().Add(rel)).error, 0);
  }
  EXPECT_EQ(k.Send(Opcode::kOpen, ino, Args().Add(o)).error, ESTALE);
  EXPECT_EQ(k.client().open_files(), 1u);  // the refused open's File closed
  ASSERT_TRUE((*elsewhere)->Close().ok());
  EXPECT_EQ(k.Send(Opcode::kOpen, ino, Args().Add(o)).error, ESTALE);  // gone: as before
}

TEST(Ops, XattrSizeProbe) {
  FakeKernel k;
  abi::SetxattrIn s{5, 0};
  ASSERT_EQ(k.Send(Opcode::kSetxattr, 1, Args().Add(s).Str("user.k").Raw("value")).error, 0);
  abi::GetxattrIn probe{0, 0};
  Answer size = k.Send(Opcode::kGetxattr, 1, Args().Add(probe).Str("user.k"));
  ASSERT_EQ(size.error, 0);
  EXPECT_EQ(size.As<abi::GetxattrOut>().size, 5u);
  abi::GetxattrIn small{4, 0};
  EXPECT_EQ(k.Send(Opcode::kGetxattr, 1, Args().Add(small).Str("user.k")).error, ERANGE);
  abi::GetxattrIn enough{5, 0};
  EXPECT_EQ(k.Send(Opcode::kGetxattr, 1, Args().Add(enough).Str("user.k")).Text(), "value");
  EXPECT_EQ(k.Send(Opcode::kGetxattr, 1, Args().Add(enough).Str("user.none")).error, ENODATA);
  Answer list_size = k.Send(Opcode::kListxattr, 1, Args().Add(probe));
  EXPECT_EQ(list_size.As<abi::GetxattrOut>().size, 7u);  // "user.k\0"
  EXPECT_EQ(k.Send(Opcode::kListxattr, 1, Args().Add(abi::GetxattrIn{3, 0})).error, ERANGE);
  EXPECT_EQ(k.Send(Opcode::kListxattr, 1, Args().Add(abi::GetxattrIn{64, 0})).Text(),
            std::string("user.k\0", 7));
  // Value shorter than its declared size.
  abi::SetxattrIn lying{50, 0};
  EXPECT_EQ(k.Send(Opcode::kSetxattr, 1, Args().Add(lying).Str("user.x").Raw("abc")).error,
            EINVAL);
}

TEST(Ops, ReaddirResumesAtTheCookieAcrossSmallBuffers) {
  FakeKernel k;
  for (int i = 0; i < 50; ++i) {
    abi::MkdirIn in{0755, 0};
    ASSERT_EQ(k.Send(Opcode::kMkdir, 1, Args().Add(in).Str("d" + std::to_string(i))).error, 0);
  }
  abi::OpenIn open{};
  Answer dir = k.Send(Opcode::kOpendir, 1, Args().Add(open));
  ASSERT_EQ(dir.error, 0);
  const uint64_t fh = dir.As<abi::OpenOut>().fh;
  for (bool plus : {false, true}) {
    std::vector<std::string> names;
    uint64_t offset = 0;
    for (int call = 0; call < 1000; ++call) {
      abi::ReadIn r{};
      r.fh = fh;
      r.offset = offset;
      r.size = 200;  // a few entries per call
      Answer a = k.Send(plus ? Opcode::kReaddirplus : Opcode::kReaddir, 1, Args().Add(r));
      ASSERT_EQ(a.error, 0);
      if (a.payload.empty()) break;
      size_t pos = 0;
      while (pos < a.payload.size()) {
        if (plus) {
          abi::EntryOut e{};
          std::memcpy(&e, a.payload.data() + pos, sizeof(e));
          pos += sizeof(e);
        }
        abi::Dirent d{};
        std::memcpy(&d, a.payload.data() + pos, sizeof(d));
        names.emplace_back(reinterpret_cast<const char*>(a.payload.data() + pos + sizeof(d)),
                           d.namelen);
        offset = d.off;
        pos += abi::DirentSize(d.namelen);
        EXPECT_EQ(d.type, unsigned(S_IFDIR >> 12));
      }
    }
    ASSERT_EQ(names.size(), 52u) << (plus ? "plus" : "plain");
    EXPECT_EQ(names[0], ".");
    EXPECT_EQ(names[1], "..");
    EXPECT_EQ(names[51], "d49");
  }
  abi::ReleaseIn rel{};
  rel.fh = fh;
  EXPECT_EQ(k.Send(Opcode::kReleasedir, 1, Args().Add(rel)).error, 0);
  EXPECT_EQ(k.ops().open_dirs(), 0u);
}

TEST(Ops, CopyFileRangeBothVariants) {
  FakeKernel k;
  uint64_t fh_in = 0, fh_out = 0;
  uint64_t in_ino = k.Create(1, "in", &fh_in);
  k.Create(1, "out", &fh_out);
  std::string data(3 << 20, 'z');
  for (size_t i = 0; i < data.size(); i += 4093) data[i] = char('a' + i % 26);
  abi::WriteIn w{};
  w.fh = fh_in;
  w.size = static_cast<uint32_t>(data.size());
  ASSERT_EQ(k.Send(Opcode::kWrite, in_ino, Args().Add(w).Raw(data)).error, 0);
  abi::CopyFileRangeIn c{};
  c.fh_in = fh_in;
  c.fh_out = fh_out;
  c.len = data.size() + 100;  // beyond EOF: a short copy
  Answer a = k.Send(Opcode::kCopyFileRange64, in_ino, Args().Add(c));
  ASSERT_EQ(a.error, 0);
  EXPECT_EQ(a.As<abi::CopyFileRangeOut>().bytes_copied, data.size());
  c.off_out = data.size();
  c.len = 10;
  Answer b = k.Send(Opcode::kCopyFileRange, in_ino, Args().Add(c));
  EXPECT_EQ(b.As<abi::WriteOut>().size, 10u);
  auto out_attr = k.client().Lookup(kRootInode, "out");
  ASSERT_TRUE(out_attr.ok());
  EXPECT_EQ(out_attr->size, data.size() + 10);
}

TEST(Ops, RenameWhiteoutIsRejected) {
  FakeKernel k;
  abi::Rename2In in{1, abi::kRenameWhiteout, 0};
  EXPECT_EQ(k.Send(Opcode::kRename2, 1, Args().Add(in).Str("a").Str("b")).error, EINVAL);
}

TEST(Ops, NegativeLookupCachingFollowsTheConfig) {
  FakeKernel k;  // negative_timeout 0: plain ENOENT
  EXPECT_EQ(k.Send(Opcode::kLookup, 1, Args().Str("missing")).error, ENOENT);
}

// Every opcode, random payloads of random lengths: answers or silence as
// the opcode demands, never a crash (run under ASan/UBSan too).
TEST(Framing, RandomPayloadsNeverCrash) {
  FakeKernel k;
  std::mt19937_64 rng(20240531);
  for (int round = 0; round < 4000; ++round) {
    uint32_t opcode = rng() % 60;
    if (round % 97 == 0) opcode = uint32_t(rng());
    size_t len = rng() % 300;
    std::string payload(len, '\0');
    for (auto& c : payload) c = static_cast<char>(rng() % 4 == 0 ? 0 : rng());
    uint64_t nodeid = rng() % 4 == 0 ? rng() : 1 + rng() % 8;
    auto frame = k.Frame(opcode, nodeid, Args().Raw(payload));
    Answer a = k.SendRaw(frame);
    EXPECT_EQ(a.replied, !abi::IsNoReply(opcode)) << "opcode " << opcode;
    if (a.replied) {
      EXPECT_GE(a.error, 0);
      EXPECT_LT(a.error, 1000);
    }
  }
}

TEST(Inflight, InterruptReachesARunningRequest) {
  InflightTable table(2);
  table.Begin(0, 10);
  table.Begin(1, 12);
  table.Interrupt(12);
  EXPECT_FALSE(table.interrupted(0));
  EXPECT_TRUE(table.interrupted(1));
  EXPECT_EQ(table.pending_for_test(), 0u);
  table.End(1);
  table.Begin(1, 14);
  EXPECT_FALSE(table.interrupted(1));
}

TEST(Inflight, InterruptBeforeRegistrationIsKept) {
  InflightTable table(1);
  table.Interrupt(20);  // read by another worker before the target registered
  EXPECT_EQ(table.pending_for_test(), 1u);
  table.Begin(0, 20);
  EXPECT_TRUE(table.interrupted(0));
  EXPECT_EQ(table.pending_for_test(), 0u);
}

TEST(Inflight, StaleInterruptsAgeOut) {
  InflightTable table(1);
  for (uint64_t id = 2; id < 2 + 2 * 100; id += 2) table.Interrupt(id);  // targets long gone
  EXPECT_LE(table.pending_for_test(), 64u);
  table.Begin(0, 1000000);  // far later: the old ids are dropped
  EXPECT_FALSE(table.interrupted(0));
  EXPECT_EQ(table.pending_for_test(), 0u);
}

TEST(Inflight, ConcurrentInterruptsAreNotLost) {
  for (int trial = 0; trial < 200; ++trial) {
    InflightTable table(1);
    const uint64_t unique = 1000 + 2 * trial;
    std::thread interrupter([&] { table.Interrupt(unique); });
    table.Begin(0, unique);
    interrupter.join();
    // Either Begin saw the pending id, or Interrupt saw the slot.
    EXPECT_TRUE(table.interrupted(0)) << trial;
    table.End(0);
  }
}

// An interrupt is not a reason to fail a request (io_uring task work
// interrupts fstat(2) too, which must never see EINTR).
TEST(Framing, InterruptedBeforeStartIsServed) {
  FakeKernel k;
  auto frame = k.Frame(uint32_t(Opcode::kGetattr), 1, Args().Add(abi::GetattrIn{}));
  abi::InHeader h{};
  std::memcpy(&h, frame.data(), sizeof(h));
  // The INTERRUPT is read (by another worker) before its target.
  abi::InterruptIn in{h.unique};
  EXPECT_FALSE(k.Send(Opcode::kInterrupt, 0, Args().Add(in)).replied);
  Answer a = k.SendRaw(frame);
  EXPECT_TRUE(a.replied);
  EXPECT_EQ(a.error, 0);
}

}  // namespace
}  // namespace t0fs::fuse
