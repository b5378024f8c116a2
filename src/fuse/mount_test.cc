// The adapter through the real kernel: a MemClient mounted with FuseServer,
// exercised with ordinary syscalls. Skipped unless root with /dev/fuse.
// Every test unmounts in all paths (fixture TearDown, TempDir).
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <functional>
#include <cstring>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <spdlog/spdlog.h>

#include "common/buffer.h"
#include "fuse/protocol/init.h"
#include "fuse/protocol/mount.h"
#include "fuse/testing/mount_fixture.h"

namespace t0fs::fuse::testing {
namespace {

// Deterministic content: byte i of a file is Pattern(i).
char Pattern(uint64_t i) { return static_cast<char>((i * 131 + (i >> 12)) & 0xff); }

std::string PatternString(uint64_t offset, size_t len) {
  std::string s(len, '\0');
  for (size_t i = 0; i < len; ++i) s[i] = Pattern(offset + i);
  return s;
}

bool WriteFile(const std::string& path, std::string_view data, int flags = O_TRUNC) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | flags, 0644);
  if (fd < 0) return false;
  bool ok = ::write(fd, data.data(), data.size()) == ssize_t(data.size());
  return ::close(fd) == 0 && ok;
}

using FuseMountTest = MountedFsTest;

TEST_F(FuseMountTest, NegotiatedInfoIsExposed) {
  const auto& info = server_->info();
  EXPECT_GE(info.minor, abi::kMinMinor);
  EXPECT_EQ(info.max_write, 1u << 20);
  EXPECT_EQ(info.max_pages, 256u);
  EXPECT_NE(info.flags & abi::init::kAsyncRead, 0u);
  EXPECT_NE(info.flags & abi::init::kDoReaddirplus, 0u);
  EXPECT_EQ(info.flags & abi::init::kWritebackCache, 0u);
  // Enabled exactly when offered, asked for (the default) and we are root.
  const bool offered = (info.kernel_flags & abi::init::kPassthrough) != 0;
  EXPECT_EQ(server_->passthrough_offered(), offered);
  EXPECT_EQ(info.passthrough, offered && ::geteuid() == 0);
  EXPECT_EQ((info.flags & abi::init::kPassthrough) != 0, info.passthrough);
  EXPECT_TRUE(IsFuseMountpoint(mnt_));
}

TEST_F(FuseMountTest, ReadaheadRaisedToTheConfiguredWindow) {
  // INIT can only lower the kernel's 128 KiB; as root the mount raises its
  // bdi's read_ahead_kb to max_readahead (8 MiB by default).
  if (::geteuid() != 0) GTEST_SKIP() << "raising the bdi's readahead needs root";
  EXPECT_EQ(config_.max_readahead.bytes, uint64_t(8) << 20);
  struct stat sb {};
  ASSERT_EQ(::stat(mnt_.c_str(), &sb), 0);
  const std::string knob = "/sys/class/bdi/" + std::to_string(major(sb.st_dev)) + ":" +
                           std::to_string(minor(sb.st_dev)) + "/read_ahead_kb";
  std::ifstream in(knob);
  ASSERT_TRUE(in) << knob;
  uint64_t kb = 0;
  in >> kb;
  EXPECT_EQ(kb, config_.max_readahead.bytes / 1024) << knob;
}

TEST_F(FuseMountTest, CreateWriteReadBackInMegabytePieces) {
  const std::string path = Path("big");
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_EXCL, 0640);
  ASSERT_GE(fd, 0) << std::strerror(errno);
  const size_t kSize = (3 << 20) + 12345;
  std::string data = PatternString(0, kSize);
  for (size_t off = 0; off < kSize; off += 1 << 20) {
    size_t len = std::min<size_t>(1 << 20, kSize - off);
    ASSERT_EQ(::pwrite(fd, data.data() + off, len, off), ssize_t(len));
  }
  struct stat st;
  ASSERT_EQ(::fstat(fd, &st), 0);
  EXPECT_EQ(st.st_size, off_t(kSize));
  EXPECT_EQ(st.st_blocks, blkcnt_t((kSize + 511) / 512));
  EXPECT_EQ(st.st_blksize, 4096);
  EXPECT_EQ(st.st_mode & 07777, 0640u);
  ASSERT_EQ(::close(fd), 0);
  EXPECT_EQ(ReadAll(path), data);
  // Odd offsets and sizes.
  fd = ::open(path.c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  std::string buf(777777, '\0');
  ASSERT_EQ(::pread(fd, buf.data(), buf.size(), 1000003), ssize_t(buf.size()));
  EXPECT_EQ(buf, PatternString(1000003, buf.size()));
  EXPECT_EQ(::pread(fd, buf.data(), 100, kSize + 10), 0);
  ::close(fd);
  // RELEASE follows close(2) asynchronously; the server forgets the handle
  // before the client's Close ends, so wait for both.
  EXPECT_TRUE(Eventually([&] { return server_->open_files() == 0 && client_->open_files() == 0; }));
}

