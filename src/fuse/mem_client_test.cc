// The in-memory twin behaves like a POSIX namespace where the FUSE tests
// rely on it.
#include <fcntl.h>
#include <sys/stat.h>

#include <gtest/gtest.h>

#include "fuse/testing/mem_client.h"

namespace t0fs::fuse::testing {
namespace {

std::span<const std::byte> Bytes(std::string_view s) {
  return std::as_bytes(std::span(s.data(), s.size()));
}

TEST(MemClient, UnlinkedFileLivesUntilClosed) {
  MemClient c;
  auto f = c.Create(kRootInode, "f", 0644, O_RDWR, {});
  ASSERT_TRUE(f.ok());
  ASSERT_TRUE((*f)->Write(0, Bytes("data")).ok());
  const InodeId ino = (*f)->ino();
  ASSERT_TRUE(c.Unlink(kRootInode, "f").ok());
  EXPECT_FALSE(c.Lookup(kRootInode, "f").ok());
  auto attr = c.GetAttr(ino);
  ASSERT_TRUE(attr.ok());
  EXPECT_EQ(attr->nlink, 0u);
  std::byte buf[8];
  EXPECT_EQ(*(*f)->Read(0, buf), 4u);
  ASSERT_TRUE((*f)->Close().ok());
  EXPECT_FALSE(c.GetAttr(ino).ok());
  EXPECT_EQ(c.inode_count(), 1u);
}

TEST(MemClient, RenameFlags) {
  MemClient c;
  ASSERT_TRUE(c.Mkdir(kRootInode, "a", 0755, {}).ok());
  ASSERT_TRUE(c.Mknod(kRootInode, "b", S_IFREG | 0644, 0, {}).ok());
  EXPECT_EQ(c.Rename(kRootInode, "a", kRootInode, "b", 1).code(), StatusCode::kExists);
  EXPECT_EQ(c.Rename(kRootInode, "a", kRootInode, "b", 0).code(), StatusCode::kNotDirectory);
  ASSERT_TRUE(c.Rename(kRootInode, "a", kRootInode, "b", 2).ok());
  EXPECT_TRUE(S_ISREG(c.Lookup(kRootInode, "a")->mode));
  EXPECT_TRUE(S_ISDIR(c.Lookup(kRootInode, "b")->mode));
  auto b = c.Lookup(kRootInode, "b");
  EXPECT_EQ(c.Rename(kRootInode, "b", b->ino, "x", 0).code(), StatusCode::kInvalidArgument);
}

TEST(MemClient, ReadDirCookiesSurviveDeletion) {
  MemClient c;
  for (int i = 0; i < 10; ++i) {
    ASSERT_TRUE(c.Mknod(kRootInode, "f" + std::to_string(i), S_IFREG | 0644, 0, {}).ok());
  }
  auto first = c.ReadDir(kRootInode, 0, 5, false);
  ASSERT_TRUE(first.ok());
  ASSERT_EQ(first->entries.size(), 5u);
  EXPECT_FALSE(first->eof);
  ASSERT_TRUE(c.Unlink(kRootInode, "f3").ok());  // the next entry after the page
  auto rest = c.ReadDir(kRootInode, first->entries.back().cookie, 100, true);
  ASSERT_TRUE(rest.ok());
  EXPECT_TRUE(rest->eof);
  ASSERT_EQ(rest->entries.size(), 6u);  // f4..f9
  EXPECT_EQ(rest->entries[0].name, "f4");
  EXPECT_TRUE(rest->entries[0].attr.has_value());
}

TEST(MemClient, HardLinksShareTheInode) {
  MemClient c;
  auto a = c.Mknod(kRootInode, "a", S_IFREG | 0644, 0, {});
  ASSERT_TRUE(a.ok());
  auto b = c.Link(a->ino, kRootInode, "b");
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->nlink, 2u);
  ASSERT_TRUE(c.Unlink(kRootInode, "a").ok());
  EXPECT_EQ(c.Lookup(kRootInode, "b")->nlink, 1u);
}

TEST(MemClient, PathsHelpers) {
  MemClient c;
  ASSERT_TRUE(c.MakeDirs("/x/y/z", 0755).ok());
  auto f = c.CreatePath("/x/y/z/file", 0600);
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_TRUE(c.ResolvePath("/x/y/z/file").ok());
  EXPECT_EQ(c.ResolvePath("/x/nope").status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace t0fs::fuse::testing
