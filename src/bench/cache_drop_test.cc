#include "bench/cache_drop.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/magic.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <vector>

#include "bench/test_util.h"

namespace t0fs::bench {
namespace {

// Writes `bytes` to a new file, fsyncs it (clean pages, which fadvise can
// drop) and reads it back (so its pages are resident).
std::string CachedFile(const std::string& dir, const std::string& name, size_t bytes) {
  std::string path = dir + "/" + name;
  int fd = ::open(path.c_str(), O_CREAT | O_RDWR | O_TRUNC, 0644);
  EXPECT_GE(fd, 0);
  std::vector<char> buf(bytes, 'x');
  EXPECT_EQ(::pwrite(fd, buf.data(), bytes, 0), static_cast<ssize_t>(bytes));
  EXPECT_EQ(::fsync(fd), 0);
  EXPECT_EQ(::pread(fd, buf.data(), bytes, 0), static_cast<ssize_t>(bytes));
  ::close(fd);
  return path;
}

// fadvise drops nothing on tmpfs (its pages are the data): such checks skip.
bool OnTmpfs(const std::string& dir) {
  struct statfs fs {};
  return ::statfs(dir.c_str(), &fs) == 0 && fs.f_type == TMPFS_MAGIC;
}

TEST(CacheDrop, ParsesEveryMode) {
  for (const std::string& name : CacheDropChoices()) EXPECT_TRUE(ParseCacheDropMode(name).ok());
  EXPECT_EQ(*ParseCacheDropMode("drop_caches"), CacheDropMode::kSysctl);
  EXPECT_EQ(CacheDropModeName(CacheDropMode::kFadvise), "fadvise");
  auto bad = ParseCacheDropMode("sometimes");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("auto, sysctl, fadvise"), std::string::npos);
}

TEST(CacheDrop, SampleIndicesSpreadEvenlyWithEnds) {
  EXPECT_EQ(SampleIndices(3, 64), (std::vector<size_t>{0, 1, 2}));
  EXPECT_TRUE(SampleIndices(0, 64).empty());
  EXPECT_EQ(SampleIndices(10, 1), (std::vector<size_t>{0}));
  auto many = SampleIndices(28000, 64);
  ASSERT_EQ(many.size(), 64u);
  EXPECT_EQ(many.front(), 0u);
  EXPECT_EQ(many.back(), 27999u);
  for (size_t idx = 1; idx < many.size(); ++idx) EXPECT_GT(many[idx], many[idx - 1]);
  EXPECT_EQ(SampleIndices(5, 4), (std::vector<size_t>{0, 1, 2, 4}));
}

TEST(CacheDrop, ResidencyCountsPagesInMemory) {
  TempDir dir;
  std::string path = CachedFile(dir.path(), "f", 1 << 20);
  auto before = FileResidency(path);
  ASSERT_TRUE(before.ok()) << before.status().ToString();
  EXPECT_EQ(before->files, 1u);
  EXPECT_EQ(before->pages, (1u << 20) / static_cast<uint64_t>(::sysconf(_SC_PAGESIZE)));
  EXPECT_GT(before->Fraction(), 0.9) << "a file just read is in memory";
  if (OnTmpfs(dir.path())) GTEST_SKIP() << "tmpfs: fadvise cannot drop";
  ASSERT_TRUE(FadviseDontNeed(path));
  auto after = FileResidency(path);
  ASSERT_TRUE(after.ok());
  EXPECT_LT(after->Fraction(), 0.05);
}

TEST(CacheDrop, ResidencyOfOddFiles) {
  TempDir dir;
  EXPECT_FALSE(FileResidency(dir.path() + "/missing").ok());
  std::string empty = CachedFile(dir.path(), "empty", 0);
  auto e = FileResidency(empty);
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->pages, 0u);
  EXPECT_EQ(e->Fraction(), 0.0);
  auto null = FileResidency("/dev/null");  // a character device: nothing to count
  ASSERT_TRUE(null.ok());
  EXPECT_EQ(null->files, 0u);
  // A sample skips what cannot be opened.
  std::string real = CachedFile(dir.path(), "real", 64 << 10);
  Residency some = SampleResidency({dir.path() + "/missing", real});
  EXPECT_EQ(some.files, 1u);
  EXPECT_GT(some.Fraction(), 0.9);
}

TEST(CacheDrop, NoneKeepsTheCacheAndSaysSo) {
  TempDir dir;
  std::vector<std::string> files = {CachedFile(dir.path(), "a", 256 << 10),
                                    CachedFile(dir.path(), "b", 256 << 10)};
  auto r = DropPageCache(CacheDropMode::kNone, files);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->done, "none");
  EXPECT_EQ(r->requested, "none");
  EXPECT_EQ(r->files, 2u);
  EXPECT_EQ(r->files_checked, 2u);
  EXPECT_GT(r->resident, 0.9);
  ASSERT_FALSE(r->warnings.empty());
  EXPECT_NE(r->warnings[0].find("not dropped"), std::string::npos);
  EXPECT_NE(r->Describe().find("NOT dropped"), std::string::npos);
}

TEST(CacheDrop, FadviseDropsCleanPagesOfAPlainFile) {
  TempDir dir;
  if (OnTmpfs(dir.path())) GTEST_SKIP() << "tmpfs: fadvise cannot drop";
  std::vector<std::string> files = {CachedFile(dir.path(), "a", 512 << 10)};
  auto r = DropPageCache(CacheDropMode::kFadvise, files);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->done, "fadvise");
  EXPECT_LT(r->resident, kResidentLimit);
  EXPECT_TRUE(r->warnings.empty()) << r->warnings[0];
}

TEST(CacheDrop, DirectReadsNeedNoDrop) {
  CacheReport r = DirectReadsReport(CacheDropMode::kAuto);
  EXPECT_TRUE(r.applicable());
  EXPECT_EQ(r.done, "direct");
  EXPECT_NE(r.Describe().find("O_DIRECT"), std::string::npos);
}

TEST(CacheReport, MergeKeepsTheWorstAndSaysMixed) {
  CacheReport a;
  a.requested = "auto";
  a.done = "sysctl";
  a.drops = 1;
  a.resident = 0.01;
  a.files = a.files_checked = 4;
  CacheReport b = a;
  b.resident = 0.30;
  b.AddWarning("w");
  b.AddWarning("w");
  EXPECT_EQ(b.warnings.size(), 1u);
  CacheReport all;
  all.Merge(CacheReport{});  // not applicable: ignored
  EXPECT_FALSE(all.applicable());
  all.Merge(a);
  all.Merge(b);
  EXPECT_EQ(all.done, "sysctl");
  EXPECT_EQ(all.drops, 2u);
  EXPECT_DOUBLE_EQ(all.resident, 0.30);
  EXPECT_EQ(all.warnings, (std::vector<std::string>{"w"}));
  CacheReport c = a;
  c.done = "fadvise";
  all.Merge(c);
  EXPECT_EQ(all.done, "mixed");
  // The JSON form reads back.
  CacheReport back = CacheReportFromJson(ToJson(b));
  EXPECT_EQ(back.done, "sysctl");
  EXPECT_DOUBLE_EQ(back.resident, 0.30);
  EXPECT_EQ(back.warnings, b.warnings);
  EXPECT_FALSE(CacheReportFromJson(ToJson(CacheReport{})).applicable());
}

}  // namespace
}  // namespace t0fs::bench