TEST_F(FuseMountTest, ReaddirOfThousandsOfEntries) {
  const std::string dir = Path("many");
  ASSERT_EQ(::mkdir(dir.c_str(), 0755), 0);
  std::set<std::string> expected;
  for (int i = 0; i < 3000; ++i) {
    std::string name = "entry-with-a-longish-name-" + std::to_string(i);
    int fd = ::open((dir + "/" + name).c_str(), O_WRONLY | O_CREAT, 0644);
    ASSERT_GE(fd, 0) << i << ": " << std::strerror(errno);
    ::close(fd);
    expected.insert(name);
  }
  for (int pass = 0; pass < 2; ++pass) {  // plain readdir and readdirplus (auto) paths
    DIR* d = ::opendir(dir.c_str());
    ASSERT_NE(d, nullptr);
    std::set<std::string> seen;
    size_t dots = 0;
    while (dirent* e = ::readdir(d)) {
      std::string name = e->d_name;
      if (name == "." || name == "..") {
        ++dots;
        continue;
      }
      EXPECT_EQ(e->d_type, DT_REG) << name;
      EXPECT_TRUE(seen.insert(name).second) << "duplicate " << name;
    }
    ::closedir(d);
    EXPECT_EQ(dots, 2u);
    EXPECT_EQ(seen, expected);
  }
  // stat through names the readdirplus answers cached.
  struct stat st;
  EXPECT_EQ(::stat((dir + "/entry-with-a-longish-name-2999").c_str(), &st), 0);
  // rmdir of a non-empty directory.
  EXPECT_EQ(::rmdir(dir.c_str()), -1);
  EXPECT_EQ(errno, ENOTEMPTY);
}

TEST_F(FuseMountTest, SeekdirResumesWhereTelldirWas) {
  const std::string dir = Path("seek");
  ASSERT_EQ(::mkdir(dir.c_str(), 0755), 0);
  for (int i = 0; i < 100; ++i) ASSERT_TRUE(WriteFile(dir + "/f" + std::to_string(i), "x"));
  DIR* d = ::opendir(dir.c_str());
  ASSERT_NE(d, nullptr);
  for (int i = 0; i < 40; ++i) ASSERT_NE(::readdir(d), nullptr);
  long pos = ::telldir(d);
  std::string next = ::readdir(d)->d_name;
  for (int i = 0; i < 20; ++i) ::readdir(d);
  ::seekdir(d, pos);
  dirent* again = ::readdir(d);
  ASSERT_NE(again, nullptr);
  EXPECT_EQ(next, again->d_name);
  ::rewinddir(d);
  EXPECT_STREQ(::readdir(d)->d_name, ".");
  ::closedir(d);
}

TEST_F(FuseMountTest, RenameVariants) {
  ASSERT_TRUE(WriteFile(Path("a"), "AAA"));
  ASSERT_TRUE(WriteFile(Path("b"), "BBB"));
  ASSERT_EQ(::rename(Path("a").c_str(), Path("c").c_str()), 0);
  EXPECT_EQ(::access(Path("a").c_str(), F_OK), -1);
  EXPECT_EQ(ReadAll(Path("c")), "AAA");
  // Over an existing file.
  ASSERT_EQ(::rename(Path("c").c_str(), Path("b").c_str()), 0);
  EXPECT_EQ(ReadAll(Path("b")), "AAA");
  ASSERT_TRUE(WriteFile(Path("d"), "DDD"));
  // RENAME_NOREPLACE.
  EXPECT_EQ(::renameat2(AT_FDCWD, Path("d").c_str(), AT_FDCWD, Path("b").c_str(),
                        RENAME_NOREPLACE),
            -1);
  EXPECT_EQ(errno, EEXIST);
  ASSERT_EQ(::renameat2(AT_FDCWD, Path("d").c_str(), AT_FDCWD, Path("e").c_str(),
                        RENAME_NOREPLACE),
            0);
  // RENAME_EXCHANGE.
  ASSERT_EQ(::renameat2(AT_FDCWD, Path("b").c_str(), AT_FDCWD, Path("e").c_str(),
                        RENAME_EXCHANGE),
            0);
  EXPECT_EQ(ReadAll(Path("b")), "DDD");
  EXPECT_EQ(ReadAll(Path("e")), "AAA");
  // Directories: move into another directory, refuse moving into itself.
  ASSERT_EQ(::mkdir(Path("d1").c_str(), 0755), 0);
  ASSERT_EQ(::mkdir(Path("d2").c_str(), 0755), 0);
  ASSERT_TRUE(WriteFile(Path("d1/inner"), "I"));
  ASSERT_EQ(::rename(Path("d1").c_str(), Path("d2/moved").c_str()), 0);
  EXPECT_EQ(ReadAll(Path("d2/moved/inner")), "I");
  EXPECT_EQ(::rename(Path("d2").c_str(), Path("d2/moved/x").c_str()), -1);
  EXPECT_EQ(errno, EINVAL);
  // A file over a directory and the reverse.
  EXPECT_EQ(::rename(Path("b").c_str(), Path("d2").c_str()), -1);
  EXPECT_EQ(errno, EISDIR);
  struct stat st;
  ASSERT_EQ(::stat(Path("d2").c_str(), &st), 0);
  EXPECT_EQ(st.st_nlink, 3u);  // ".", its name, and moved/..
}

