// The mount table queries: which mount holds a path, which cluster a t0fs
// mount belongs to, lexical absolute paths.
#include "common/mountinfo.h"

#include <gtest/gtest.h>

namespace t0fs {
namespace {

MountEntry Entry(int id, std::string point, std::string fstype, std::string source = "src") {
  MountEntry e;
  e.id = id;
  e.point = std::move(point);
  e.fstype = std::move(fstype);
  e.source = std::move(source);
  return e;
}

TEST(Mounts, HoldingPicksTheLongestMountPointOnAComponentBoundary) {
  std::vector<MountEntry> mounts = {Entry(1, "/", "ext4"), Entry(2, "/mnt/t0", "fuse.t0fs", "t0fs"),
                                    Entry(3, "/mnt/t0/inner", "tmpfs")};
  EXPECT_EQ(MountHolding(mounts, "/mnt/t0/a/b")->id, 2);
  EXPECT_EQ(MountHolding(mounts, "/mnt/t0")->id, 2);
  EXPECT_EQ(MountHolding(mounts, "/mnt/t0x/a")->id, 1);  // not a component boundary
  EXPECT_EQ(MountHolding(mounts, "/mnt/t0/inner/f")->id, 3);
  EXPECT_EQ(MountHolding(mounts, "/etc")->id, 1);
}

TEST(Mounts, TheLaterMountAtAPointIsOnTop) {
  std::vector<MountEntry> mounts = {Entry(1, "/", "ext4"), Entry(5, "/m", "fuse.t0fs"),
                                    Entry(9, "/m", "tmpfs")};
  EXPECT_EQ(MountAt(mounts, "/m")->id, 9);
  EXPECT_EQ(MountHolding(mounts, "/m/x")->id, 9);
  EXPECT_FALSE(MountAt(mounts, "/m/x").has_value());
}

TEST(Mounts, ClusterIdComesFromTheSourceOfAT0fsMount) {
  EXPECT_EQ(Entry(1, "/m", "fuse.t0fs", "t0fs:4f2a").cluster_id(), "4f2a");
  EXPECT_EQ(Entry(1, "/m", "fuse.t0fs", "t0fs").cluster_id(), "");
  EXPECT_EQ(Entry(1, "/m", "fuse.other", "t0fs:4f2a").cluster_id(), "");
  EXPECT_TRUE(Entry(1, "/m", "fuse.sshfs").is_fuse());
  EXPECT_FALSE(Entry(1, "/m", "fuseblk2").is_fuse());
}

TEST(Mounts, ReadsThisProcessMountTable) {
  auto mounts = ReadMounts();
  ASSERT_FALSE(mounts.empty());
  auto root = MountHolding(mounts, "/");
  ASSERT_TRUE(root.has_value());
  EXPECT_EQ(root->point, "/");
  EXPECT_NE(root->dev, 0u);
}

TEST(Mounts, LexicalAbsoluteNormalizesWithoutTouchingTheFileSystem) {
  EXPECT_EQ(LexicalAbsolute("/a/./b/../c/"), "/a/c");
  EXPECT_EQ(LexicalAbsolute("/"), "/");
  EXPECT_EQ(LexicalAbsolute("/no/such/dir/.."), "/no/such");
  EXPECT_EQ(LexicalAbsolute("rel").front(), '/');
}

}  // namespace
}  // namespace t0fs
