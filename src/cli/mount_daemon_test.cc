// Reading what a `t0fs mount` process was started with from its argv.
#include "cli/mount_daemon.h"

#include <gtest/gtest.h>

namespace t0fs::cli {
namespace {

TEST(MountDaemon, ParsesTheCommandOfUp) {
  auto d = ParseMountCommand(
      {"t0fs", "mount", "127.0.0.1:7700", "/work/mnt", "--config", "/work/data/t0fs.toml",
       "--secret-file", "/work/data/secret", "--log-level", "info", "--node-id", "1"},
      "/", "/work/mnt");
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->meta, "127.0.0.1:7700");
  EXPECT_EQ(d->secret_file, "/work/data/secret");
  EXPECT_EQ(d->config, "/work/data/t0fs.toml");
}

TEST(MountDaemon, RelativePathsAreTheDaemonsAndOptionsMayComeFirst) {
  auto d = ParseMountCommand(
      {"/usr/bin/t0fs", "mount", "--secret-file=s", "--threads", "8", "10.0.0.1:7700", "mnt"},
      "/home/u", "/home/u/mnt");
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->meta, "10.0.0.1:7700");
  EXPECT_EQ(d->secret_file, "/home/u/s");
  EXPECT_EQ(d->config, "");
}

TEST(MountDaemon, DefaultSecretIsRelativeToItsWorkingDirectory) {
  auto d = ParseMountCommand({"t0fs", "mount", "m:1", "./x/../mnt/"}, "/w", "/w/mnt");
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->secret_file, "/w/secret");
}

TEST(MountDaemon, OtherCommandsAndOtherMountPointsDoNotMatch) {
  EXPECT_FALSE(ParseMountCommand({"t0fs", "mount", "m:1", "/a"}, "/", "/b"));
  EXPECT_FALSE(ParseMountCommand({"t0fs", "data", "--meta", "m:1", "/a"}, "/", "/a"));
  EXPECT_FALSE(ParseMountCommand({"sshfs", "mount", "m:1", "/a"}, "/", "/a"));
  EXPECT_FALSE(ParseMountCommand({"t0fs", "mount", "/a"}, "/", "/a"));
}

}  // namespace
}  // namespace t0fs::cli