TEST_F(FuseMountTest, Xattrs) {
  const std::string f = Path("x");
  ASSERT_TRUE(WriteFile(f, "x"));
  ASSERT_EQ(::setxattr(f.c_str(), "user.color", "blue", 4, 0), 0);
  ASSERT_EQ(::setxattr(f.c_str(), "user.size", "large", 5, XATTR_CREATE), 0);
  EXPECT_EQ(::setxattr(f.c_str(), "user.size", "small", 5, XATTR_CREATE), -1);
  EXPECT_EQ(errno, EEXIST);
  EXPECT_EQ(::setxattr(f.c_str(), "user.none", "v", 1, XATTR_REPLACE), -1);
  EXPECT_EQ(errno, ENODATA);
  EXPECT_EQ(::getxattr(f.c_str(), "user.color", nullptr, 0), 4);  // size probe
  char buf[64];
  EXPECT_EQ(::getxattr(f.c_str(), "user.color", buf, 2), -1);
  EXPECT_EQ(errno, ERANGE);
  ASSERT_EQ(::getxattr(f.c_str(), "user.color", buf, sizeof(buf)), 4);
  EXPECT_EQ(std::string(buf, 4), "blue");
  EXPECT_EQ(::getxattr(f.c_str(), "user.missing", buf, sizeof(buf)), -1);
  EXPECT_EQ(errno, ENODATA);
  ssize_t list_size = ::listxattr(f.c_str(), nullptr, 0);
  EXPECT_EQ(list_size, ssize_t(sizeof("user.color") + sizeof("user.size")));
  EXPECT_EQ(::listxattr(f.c_str(), buf, 3), -1);
  EXPECT_EQ(errno, ERANGE);
  ASSERT_EQ(::listxattr(f.c_str(), buf, sizeof(buf)), list_size);
  EXPECT_EQ(std::string(buf, size_t(list_size)), std::string("user.color\0user.size\0", 21));
  ASSERT_EQ(::removexattr(f.c_str(), "user.color"), 0);
  EXPECT_EQ(::removexattr(f.c_str(), "user.color"), -1);
  EXPECT_EQ(errno, ENODATA);
  // File capabilities are not stored (the mount is nosuid anyway).
  const uint32_t caps[5] = {0x02000000u /* VFS_CAP_REVISION_2 */, 1u << 13, 0, 0, 0};
  EXPECT_EQ(::setxattr(f.c_str(), "security.capability", caps, sizeof(caps), 0), -1);
  EXPECT_EQ(errno, EOPNOTSUPP);
  EXPECT_EQ(::getxattr(f.c_str(), "security.capability", buf, sizeof(buf)), -1);
  EXPECT_EQ(errno, ENODATA);
  // On a directory too.
  ASSERT_EQ(::setxattr(mnt_.c_str(), "user.root", "r", 1, 0), 0);
  EXPECT_EQ(::getxattr(mnt_.c_str(), "user.root", buf, sizeof(buf)), 1);
}

TEST_F(FuseMountTest, SymlinksAndHardLinks) {
  ASSERT_TRUE(WriteFile(Path("target"), "content"));
  ASSERT_EQ(::symlink("target", Path("link").c_str()), 0);
  char buf[256];
  ssize_t n = ::readlink(Path("link").c_str(), buf, sizeof(buf));
  ASSERT_EQ(n, 6);
  EXPECT_EQ(std::string(buf, size_t(n)), "target");
  struct stat lst, st;
  ASSERT_EQ(::lstat(Path("link").c_str(), &lst), 0);
  EXPECT_TRUE(S_ISLNK(lst.st_mode));
  EXPECT_EQ(lst.st_size, 6);
  EXPECT_EQ(ReadAll(Path("link")), "content");
  // A dangling link and a long target.
  std::string far(1000, 'z');
  ASSERT_EQ(::symlink(far.c_str(), Path("far").c_str()), 0);
  EXPECT_EQ(::readlink(Path("far").c_str(), buf, sizeof(buf)), ssize_t(sizeof(buf)));

  ASSERT_EQ(::link(Path("target").c_str(), Path("hard").c_str()), 0);
  ASSERT_EQ(::stat(Path("hard").c_str(), &st), 0);
  struct stat orig;
  ASSERT_EQ(::stat(Path("target").c_str(), &orig), 0);
  EXPECT_EQ(st.st_ino, orig.st_ino);
  EXPECT_EQ(st.st_nlink, 2u);
  ASSERT_EQ(::unlink(Path("target").c_str()), 0);
  ASSERT_EQ(::stat(Path("hard").c_str(), &st), 0);
  EXPECT_EQ(st.st_nlink, 1u);
  EXPECT_EQ(ReadAll(Path("hard")), "content");
  EXPECT_EQ(::link(mnt_.c_str(), Path("dirlink").c_str()), -1);  // directories: EPERM
  EXPECT_EQ(errno, EPERM);
}

TEST_F(FuseMountTest, UnlinkWhileOpen) {
  const std::string f = Path("ghost");
  int fd = ::open(f.c_str(), O_RDWR | O_CREAT, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::write(fd, "before", 6), 6);
  const size_t inodes_before = client_->inode_count();
  ASSERT_EQ(::unlink(f.c_str()), 0);
  EXPECT_EQ(::access(f.c_str(), F_OK), -1);
  struct stat st;
  ASSERT_EQ(::fstat(fd, &st), 0);
  EXPECT_EQ(st.st_nlink, 0u);
  ASSERT_EQ(::pwrite(fd, "+after", 6, 6), 6);
  char buf[32];
  ASSERT_EQ(::pread(fd, buf, sizeof(buf), 0), 12);
  EXPECT_EQ(std::string(buf, 12), "before+after");
  ASSERT_EQ(::ftruncate(fd, 3), 0);
  ASSERT_EQ(::fstat(fd, &st), 0);
  EXPECT_EQ(st.st_size, 3);
  EXPECT_EQ(client_->inode_count(), inodes_before);
  ASSERT_EQ(::close(fd), 0);
  // RELEASE is asynchronous: the inode goes once the kernel has sent it.
  EXPECT_TRUE(Eventually([&] { return client_->inode_count() == inodes_before - 1; }));
}

