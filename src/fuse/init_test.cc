// INIT negotiation against fake kernels: pure NegotiateInit, and the
// HandshakeInit loop over a SOCK_SEQPACKET socketpair (one message per read,
// like /dev/fuse).
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "common/fd.h"
#include "fuse/protocol/init.h"

namespace t0fs::fuse {
namespace {

using namespace abi::init;

std::vector<std::byte> InitArgs(uint32_t major, uint32_t minor, uint64_t flags, size_t size,
                                uint32_t readahead = 128 << 10) {
  abi::InitIn in{};
  in.major = major;
  in.minor = minor;
  in.max_readahead = readahead;
  in.flags = static_cast<uint32_t>(flags);
  in.flags2 = static_cast<uint32_t>(flags >> 32);
  std::vector<std::byte> bytes(size);
  std::memcpy(bytes.data(), &in, std::min(size, sizeof(in)));
  return bytes;
}

// What a 6.18 kernel offers (7.45).
constexpr uint64_t kModernOffer = kAsyncRead | kPosixLocks | kAtomicOTrunc | kExportSupport |
                                  kBigWrites | kDontMask | kSpliceWrite | kSpliceMove |
                                  kSpliceRead | kFlockLocks | kHasIoctlDir | kAutoInvalData |
                                  kDoReaddirplus | kReaddirplusAuto | kAsyncDio |
                                  kWritebackCache | kNoOpenSupport | kParallelDirops |
                                  kHandleKillpriv | kPosixAcl | kAbortError | kMaxPages |
                                  kCacheSymlinks | kNoOpendirSupport | kExplicitInvalData |
                                  kHandleKillprivV2 | kSetxattrExt | kInitExt |
                                  kSecurityCtx | kCreateSuppGroup | kPassthrough |
                                  kNoExportSupport | kHasResend | kAllowIdmap;

TEST(Init, ModernKernelGetsOurFlagsAndRecordsPassthrough) {
  auto d = NegotiateInit(InitArgs(7, 45, kModernOffer, 64), InitOptions{});
  ASSERT_EQ(d.kind, InitDecision::Kind::kAccept);
  EXPECT_EQ(d.out.major, 7u);
  EXPECT_EQ(d.out.minor, 45u);
  EXPECT_EQ(d.out.max_write, 1u << 20);
  EXPECT_EQ(d.out.max_pages, 256u);
  EXPECT_EQ(d.out.max_readahead, 128u << 10);  // never above the kernel's offer
  EXPECT_EQ(d.out.time_gran, 1u);
  EXPECT_EQ(d.out_size, sizeof(abi::InitOut));
  const uint64_t sent = d.out.flags | (uint64_t(d.out.flags2) << 32);
  EXPECT_EQ(sent, kWantedInitFlags);
  EXPECT_EQ(sent & (kWritebackCache | kPosixLocks | kFlockLocks | kSpliceWrite | kSpliceMove |
                    kSpliceRead | kPassthrough),
            0u);
  EXPECT_TRUE(d.info.passthrough_offered);
  EXPECT_EQ(d.info.kernel_flags, kModernOffer);
  EXPECT_EQ(d.out.max_stack_depth, 0u);
}

TEST(Init, PassthroughIsEnabledWhenAskedAndOffered) {
  InitOptions options;
  options.passthrough = true;
  auto d = NegotiateInit(InitArgs(7, 45, kModernOffer, 64), options);
  ASSERT_EQ(d.kind, InitDecision::Kind::kAccept);
  const uint64_t sent = d.out.flags | (uint64_t(d.out.flags2) << 32);
  EXPECT_EQ(sent, kWantedInitFlags | kPassthrough);
  EXPECT_TRUE(d.info.passthrough);
  EXPECT_EQ(d.out.max_stack_depth, kPassthroughStackDepth);
  EXPECT_NE(DescribeInit(d.info).find("passthrough enabled"), std::string::npos);
  // A kernel without it (before 6.9): asked for, not enabled, no stack depth.
  d = NegotiateInit(InitArgs(7, 39, kModernOffer & ~kPassthrough, 64), options);
  ASSERT_EQ(d.kind, InitDecision::Kind::kAccept);
  EXPECT_FALSE(d.info.passthrough);
  EXPECT_EQ((d.out.flags2 & uint32_t(kPassthrough >> 32)), 0u);
  EXPECT_EQ(d.out.max_stack_depth, 0u);
  EXPECT_NE(DescribeInit(d.info).find("passthrough not offered"), std::string::npos);
}

TEST(Init, NewerMinorThanOursIsClamped) {
  auto d = NegotiateInit(InitArgs(7, 99, kModernOffer, 64), InitOptions{});
  ASSERT_EQ(d.kind, InitDecision::Kind::kAccept);
  EXPECT_EQ(d.out.minor, abi::kMaxMinor);
  EXPECT_EQ(d.info.kernel_minor, 99u);
}

TEST(Init, OldMinorWithoutFlags2IgnoresTheHighWord) {
  // 7.31: 16-byte INIT, no INIT_EXT. Garbage after the 16 bytes must not be
  // taken for flags2.
  auto args = InitArgs(7, 31, kAsyncRead | kBigWrites | kMaxPages, 16);
  auto d = NegotiateInit(args, InitOptions{});
  ASSERT_EQ(d.kind, InitDecision::Kind::kAccept);
  EXPECT_EQ(d.out.minor, 31u);
  EXPECT_EQ(d.out.flags2, 0u);
  EXPECT_EQ(d.out.flags & kInitExt, 0u);
  EXPECT_FALSE(d.info.passthrough_offered);
  EXPECT_EQ(d.info.flags, kAsyncRead | kBigWrites | kMaxPages);
}

TEST(Init, Flags2WithoutInitExtIsIgnored) {
  // A 64-byte INIT whose flags lack INIT_EXT: flags2 is not valid.
  abi::InitIn in{};
  in.major = 7;
  in.minor = 40;
  in.flags = kAsyncRead | kMaxPages;
  in.flags2 = uint32_t(kPassthrough >> 32);
  std::vector<std::byte> args(sizeof(in));
  std::memcpy(args.data(), &in, sizeof(in));
  auto d = NegotiateInit(args, InitOptions{});
  ASSERT_EQ(d.kind, InitDecision::Kind::kAccept);
  EXPECT_FALSE(d.info.passthrough_offered);
  EXPECT_EQ(d.out.flags2, 0u);
}

TEST(Init, InitExtButShortRequestHasNoFlags2) {
  auto d = NegotiateInit(InitArgs(7, 36, kInitExt | kMaxPages | kPassthrough, 16), InitOptions{});
  ASSERT_EQ(d.kind, InitDecision::Kind::kAccept);
  EXPECT_FALSE(d.info.passthrough_offered);
}

TEST(Init, WithoutMaxPagesWritesAreCappedAt128K) {
  auto d = NegotiateInit(InitArgs(7, 31, kAsyncRead | kBigWrites, 16), InitOptions{});
  ASSERT_EQ(d.kind, InitDecision::Kind::kAccept);
  EXPECT_EQ(d.out.max_write, 128u << 10);
  EXPECT_EQ(d.info.max_pages, 32u);
}

TEST(Init, ReadaheadCapApplies) {
  InitOptions options;
  options.max_readahead = 64 << 10;
  auto d = NegotiateInit(InitArgs(7, 45, kModernOffer, 64, 1 << 20), options);
  EXPECT_EQ(d.out.max_readahead, 64u << 10);
}

TEST(Init, TooOldMinorIsRefused) {
  auto d = NegotiateInit(InitArgs(7, 30, kAsyncRead, 16), InitOptions{});
  EXPECT_EQ(d.kind, InitDecision::Kind::kRefuse);
  EXPECT_EQ(d.error, EPROTO);
  EXPECT_NE(d.message.find("7.30"), std::string::npos);
}

TEST(Init, OldMajorIsRefused) {
  auto d = NegotiateInit(InitArgs(6, 99, 0, 16), InitOptions{});
  EXPECT_EQ(d.kind, InitDecision::Kind::kRefuse);
  EXPECT_EQ(d.error, EPROTO);
}

TEST(Init, NewerMajorAsksForAnotherInit) {
  auto d = NegotiateInit(InitArgs(8, 0, 0, 8), InitOptions{});
  ASSERT_EQ(d.kind, InitDecision::Kind::kRetry);
  EXPECT_EQ(d.out.major, 7u);
}

TEST(Init, TruncatedRequestsAreRefused) {
  EXPECT_EQ(NegotiateInit({}, InitOptions{}).kind, InitDecision::Kind::kRefuse);
  EXPECT_EQ(NegotiateInit(InitArgs(7, 45, 0, 4), InitOptions{}).error, EINVAL);
  EXPECT_EQ(NegotiateInit(InitArgs(7, 45, 0, 12), InitOptions{}).error, EINVAL);
}

// ---- the handshake loop over a socket ----

std::vector<std::byte> Frame(uint32_t opcode, uint64_t unique, const std::vector<std::byte>& args) {
  abi::InHeader h{};
  h.len = static_cast<uint32_t>(sizeof(h) + args.size());
  h.opcode = opcode;
  h.unique = unique;
  // resize + memcpy rather than insert: g++ 12 warns falsely on the latter.
  std::vector<std::byte> out(sizeof(h) + args.size());
  std::memcpy(out.data(), &h, sizeof(h));
  if (!args.empty()) std::memcpy(out.data() + sizeof(h), args.data(), args.size());
  return out;
}

struct InitAnswer {
  abi::OutHeader header{};
  std::vector<std::byte> payload;
};

InitAnswer ReadAnswer(int fd) {
  std::vector<std::byte> buf(4096);
  ssize_t n = ::recv(fd, buf.data(), buf.size(), 0);
  InitAnswer a;
  if (n < ssize_t(sizeof(abi::OutHeader))) return a;
  std::memcpy(&a.header, buf.data(), sizeof(a.header));
  a.payload.assign(buf.begin() + sizeof(abi::OutHeader), buf.begin() + n);
  return a;
}

class HandshakeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    int sv[2];
    ASSERT_EQ(::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
    daemon_ = UniqueFd(sv[0]);
    kernel_ = UniqueFd(sv[1]);
  }
  void KernelSends(const std::vector<std::byte>& msg) {
    ASSERT_EQ(::send(kernel_.get(), msg.data(), msg.size(), 0), ssize_t(msg.size()));
  }
  UniqueFd daemon_, kernel_;
};

TEST_F(HandshakeTest, AnswersInitAndReportsWhatWasAgreed) {
  KernelSends(Frame(uint32_t(abi::Opcode::kInit), 2, InitArgs(7, 45, kModernOffer, 64)));
  auto info = HandshakeInit(daemon_.get(), InitOptions{}, std::chrono::seconds(5));
  ASSERT_TRUE(info.ok()) << info.status().ToString();
  EXPECT_EQ(info->minor, 45u);
  EXPECT_TRUE(info->passthrough_offered);
  InitAnswer a = ReadAnswer(kernel_.get());
  EXPECT_EQ(a.header.unique, 2u);
  EXPECT_EQ(a.header.error, 0);
  EXPECT_EQ(a.header.len, sizeof(abi::OutHeader) + sizeof(abi::InitOut));
  abi::InitOut out{};
  ASSERT_EQ(a.payload.size(), sizeof(out));
  std::memcpy(&out, a.payload.data(), sizeof(out));
  EXPECT_EQ(out.max_write, 1u << 20);
  EXPECT_NE(DescribeInit(*info).find("passthrough offered"), std::string::npos);
}

TEST_F(HandshakeTest, RetriesAfterANewerMajor) {
  KernelSends(Frame(uint32_t(abi::Opcode::kInit), 2, InitArgs(8, 1, 0, 16)));
  KernelSends(Frame(uint32_t(abi::Opcode::kInit), 4, InitArgs(7, 38, kModernOffer, 64)));
  auto info = HandshakeInit(daemon_.get(), InitOptions{}, std::chrono::seconds(5));
  ASSERT_TRUE(info.ok()) << info.status().ToString();
  EXPECT_EQ(info->minor, 38u);
  EXPECT_EQ(ReadAnswer(kernel_.get()).header.unique, 2u);
  EXPECT_EQ(ReadAnswer(kernel_.get()).header.unique, 4u);
}

TEST_F(HandshakeTest, RefusalIsAnsweredAndReported) {
  KernelSends(Frame(uint32_t(abi::Opcode::kInit), 2, InitArgs(7, 20, 0, 16)));
  auto info = HandshakeInit(daemon_.get(), InitOptions{}, std::chrono::seconds(5));
  ASSERT_FALSE(info.ok());
  EXPECT_EQ(info.status().code(), StatusCode::kFuseProtocol);
  EXPECT_EQ(ReadAnswer(kernel_.get()).header.error, -EPROTO);
}

TEST_F(HandshakeTest, RequestsBeforeInitGetEio) {
  KernelSends(Frame(uint32_t(abi::Opcode::kGetattr), 2, std::vector<std::byte>(16)));
  KernelSends(Frame(uint32_t(abi::Opcode::kInit), 4, InitArgs(7, 45, kModernOffer, 64)));
  auto info = HandshakeInit(daemon_.get(), InitOptions{}, std::chrono::seconds(5));
  ASSERT_TRUE(info.ok()) << info.status().ToString();
  InitAnswer first = ReadAnswer(kernel_.get());
  EXPECT_EQ(first.header.unique, 2u);
  EXPECT_EQ(first.header.error, -EIO);
}

TEST_F(HandshakeTest, MalformedInitFails) {
  auto bad = Frame(uint32_t(abi::Opcode::kInit), 2, InitArgs(7, 45, 0, 64));
  bad[0] = std::byte{0xff};  // header.len disagrees with the bytes sent
  KernelSends(bad);
  auto info = HandshakeInit(daemon_.get(), InitOptions{}, std::chrono::seconds(5));
  ASSERT_FALSE(info.ok());
  EXPECT_EQ(ReadAnswer(kernel_.get()).header.error, -EIO);
}

TEST_F(HandshakeTest, SilenceTimesOut) {
  auto info = HandshakeInit(daemon_.get(), InitOptions{}, std::chrono::milliseconds(10));
  ASSERT_FALSE(info.ok());
  EXPECT_EQ(info.status().code(), StatusCode::kRpcTimeout);
}

}  // namespace
}  // namespace t0fs::fuse
