// PassthroughTable: the per-inode decisions the kernel's io-mode rules
// require, with fake backing ioctls and Files whose eligibility is set.
#include "fuse/ops/passthrough.h"

#include <fcntl.h>
#include <unistd.h>

#include <vector>

#include <gtest/gtest.h>

namespace t0fs::fuse {
namespace {

using Kind = PassthroughTable::Kind;

// A File that is (or is not) passthrough-eligible; the rest is unused here.
class FakeFile : public client::File {
 public:
  explicit FakeFile(InodeId ino, bool eligible) : ino_(ino), eligible_(eligible) {}
  Result<size_t> Read(uint64_t, std::span<std::byte>) override { return size_t{0}; }
  Result<size_t> Write(uint64_t, std::span<const std::byte> d) override { return d.size(); }
  Status Flush() override { return Status::Ok(); }
  Status Fsync(bool) override { return Status::Ok(); }
  Status Truncate(uint64_t) override { return Status::Ok(); }
  Status Fallocate(int, uint64_t, uint64_t) override { return Status::Ok(); }
  Status Close() override { return Status::Ok(); }
  InodeId ino() const override { return ino_; }
  uint64_t size() const override { return 0; }
  client::Attr attr() const override { return {}; }
  Result<client::PassthroughFile> OpenPassthrough(bool write, bool join) override {
    if (!eligible_ && !(join && !write)) return Status(join ? StatusCode::kBusy : StatusCode::kNotSupported, "no");
    opened++;
    return client::PassthroughFile{UniqueFd(::open("/dev/null", O_RDONLY | O_CLOEXEC)), write};
  }
  void AbandonPassthrough() override { abandoned++; }
  int opened = 0, abandoned = 0;

 private:
  InodeId ino_;
  bool eligible_;
};

struct BackingKernel {
  int32_t next_id = 1;
  bool refuse = false;
  std::vector<int32_t> opened, closed;
  PassthroughTable::Kernel Ops() {
    return {[this](int, int) -> int32_t {
              if (refuse) {
                errno = EPERM;
                return -1;
              }
              opened.push_back(next_id);
              return next_id++;
            },
            [this](int, int32_t id) { closed.push_back(id); }};
  }
};

constexpr InodeId kIno{42};

TEST(PassthroughTable, OffMeansEveryOpenIsCached) {
  BackingKernel k;
  PassthroughTable t(k.Ops());
  FakeFile f(kIno, true);
  EXPECT_EQ(t.Open(-1, kIno, f, O_RDONLY).kind, Kind::kCached);
  EXPECT_EQ(f.opened, 0);
  EXPECT_TRUE(k.opened.empty());
}

TEST(PassthroughTable, OneBackingPerInodeUntilItsLastHandle) {
  BackingKernel k;
  PassthroughTable t(k.Ops());
  t.Enable(true);
  FakeFile a(kIno, true), b(kIno, true), c(kIno, false);
  auto da = t.Open(-1, kIno, a, O_RDONLY);
  ASSERT_EQ(da.kind, Kind::kPassthrough);
  t.Bind(1, kIno, da);
  auto db = t.Open(-1, kIno, b, O_RDWR);  // a writer shares the backing (the kernel opens it with its flags)
  ASSERT_EQ(db.kind, Kind::kPassthrough);
  EXPECT_EQ(db.backing_id, da.backing_id);
  t.Bind(2, kIno, db);
  EXPECT_EQ(k.opened.size(), 1u);
  // Beside passthrough opens every open must join: a reader does even if
  // the file no longer qualifies; a writer that may not is refused.
  auto dc = t.Open(-1, kIno, c, O_RDONLY);
  EXPECT_EQ(dc.kind, Kind::kPassthrough);
  EXPECT_EQ(dc.backing_id, da.backing_id);
  t.Bind(3, kIno, dc);
  FakeFile w(kIno, false);
  auto dw = t.Open(-1, kIno, w, O_WRONLY);
  EXPECT_EQ(dw.kind, Kind::kRefused);
  EXPECT_EQ(dw.why.code(), StatusCode::kBusy);
  EXPECT_EQ(t.stats().refused, 1u);
  EXPECT_EQ(t.stats().backing_files, 1u);
  t.Release(-1, 1);
  t.Release(-1, 3);
  EXPECT_TRUE(k.closed.empty());
  t.Release(-1, 2);
  ASSERT_EQ(k.closed.size(), 1u);
  EXPECT_EQ(k.closed[0], da.backing_id);
  EXPECT_EQ(t.stats().backing_files, 0u);
  // The next eligible open registers afresh.
  FakeFile d(kIno, true);
  EXPECT_EQ(t.Open(-1, kIno, d, O_RDONLY).kind, Kind::kPassthrough);
  EXPECT_EQ(k.opened.size(), 2u);
}

TEST(PassthroughTable, CachedOpensKeepTheInodeCached) {
  BackingKernel k;
  PassthroughTable t(k.Ops());
  t.Enable(true);
  FakeFile a(kIno, false), b(kIno, true);
  auto da = t.Open(-1, kIno, a, O_RDONLY);
  EXPECT_EQ(da.kind, Kind::kCached);
  t.Bind(1, kIno, da);
  // The kernel would refuse a passthrough open of a cached inode (EIO).
  auto db = t.Open(-1, kIno, b, O_RDONLY);
  EXPECT_EQ(db.kind, Kind::kCached);
  EXPECT_EQ(b.opened, 0);
  t.Bind(2, kIno, db);
  t.Release(-1, 1);
  t.Release(-1, 2);
  FakeFile c(kIno, true);
  EXPECT_EQ(t.Open(-1, kIno, c, O_RDONLY).kind, Kind::kPassthrough);
  // Other inodes are independent.
  FakeFile other(InodeId(7), true);
  EXPECT_EQ(t.Open(-1, InodeId(7), other, O_RDONLY).kind, Kind::kPassthrough);
}

TEST(PassthroughTable, RefusedBackingFallsBackAndUndoesTheWriter) {
  BackingKernel k;
  k.refuse = true;
  PassthroughTable t(k.Ops());
  t.Enable(true);
  FakeFile a(kIno, true);
  EXPECT_EQ(t.Open(-1, kIno, a, O_RDWR).kind, Kind::kCached);
  EXPECT_EQ(a.abandoned, 1);
  EXPECT_EQ(t.stats().failures, 1u);
  EXPECT_EQ(t.stats().cached, 1u);
}

}  // namespace
}  // namespace t0fs::fuse