TEST_F(FuseMountTest, OnlyWritersCloseWithAFlush) {
  // A read-only open carries FOPEN_NOFLUSH: its close sends no FLUSH (a
  // round trip with nothing to commit); a writer's close still commits.
  const std::string f = Path("flushed");
  std::atomic<int> flushes{0};
  client_->SetHook([&](std::string_view what) {
    if (what == "flush") flushes++;
  });
  ASSERT_TRUE(WriteFile(f, "data"));
  EXPECT_EQ(flushes.load(), 1);
  for (int i = 0; i < 3; ++i) {
    int fd = ::open(f.c_str(), O_RDONLY);
    ASSERT_GE(fd, 0);
    char buf[8];
    EXPECT_EQ(::read(fd, buf, sizeof buf), 4);
    int twin = ::dup(fd);
    ASSERT_GE(twin, 0);
    EXPECT_EQ(::close(twin), 0);
    EXPECT_EQ(::close(fd), 0);
  }
  EXPECT_EQ(flushes.load(), 1);
  int fd = ::open(f.c_str(), O_RDWR);
  ASSERT_GE(fd, 0);
  EXPECT_EQ(::close(fd), 0);
  EXPECT_EQ(flushes.load(), 2);
  fd = ::open(Path("new-ro").c_str(), O_RDONLY | O_CREAT, 0644);  // CREATE, read-only
  ASSERT_GE(fd, 0);
  EXPECT_EQ(::close(fd), 0);
  EXPECT_EQ(flushes.load(), 2);
  client_->SetHook(nullptr);
}

TEST_F(FuseMountTest, TruncateGrowShrinkAndOTrunc) {
  const std::string f = Path("t");
  ASSERT_TRUE(WriteFile(f, "0123456789"));
  ASSERT_EQ(::truncate(f.c_str(), 4), 0);
  EXPECT_EQ(ReadAll(f), "0123");
  ASSERT_EQ(::truncate(f.c_str(), 8), 0);
  EXPECT_EQ(ReadAll(f), std::string("0123\0\0\0\0", 8));
  int fd = ::open(f.c_str(), O_RDWR);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::ftruncate(fd, 2), 0);
  ::close(fd);
  EXPECT_EQ(ReadAll(f), "01");
  fd = ::open(f.c_str(), O_WRONLY | O_TRUNC);
  ASSERT_GE(fd, 0);
  struct stat st;
  ASSERT_EQ(::fstat(fd, &st), 0);
  EXPECT_EQ(st.st_size, 0);
  ::close(fd);
  // O_APPEND
  ASSERT_TRUE(WriteFile(f, "one"));
  ASSERT_TRUE(WriteFile(f, "two", O_APPEND));
  EXPECT_EQ(ReadAll(f), "onetwo");
  // fallocate extends; punching a hole and zeroing a range read zeros after;
  // collapsing a range is not supported.
  fd = ::open(f.c_str(), O_RDWR);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::fallocate(fd, 0, 0, 100), 0);
  ASSERT_EQ(::fstat(fd, &st), 0);
  EXPECT_EQ(st.st_size, 100);
  ASSERT_EQ(::fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 1, 2), 0);
  ASSERT_EQ(::fallocate(fd, FALLOC_FL_ZERO_RANGE, 90, 20), 0);
  ASSERT_EQ(::fstat(fd, &st), 0);
  EXPECT_EQ(st.st_size, 110);
  EXPECT_EQ(::fallocate(fd, FALLOC_FL_COLLAPSE_RANGE, 0, 4096), -1);
  EXPECT_EQ(errno, EOPNOTSUPP);
  ::close(fd);
  EXPECT_EQ(ReadAll(f), std::string("o\0\0two", 6) + std::string(104, '\0'));
}

