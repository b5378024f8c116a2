#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <string>

#include "common/buffer.h"
#include "common/cancel.h"
#include "common/config.h"
#include "common/crc32c.h"
#include "common/fd.h"
#include "common/io_backend.h"
#include "common/logging.h"
#include "common/secret.h"
#include "common/status.h"

namespace t0fs {
namespace {

// A burst per interval gets through; the next message let through says how
// many were held back meanwhile.
TEST(LogLimit, ABurstPerIntervalThenACount) {
  LogLimit limit(2, std::chrono::seconds(10));
  const auto t0 = std::chrono::steady_clock::time_point(std::chrono::hours(1));
  uint64_t held = 99;
  EXPECT_TRUE(limit.Allow(t0, &held));
  EXPECT_EQ(held, 0u);
  EXPECT_TRUE(limit.Allow(t0 + std::chrono::seconds(1), &held));
  EXPECT_EQ(held, 0u);
  for (int i = 0; i < 5; ++i) EXPECT_FALSE(limit.Allow(t0 + std::chrono::seconds(2 + i), &held));
  EXPECT_TRUE(limit.Allow(t0 + std::chrono::seconds(10), &held));  // a new interval
  EXPECT_EQ(held, 5u);
  EXPECT_TRUE(limit.Allow(t0 + std::chrono::seconds(11), &held));
  EXPECT_EQ(held, 0u);
  EXPECT_FALSE(limit.Allow(t0 + std::chrono::seconds(12), &held));
}

TEST(Status, CodesMapToErrnoAndBack) {
  EXPECT_EQ(ToErrno(StatusCode::kNotFound), ENOENT);
  EXPECT_EQ(ToErrno(StatusCode::kNotEmpty), ENOTEMPTY);
  EXPECT_EQ(ToErrno(StatusCode::kOk), 0);
  EXPECT_EQ(CodeFromErrno(EEXIST), StatusCode::kExists);
  EXPECT_EQ(CodeFromWire(101), StatusCode::kNotFound);
  EXPECT_EQ(CodeFromWire(65000), StatusCode::kRpcMalformed);
  Status st = Status(StatusCode::kNotFound, "chunk 7").WithContext("read");
  EXPECT_EQ(st.ToString(), "not found: read: chunk 7");
}

TEST(Status, ResultCarriesValueOrError) {
  Result<int> good = 5;
  ASSERT_TRUE(good.ok());
  EXPECT_EQ(*good, 5);
  Result<int> bad = Status(StatusCode::kIoError, "disk");
  EXPECT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kIoError);
}

// A retry loop asks whether the request its thread serves was cancelled:
// its interrupt flag set, its caller being killed, or (for reads) gone.
TEST(Cancel, AFlagACallerBeingKilledOrGone) {
  EXPECT_FALSE(CancelRequested());  // no request served: nothing cancels
  std::atomic<bool> interrupted{false};
  const auto self = static_cast<uint32_t>(::gettid());
  EXPECT_EQ(CallerStateOf(self), CallerState::kAlive);
  {
    CancelScope scope(&interrupted, self);
    EXPECT_FALSE(CancelRequested());
    interrupted = true;
    EXPECT_TRUE(CancelRequested());
    {
      CancelScope inner(nullptr, 0);  // another request's scope inside
      EXPECT_FALSE(CancelRequested());
    }
    EXPECT_TRUE(CancelRequested());
  }
  EXPECT_FALSE(CancelRequested());
  // A child stopped, then killed.
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::pause();
    ::_exit(0);
  }
  ASSERT_EQ(::kill(child, SIGSTOP), 0);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, WUNTRACED), child);
  ASSERT_EQ(::kill(child, SIGKILL), 0);
  const auto tid = static_cast<uint32_t>(child);
  // Being killed (SIGKILL pending) until it runs its exit, then a zombie:
  // not alive either way, once the kernel has moved past dequeuing it.
  CallerState killed = CallerStateOf(tid);
  for (int i = 0; i < 500 && killed == CallerState::kAlive; ++i) {
    ::usleep(10000);
    killed = CallerStateOf(tid);
  }
  EXPECT_NE(killed, CallerState::kAlive);
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_EQ(CallerStateOf(tid), CallerState::kGone);
  {
    CancelScope read(nullptr, tid, /*when_gone=*/true);
    EXPECT_TRUE(CancelRequested());
  }
  {
    CancelScope write(nullptr, tid, /*when_gone=*/false);
    EXPECT_FALSE(CancelRequested());
  }
}

