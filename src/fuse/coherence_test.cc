// What the kernel caches against what another client changed: the MemClient
// called directly plays the other client, behind the kernel's back (no
// notification reaches the kernel, as before a change poll answers).
// Skipped unless root with /dev/fuse.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <span>
#include <string>

#include "fuse/testing/mount_fixture.h"

namespace t0fs::fuse::testing {
namespace {

// Attributes cached far longer than the test takes: only an invalidation can
// make the kernel ask again.
class LongAttrCacheTest : public MountedFsTest {
 protected:
  LongAttrCacheTest() { config_.attr_timeout = Duration{std::chrono::seconds(60)}; }

  // Creates `path` holding `data`, through the mount.
  void Make(const std::string& path, std::string_view data) {
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ASSERT_GE(fd, 0) << std::strerror(errno);
    ASSERT_EQ(::write(fd, data.data(), data.size()), ssize_t(data.size()));
    ASSERT_EQ(::close(fd), 0);
  }

  // Writes `data` at `offset` of `path`'s inode through the Client itself.
  void WriteBehindTheKernel(const std::string& path, uint64_t offset, std::string_view data) {
    struct stat st {};
    ASSERT_EQ(::stat(path.c_str(), &st), 0);
    auto file = client_->Open(InodeId(st.st_ino), O_WRONLY);
    ASSERT_TRUE(file.ok()) << file.status().ToString();
    auto wrote = (*file)->Write(offset, std::as_bytes(std::span(data.data(), data.size())));
    ASSERT_TRUE(wrote.ok()) << wrote.status().ToString();
    ASSERT_TRUE((*file)->Close().ok());
  }
};

TEST_F(LongAttrCacheTest, AnOpenReadsAFileGrownElsewhereWhole) {
  // The kernel holds the size 10 (the stat); the file grows to 20 elsewhere
  // and its writer closes: close-to-open says the next open reads 20 bytes.
  // The kernel reads through its page cache only up to the size it knows,
  // so the OPEN must tell it that size is out of date.
  const std::string f = Path("grown");
  Make(f, "0123456789");
  struct stat st {};
  ASSERT_EQ(::stat(f.c_str(), &st), 0);
  ASSERT_EQ(st.st_size, 10);
  WriteBehindTheKernel(f, 10, "abcdefghij");
  EXPECT_EQ(ReadAll(f), "0123456789abcdefghij");
  ASSERT_EQ(::stat(f.c_str(), &st), 0);
  EXPECT_EQ(st.st_size, 20);  // the open's invalidation made the stat ask too
  // Again, with the size cached by the read just done.
  WriteBehindTheKernel(f, 20, "KLMNO");
  EXPECT_EQ(ReadAll(f), "0123456789abcdefghijKLMNO");
}

TEST_F(LongAttrCacheTest, WithNothingChangedTheSizeStandsAndTheDataIsRead) {
  const std::string f = Path("same");
  Make(f, "xyz");
  for (int i = 0; i < 3; ++i) EXPECT_EQ(ReadAll(f), "xyz");
  struct stat st {};
  ASSERT_EQ(::stat(f.c_str(), &st), 0);
  EXPECT_EQ(st.st_size, 3);
}

}  // namespace
}  // namespace t0fs::fuse::testing