TEST_F(FuseMountTest, ChmodChownUtimens) {
  const std::string f = Path("m");
  ASSERT_TRUE(WriteFile(f, "m"));
  ASSERT_EQ(::chmod(f.c_str(), 0600), 0);
  ASSERT_EQ(::chown(f.c_str(), 1234, 5678), 0);
  struct timespec times[2] = {{1000, 5}, {2000, 7}};
  ASSERT_EQ(::utimensat(AT_FDCWD, f.c_str(), times, 0), 0);
  struct stat st;
  ASSERT_EQ(::stat(f.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
  EXPECT_EQ(st.st_uid, 1234u);
  EXPECT_EQ(st.st_gid, 5678u);
  EXPECT_EQ(st.st_atim.tv_sec, 1000);
  EXPECT_EQ(st.st_mtim.tv_sec, 2000);
  EXPECT_EQ(st.st_mtim.tv_nsec, 7);
}

TEST_F(FuseMountTest, DirectoriesAndNodes) {
  ASSERT_EQ(::mkdir(Path("d").c_str(), 0750), 0);
  struct stat st;
  ASSERT_EQ(::stat(Path("d").c_str(), &st), 0);
  EXPECT_TRUE(S_ISDIR(st.st_mode));
  EXPECT_EQ(st.st_mode & 07777, 0750u);
  EXPECT_EQ(::mkdir(Path("d").c_str(), 0750), -1);
  EXPECT_EQ(errno, EEXIST);
  EXPECT_EQ(::unlink(Path("d").c_str()), -1);
  EXPECT_EQ(errno, EISDIR);
  ASSERT_EQ(::mkfifo(Path("d/fifo").c_str(), 0644), 0);
  ASSERT_EQ(::lstat(Path("d/fifo").c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
  EXPECT_EQ(::rmdir(Path("d/fifo").c_str()), -1);
  EXPECT_EQ(errno, ENOTDIR);
  ASSERT_EQ(::unlink(Path("d/fifo").c_str()), 0);
  ASSERT_EQ(::rmdir(Path("d").c_str()), 0);
  EXPECT_EQ(::stat(Path("d").c_str(), &st), -1);
  EXPECT_EQ(errno, ENOENT);
  EXPECT_EQ(::open(Path("nope/x").c_str(), O_RDONLY), -1);
  EXPECT_EQ(errno, ENOENT);
  std::string long_name(256, 'n');
  EXPECT_EQ(::mkdir(Path(long_name).c_str(), 0755), -1);
  EXPECT_EQ(errno, ENAMETOOLONG);
}

TEST_F(FuseMountTest, Statfs) {
  struct statvfs sv;
  ASSERT_EQ(::statvfs(mnt_.c_str(), &sv), 0);
  EXPECT_EQ(sv.f_bsize, 4096u);
  EXPECT_EQ(sv.f_frsize, 4096u);
  EXPECT_EQ(sv.f_blocks, (uint64_t(1) << 40) / 4096);
  EXPECT_LE(sv.f_bfree, sv.f_blocks);
  EXPECT_EQ(sv.f_namemax, 255u);
  EXPECT_NE(sv.f_flag & ST_NOSUID, 0u);
}

TEST_F(FuseMountTest, ODirectRead) {
  const std::string f = Path("direct");
  const size_t kSize = 4 << 20;
  ASSERT_TRUE(WriteFile(f, PatternString(0, kSize)));
  int fd = ::open(f.c_str(), O_RDONLY | O_DIRECT);
  ASSERT_GE(fd, 0) << std::strerror(errno);
  AlignedBuffer buf(kSize);
  ASSERT_EQ(::pread(fd, buf.data(), kSize, 0), ssize_t(kSize));
  EXPECT_EQ(std::memcmp(buf.data(), PatternString(0, kSize).data(), kSize), 0);
  ASSERT_EQ(::pread(fd, buf.data(), 8192, 3 << 20), 8192);
  EXPECT_EQ(std::memcmp(buf.data(), PatternString(3 << 20, 8192).data(), 8192), 0);
  ::close(fd);
  // O_DIRECT write, then a buffered read sees it.
  fd = ::open(f.c_str(), O_WRONLY | O_DIRECT);
  ASSERT_GE(fd, 0);
  std::memset(buf.data(), 'W', 4096);
  ASSERT_EQ(::pwrite(fd, buf.data(), 4096, 4096), 4096);
  ::close(fd);
  EXPECT_EQ(ReadAll(f).substr(4096, 4096), std::string(4096, 'W'));
}

TEST_F(FuseMountTest, CopyFileRange) {
  const size_t kSize = (2 << 20) + 100;
  ASSERT_TRUE(WriteFile(Path("src"), PatternString(0, kSize)));
  int in = ::open(Path("src").c_str(), O_RDONLY);
  int out = ::open(Path("dst").c_str(), O_WRONLY | O_CREAT, 0644);
  ASSERT_GE(in, 0);
  ASSERT_GE(out, 0);
  size_t done = 0;
  while (done < kSize) {
    ssize_t n = ::copy_file_range(in, nullptr, out, nullptr, kSize - done, 0);
    ASSERT_GT(n, 0) << std::strerror(errno);
    done += size_t(n);
  }
  ::close(in);
  ::close(out);
  EXPECT_EQ(ReadAll(Path("dst")), PatternString(0, kSize));
}

TEST_F(FuseMountTest, ConcurrentReaders) {
  const size_t kSize = 8 << 20;
  ASSERT_TRUE(WriteFile(Path("shared"), PatternString(0, kSize)));
  std::atomic<int> mismatches{0};
  std::atomic<int> failures{0};
  std::vector<std::thread> readers;
  for (int t = 0; t < 6; ++t) {
    readers.emplace_back([&, t] {
      int fd = ::open(Path("shared").c_str(), t % 2 == 0 ? O_RDONLY : (O_RDONLY | O_DIRECT));
      if (fd < 0) {
        failures++;
        return;
      }
      std::mt19937 rng(t);
      AlignedBuffer buf(256 << 10);
      for (int i = 0; i < 60; ++i) {
        size_t len = (1 + rng() % 64) * 4096;
        uint64_t off = (rng() % (kSize / 4096)) * 4096;
        ssize_t n = ::pread(fd, buf.data(), len, off);
        size_t expect = std::min<uint64_t>(len, kSize - off);
        if (n != ssize_t(expect)) {
          failures++;
          continue;
        }
        if (std::memcmp(buf.data(), PatternString(off, expect).data(), expect) != 0) mismatches++;
      }
      ::close(fd);
    });
  }
  for (auto& r : readers) r.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(mismatches.load(), 0);
}

TEST_F(FuseMountTest, StopUnmountsAndIsIdempotent) {
  ASSERT_TRUE(WriteFile(Path("f"), "x"));
  std::thread runner([&] { EXPECT_TRUE(server_->Run().ok()); });
  server_->Stop();
  runner.join();
  server_->Stop();
  EXPECT_FALSE(IsFuseMountpoint(mnt_));
  struct stat st;
  EXPECT_EQ(::stat(Path("f").c_str(), &st), -1);  // the plain directory again
  EXPECT_EQ(server_->open_files(), 0u);
}

// Stop while every worker is busy or about to be: each leaves (cancelled in
// its read of /dev/fuse, or after the request it serves), Run returns, and
// the callers' requests end (answered, or ENOTCONN once the devices close).
TEST_F(FuseMountTest, StopUnderLoadEndsEveryWorker) {
  std::thread runner([&] { EXPECT_TRUE(server_->Run().ok()); });
  std::atomic<bool> done{false};
  std::atomic<int> ops{0};
  std::vector<std::thread> callers;
  for (int t = 0; t < 6; ++t) {
    callers.emplace_back([&, t] {
      for (int i = 0; !done.load(); ++i) {
        const std::string path = Path("busy." + std::to_string(t) + "." + std::to_string(i % 16));
        int fd = ::open(path.c_str(), O_RDWR | O_CREAT, 0644);
        if (fd >= 0) {
          (void)!::pwrite(fd, "data", 4, i % 4096);
          struct stat st;
          (void)::fstat(fd, &st);
          ::close(fd);
        }
        ops++;
      }
    });
  }
  ASSERT_TRUE(Eventually([&] { return ops.load() >= 600; }));
  server_->Stop();
  runner.join();
  done = true;
  for (auto& c : callers) c.join();
  EXPECT_FALSE(IsFuseMountpoint(mnt_));
  EXPECT_TRUE(Eventually([&] { return server_->open_files() == 0; }));
}

TEST_F(FuseMountTest, StopWithAFileStillOpen) {
  int fd = ::open(Path("held").c_str(), O_RDWR | O_CREAT, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::write(fd, "abc", 3), 3);
  server_->Stop();  // must not wait for the descriptor
  EXPECT_FALSE(IsFuseMountpoint(mnt_));
  char c;
  EXPECT_EQ(::pread(fd, &c, 1, 0), -1);  // the connection is gone
  ::close(fd);
  server_.reset();
  EXPECT_EQ(client_->open_files(), 0u);  // closed at teardown
}

TEST_F(FuseMountTest, ExternalUnmountEndsRun) {
  std::thread runner([&] { EXPECT_TRUE(server_->Run().ok()); });
  ASSERT_EQ(::umount2(mnt_.c_str(), 0), 0) << std::strerror(errno);
  runner.join();
  server_->Stop();  // nothing left to do; must not touch the path
}

TEST_F(FuseMountTest, SecondMountOnALiveMountIsRefused) {
  MemClient other;
  auto second = FuseServer::Mount(other, mnt_, MountConfig{});
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), StatusCode::kBusy);
  EXPECT_NE(second.status().message().find("live FUSE mount"), std::string::npos);
}

// Missing names cached long, as while a mount hears other clients' changes.
class NegativeCacheMountTest : public MountedFsTest {
 protected:
  NegativeCacheMountTest() {
    config_.entry_timeout = Duration{std::chrono::seconds(60)};
    config_.negative_timeout = Duration{std::chrono::seconds(60)};
  }
};

// A name made by "another client" that this mount still answers missing
// (MemClient::HideFromLookup): each way of making or moving to that name
// fails with EEXIST, and the caller's next stat finds the name (the kernel
// was told to look its cached names up again) instead of a cached "no such
// name" — mv stats its target after renameat2(RENAME_NOREPLACE) fails, and
// two clients racing over one name failed on it ("cannot overwrite
// directory with non-directory").
TEST_F(NegativeCacheMountTest, ANameFoundTakenIsSeenAtOnce) {
  ASSERT_TRUE(WriteFile(Path("src"), "S"));
  const std::vector<std::pair<std::string, std::function<int(const std::string&)>>> ways = {
      {"rename",
       [&](const std::string& p) {
         return ::renameat2(AT_FDCWD, Path("src").c_str(), AT_FDCWD, p.c_str(), RENAME_NOREPLACE);
       }},
      {"create",
       [](const std::string& p) {
         int fd = ::open(p.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0644);
         if (fd >= 0) ::close(fd);
         return fd < 0 ? -1 : 0;
       }},
      {"mkdir", [](const std::string& p) { return ::mkdir(p.c_str(), 0755); }},
      {"mknod", [](const std::string& p) { return ::mknod(p.c_str(), S_IFIFO | 0644, 0); }},
      {"symlink", [](const std::string& p) { return ::symlink("t", p.c_str()); }},
      {"link", [&](const std::string& p) { return ::link(Path("src").c_str(), p.c_str()); }},
  };
  for (const auto& [way, make] : ways) {
    SCOPED_TRACE(way);
    const std::string name = "taken-" + way;
    // Made behind the kernel's back, as by another client.
    ASSERT_TRUE(client_->Mknod(InodeId(1), name, S_IFREG | 0600, 0, client::Caller{0, 0}).ok());
    client_->HideFromLookup(name);
    struct stat st;
    ASSERT_EQ(::stat(Path(name).c_str(), &st), -1) << "the hidden name was found";
    ASSERT_EQ(errno, ENOENT);
    errno = 0;
    EXPECT_EQ(make(Path(name)), -1);
    EXPECT_EQ(errno, EEXIST);
    ASSERT_EQ(::lstat(Path(name).c_str(), &st), 0) << "a stale 'no such name' after EEXIST";
    EXPECT_TRUE(S_ISREG(st.st_mode));
    EXPECT_EQ(st.st_mode & 07777, 0600u);
  }
  EXPECT_EQ(ReadAll(Path("src")), "S");
}

class TracedMountTest : public MountedFsTest {
 protected:
  TracedMountTest() { config_.debug = true; }
};

TEST_F(TracedMountTest, InterruptedRequestStillCompletes) {
  // A GETXATTR held in the Client while its caller gets a (non-fatal)
  // signal: the kernel sends INTERRUPT; the Client call is not cancelled, so
  // the request completes and the caller gets the value.
  spdlog::set_level(spdlog::level::trace);
  const std::string f = Path("slow");
  ASSERT_TRUE(WriteFile(f, "x"));
  ASSERT_EQ(::setxattr(f.c_str(), "user.slow", "value", 5, 0), 0);
  std::atomic<bool> release{false};
  std::atomic<bool> entered{false};
  client_->SetHook([&](std::string_view what) {
    if (what != "getxattr:user.slow") return;
    entered = true;
    while (!release) ::usleep(1000);
  });
  struct sigaction sa {};
  sa.sa_handler = [](int) {};
  ASSERT_EQ(::sigaction(SIGUSR1, &sa, nullptr), 0);  // no SA_RESTART
  ssize_t result = 0;
  int err = 0;
  char buf[16];
  std::thread caller([&] {
    result = ::getxattr(f.c_str(), "user.slow", buf, sizeof(buf));
    err = errno;
  });
  ASSERT_TRUE(Eventually([&] { return entered.load(); }));
  const uint64_t before = server_->interrupts_received();
  ::pthread_kill(caller.native_handle(), SIGUSR1);
  bool delivered = Eventually([&] { return server_->interrupts_received() > before; });
  release = true;
  caller.join();
  client_->SetHook(nullptr);
  spdlog::set_level(spdlog::level::info);
  EXPECT_TRUE(delivered);
  ASSERT_EQ(result, 5) << std::strerror(err);
  EXPECT_EQ(std::string(buf, 5), "value");
}

class AllowOtherMountTest : public MountedFsTest {
 protected:
  AllowOtherMountTest() { config_.allow_other = true; }
};

// Runs `body` as uid/gid 65534 in a forked child; returns its exit code.
// Only async-signal-safe calls may run in `body` (the parent has threads).
int RunAsNobody(const std::function<int()>& body) {
  pid_t child = ::fork();
  if (child < 0) return -1;
  if (child == 0) {
    if (::setgid(65534) != 0 || ::setuid(65534) != 0) ::_exit(100);
    ::_exit(body());
  }
  int status = 0;
  if (::waitpid(child, &status, 0) != child || !WIFEXITED(status)) return -1;
  return WEXITSTATUS(status);
}

// HANDLE_KILLPRIV_V2: a write (or O_TRUNC open, or truncate) by a user
// without CAP_FSETID clears setuid, and setgid when group-executable or when
// the user is not in the file's group.
TEST_F(AllowOtherMountTest, WritesByOtherUsersClearSetuidAndSetgid) {
  const std::string f = Path("suid");
  ASSERT_TRUE(WriteFile(f, "#!/bin/sh\n"));
  ASSERT_EQ(::chmod(f.c_str(), 06777), 0);
  struct stat st;
  ASSERT_EQ(::stat(f.c_str(), &st), 0);
  ASSERT_EQ(st.st_mode & 07777, 06777u);
  const char* path = f.c_str();
  EXPECT_EQ(RunAsNobody([path] {
              int fd = ::open(path, O_WRONLY | O_APPEND);
              if (fd < 0) return 1;
              if (::write(fd, "x", 1) != 1) return 2;
              return ::close(fd) == 0 ? 0 : 3;
            }),
            0);
  ASSERT_EQ(::stat(f.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0777u);
  // setgid without group execute goes too when the caller is not in the
  // file's group (the VFS rule; ext4 does the same: tests/posix/setid.sh).
  ASSERT_EQ(::chmod(f.c_str(), 02767), 0);
  EXPECT_EQ(RunAsNobody([path] { return ::truncate(path, 1) == 0 ? 0 : 1; }), 0);
  ASSERT_EQ(::stat(f.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0767u);
  EXPECT_EQ(st.st_size, 1);
  // Root (CAP_FSETID) keeps the bits.
  ASSERT_EQ(::chmod(f.c_str(), 04777), 0);
  ASSERT_TRUE(WriteFile(f, "y", O_APPEND));
  ASSERT_EQ(::stat(f.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 04777u);
}

TEST(FuseMount, MountpointErrors) {
  T0FS_REQUIRE_FUSE();
  TempDir dir;
  MemClient client;
  auto missing = FuseServer::Mount(client, dir.path() + "/absent", MountConfig{});
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("does not exist"), std::string::npos);
  std::string file = dir.path() + "/file";
  ASSERT_TRUE(WriteFile(file, "x"));
  auto not_dir = FuseServer::Mount(client, file, MountConfig{});
  ASSERT_FALSE(not_dir.ok());
  EXPECT_EQ(not_dir.status().code(), StatusCode::kNotDirectory);
  MountConfig bad;
  bad.threads = 0;
  EXPECT_EQ(FuseServer::Mount(client, dir.path(), bad).status().code(),
            StatusCode::kInvalidArgument);
}

TEST(FuseMount, RelativeMountpointIsCanonicalized) {
  T0FS_REQUIRE_FUSE();
  TempDir dir;
  std::string mnt = dir.MakeDir("rel");
  char cwd[4096];
  ASSERT_NE(::getcwd(cwd, sizeof(cwd)), nullptr);
  ASSERT_EQ(::chdir(dir.path().c_str()), 0);
  MemClient client;
  auto server = FuseServer::Mount(client, "rel/", MountConfig{});
  ASSERT_EQ(::chdir(cwd), 0);
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  EXPECT_EQ((*server)->mountpoint(), mnt);
  EXPECT_TRUE(IsFuseMountpoint(mnt));
  (*server)->Stop();
  EXPECT_FALSE(IsFuseMountpoint(mnt));
}

// A server that dies without unmounting leaves a dead mount (ENOTCONN); the
// next Mount on the path detaches it and succeeds.
TEST(FuseMount, StaleMountOfAKilledServerIsRecovered) {
  T0FS_REQUIRE_FUSE();
  TempDir dir;
  const std::string mnt = dir.MakeDir("mnt");
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::close(ready[0]);
    MemClient client;
    auto server = FuseServer::Mount(client, mnt, MountConfig{});
    char ok = server.ok() ? 'y' : 'n';
    (void)::write(ready[1], &ok, 1);
    for (;;) ::pause();  // until SIGKILL: no unmount
  }
  ::close(ready[1]);
  char ok = 0;
  ASSERT_EQ(::read(ready[0], &ok, 1), 1);
  ::close(ready[0]);
  ::kill(child, SIGKILL);
  int status = 0;
  ::waitpid(child, &status, 0);
  ASSERT_EQ(ok, 'y');
  ASSERT_TRUE(IsFuseMountpoint(mnt));  // left behind, dead

  MemClient client;
  auto server = FuseServer::Mount(client, mnt, MountConfig{});
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  ASSERT_TRUE(WriteFile(mnt + "/alive", "yes"));
  EXPECT_EQ(ReadAll(mnt + "/alive"), "yes");
  (*server)->Stop();
  EXPECT_FALSE(IsFuseMountpoint(mnt));
}

// Without CAP_SYS_ADMIN, mount(2) fails with EPERM and fusermount3 mounts.
TEST(FuseMount, UnprivilegedMountGoesThroughFusermount) {
  T0FS_REQUIRE_FUSE();
  if (::access("/usr/bin/fusermount3", X_OK) != 0) GTEST_SKIP() << "no fusermount3";
  struct stat dev;
  if (::stat("/dev/fuse", &dev) != 0 || (dev.st_mode & 0006) != 0006) {
    GTEST_SKIP() << "/dev/fuse is not usable by other users here (mode " << std::oct
                 << (dev.st_mode & 0777) << "), so fusermount3 cannot serve them";
  }
  TempDir dir;
  const std::string mnt = dir.MakeDir("mnt");
  const uid_t nobody = 65534;
  ASSERT_EQ(::chown(mnt.c_str(), nobody, nobody), 0);
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    if (::setgid(nobody) != 0 || ::setuid(nobody) != 0) ::_exit(10);
    MemClient client;
    auto server = FuseServer::Mount(client, mnt, MountConfig{});
    if (!server.ok()) {
      fprintf(stderr, "mount: %s\n", server.status().ToString().c_str());
      ::_exit(11);
    }
    if (!IsFuseMountpoint(mnt)) ::_exit(12);
    if (!WriteFile(mnt + "/f", "data") || ReadAll(mnt + "/f") != "data") ::_exit(13);
    (*server)->Stop();
    if (IsFuseMountpoint(mnt)) ::_exit(14);
    ::_exit(0);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

// The fusermount3 protocol itself (socketpair, _FUSE_COMMFD, SCM_RIGHTS, and
// `fusermount3 -u -z`), run as root: the fd it hands back carries the
// kernel's INIT like one from mount(2).
TEST(FuseMount, FusermountHandsBackAWorkingConnection) {
  T0FS_REQUIRE_FUSE();
  if (::access("/usr/bin/fusermount3", X_OK) != 0) GTEST_SKIP() << "no fusermount3";
  TempDir dir;
  const std::string mnt = dir.MakeDir("mnt");
  MountOptions options;
  options.force_fusermount = true;
  auto mount = FuseMount::Mount(mnt, options);
  ASSERT_TRUE(mount.ok()) << mount.status().ToString();
  EXPECT_TRUE(mount->via_fusermount());
  EXPECT_TRUE(IsFuseMountpoint(mnt));
  auto info = HandshakeInit(mount->device_fd(), InitOptions{}, std::chrono::seconds(10));
  ASSERT_TRUE(info.ok()) << info.status().ToString();
  EXPECT_GE(info->minor, abi::kMinMinor);
  ASSERT_TRUE(mount->Unmount().ok());
  EXPECT_FALSE(IsFuseMountpoint(mnt));
}

}  // namespace
}  // namespace t0fs::fuse::testing