// A cancellable wait: an event, the deadline, or the request cancelled
// (looked at between slices, not when the deadline ends the wait).
TEST(Cancel, PollCancellableEndsOnAnEventTheDeadlineOrACancel) {
  int p[2];
  ASSERT_EQ(::pipe(p), 0);
  UniqueFd r(p[0]), w(p[1]);
  pollfd fds[1] = {{r.get(), POLLIN, 0}};
  bool cancelled = true;
  const auto soon = [] { return std::chrono::steady_clock::now() + std::chrono::milliseconds(20); };
  EXPECT_EQ(PollCancellable(fds, soon(), &cancelled), 0);
  EXPECT_FALSE(cancelled);
  ASSERT_EQ(::write(w.get(), "x", 1), 1);
  EXPECT_EQ(PollCancellable(fds, soon(), &cancelled), 1);
  char c;
  ASSERT_EQ(::read(r.get(), &c, 1), 1);
  std::atomic<bool> interrupted{true};
  CancelScope scope(&interrupted, 0);
  EXPECT_EQ(
      PollCancellable(fds, std::chrono::steady_clock::now() + std::chrono::hours(1), &cancelled),
      0);
  EXPECT_TRUE(cancelled);
}

TEST(Config, ParsesSizesAndDurations) {
  EXPECT_EQ(ParseByteSize("64M")->bytes, 64ull << 20);
  EXPECT_EQ(ParseByteSize("4096")->bytes, 4096u);
  EXPECT_EQ(ParseByteSize("1G")->bytes, 1ull << 30);
  EXPECT_FALSE(ParseByteSize("12X").ok());
  EXPECT_FALSE(ParseByteSize("").ok());
  EXPECT_FALSE(ParseByteSize("99999999999999999999T").ok());
  EXPECT_EQ(ParseDuration("250ms")->value.count(), 250);
  EXPECT_EQ(ParseDuration("3s")->value.count(), 3000);
  EXPECT_EQ(ParseDuration("2d")->value.count(), 2 * 86400 * 1000);
  EXPECT_FALSE(ParseDuration("3 weeks").ok());
  EXPECT_EQ(FormatByteSize(64ull << 20), "64 MiB");
}

struct SampleConfig {
  std::string listen = "a";
  ByteSize chunk{1};
  Duration grace{};
  bool flag = false;
  template <class V>
  void Visit(V& v) {
    v("listen", listen, "where");
    v("chunk-size", chunk, "how big");
    v("grace", grace, "how long");
    v("flag", flag, "on or off");
  }
};

TEST(Config, TomlSectionAppliesAndRejectsUnknownKeys) {
  auto doc = TomlDocument::Parse("[meta]\nlisten = \"x:1\"\nchunk-size = \"2M\"\ngrace = \"5s\"\n", "t");
  ASSERT_TRUE(doc.ok()) << doc.status().ToString();
  SampleConfig cfg;
  ASSERT_TRUE(doc->Apply("meta", cfg).ok());
  EXPECT_EQ(cfg.listen, "x:1");
  EXPECT_EQ(cfg.chunk.bytes, 2u << 20);
  EXPECT_EQ(cfg.grace.value.count(), 5000);
  SampleConfig untouched;
  EXPECT_TRUE(doc->Apply("data", untouched).ok());
  EXPECT_EQ(untouched.listen, "a");

  auto typo = TomlDocument::Parse("[meta]\nlisten2 = \"x\"\n", "t");
  ASSERT_TRUE(typo.ok());
  Status st = typo->Apply("meta", cfg);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("listen2"), std::string::npos);

  auto wrong_type = TomlDocument::Parse("[meta]\nflag = 3\n", "t");
  EXPECT_FALSE(wrong_type->Apply("meta", cfg).ok());
  EXPECT_FALSE(TomlDocument::Parse("[meta\n", "t").ok());
}

TEST(AlignedBuffer, HugePagesIsTheAskedSizeOnAHugePageBoundary) {
  AlignedBuffer buf = AlignedBuffer::HugePages((1u << 20) + 100);
  EXPECT_EQ(buf.size(), (1u << 20) + kPageSize);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(buf.data()) % (2u << 20), 0u);
  std::memset(buf.data(), 0x7e, buf.size());
  EXPECT_EQ(buf.data()[buf.size() - 1], std::byte{0x7e});
  AlignedBuffer moved = std::move(buf);
  EXPECT_EQ(moved.size(), (1u << 20) + kPageSize);
  EXPECT_EQ(buf.data(), nullptr);  // NOLINT(bugprone-use-after-move): moved-from is empty
}

TEST(Crc32c, MatchesKnownVector) {
  const char* text = "123456789";
  EXPECT_EQ(Crc32c(std::as_bytes(std::span(text, 9))), 0xE3069283u);
  // Incremental equals one-shot.
  uint32_t part = Crc32c(std::as_bytes(std::span(text, 4)));
  EXPECT_EQ(Crc32c(std::as_bytes(std::span(text + 4, 5)), part), 0xE3069283u);
  std::string zeros(4096, '\0');
  EXPECT_EQ(Crc32cOfZeros(4096), Crc32c(std::as_bytes(std::span(zeros.data(), zeros.size()))));
}

class IoBackendTest : public ::testing::TestWithParam<std::string> {};

TEST_P(IoBackendTest, BatchReadWrite) {
  std::unique_ptr<IoBackend> backend;
  if (GetParam() == "psync") {
    backend = MakePsyncBackend();
  } else {
    auto uring = MakeUringBackend(4);
    if (!uring.ok()) GTEST_SKIP() << "io_uring unavailable: " << uring.status().ToString();
    backend = std::move(uring).value();
  }
  char path[] = "/tmp/t0fs-io-XXXXXX";
  UniqueFd fd(::mkstemp(path));
  ASSERT_TRUE(fd.valid());
  ::unlink(path);
  AlignedBuffer a(8192), b(8192);
  std::memset(a.data(), 'x', 8192);
  // Six requests through a ring of depth 4 exercise slicing.
  std::vector<IoRequest> writes;
  for (int block = 0; block < 6; ++block) {
    writes.push_back(IoRequest{IoOp::kWrite, fd.get(), uint64_t(block) * 1000, a.data(), 1000, 0});
  }
  backend->Execute(writes);
  for (auto& w : writes) EXPECT_EQ(w.result, 1000);
  IoRequest reqs[2] = {{IoOp::kRead, fd.get(), 0, b.data(), 8192, 0},
                       {IoOp::kFdatasync, fd.get(), 0, nullptr, 0, 0}};
  backend->Execute(reqs);
  EXPECT_EQ(reqs[0].result, 6000);  // short at EOF
  EXPECT_EQ(reqs[1].result, 0);
  IoRequest bad{IoOp::kRead, 12345, 0, b.data(), 10, 0};
  backend->Execute(std::span(&bad, 1));
  EXPECT_EQ(bad.result, -EBADF);
}

INSTANTIATE_TEST_SUITE_P(Backends, IoBackendTest, ::testing::Values("psync", "uring"));

TEST(Secret, CreateLoadAndRefuseOpenModes) {
  std::string dir = std::filesystem::temp_directory_path() / ("t0fs-secret-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::string path = dir + "/secret";
  ASSERT_TRUE(CreateSecret(path).ok());
  EXPECT_FALSE(CreateSecret(path).ok());  // never overwritten
  auto secret = LoadSecret(path);
  ASSERT_TRUE(secret.ok()) << secret.status().ToString();
  EXPECT_EQ(secret->size(), 64u);
  ::chmod(path.c_str(), 0644);
  EXPECT_EQ(LoadSecret(path).status().code(), StatusCode::kPermissionDenied);
  std::filesystem::remove_all(dir);

  Digest d1 = HmacSha256("key", "data"), d2 = HmacSha256("key", "data"), d3 = HmacSha256("key2", "data");
  EXPECT_TRUE(DigestEqual(d1, d2));
  EXPECT_FALSE(DigestEqual(d1, d3));
}

}  // namespace
}  // namespace t0fs
