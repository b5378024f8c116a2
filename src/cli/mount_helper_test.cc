#include "cli/mount_helper.h"

#include <gtest/gtest.h>

namespace t0fs::cli {
namespace {

std::vector<std::string> Args(const MountHelperPlan& p) {
  return p.args;
}

TEST(MountHelper, SpecAndOptionsBecomeMountFlags) {
  auto plan = PlanMountHelper({"/sbin/mount.fuse.t0fs", "10.0.0.1:7700:/", "/mnt/t0fs", "-o",
                               "rw,_netdev,nofail,ro,noexec,allow_other,secret_file=/s,attr_timeout=5s,"
                               "x-systemd.automount,log=/tmp/m.log"});
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  EXPECT_EQ(plan->mountpoint, "/mnt/t0fs");
  EXPECT_EQ(plan->log_file, "/tmp/m.log");
  std::vector<std::string> want = {"t0fs", "mount", "10.0.0.1:7700", "/mnt/t0fs", "--read-only", "true",
                                   "--no-exec", "true", "--allow-other", "true", "--attr-timeout", "5s",
                                   "--secret-file", "/s"};
  std::vector<std::string> got = Args(*plan);
  // --config /etc/t0fs/t0fs.toml is added only where that file exists.
  if (got.size() == want.size() + 2) got.resize(want.size());
  EXPECT_EQ(got, want);
}

TEST(MountHelper, SpecForms) {
  for (std::string spec : {"h:1", "h:1:/", "t0fs://h:1", "t0fs://h:1:/"}) {
    auto plan = PlanMountHelper({"mount.t0fs", spec, "/m"});
    ASSERT_TRUE(plan.ok()) << spec;
    EXPECT_EQ(plan->args[2], "h:1") << spec;
    EXPECT_EQ(plan->log_file, "/var/log/t0fs/mount-m.log");
  }
}

TEST(MountHelper, RefusesWhatItCannotDo) {
  EXPECT_FALSE(PlanMountHelper({"mount.t0fs", "h:1:/sub", "/m"}).ok());     // subdirectory
  EXPECT_FALSE(PlanMountHelper({"mount.t0fs", "nohost", "/m"}).ok());       // no port
  EXPECT_FALSE(PlanMountHelper({"mount.t0fs", "h:1", "/m", "-o", "suid"}).ok());
  EXPECT_FALSE(PlanMountHelper({"mount.t0fs", "h:1"}).ok());                // no mount point
  EXPECT_FALSE(PlanMountHelper({"mount.t0fs", "h:1", "/m", "-x"}).ok());    // unknown flag
  auto fake = PlanMountHelper({"mount.t0fs", "h:1", "/m", "-f", "-n", "-v", "-s"});
  ASSERT_TRUE(fake.ok());
  EXPECT_TRUE(fake->fake);
}

TEST(MountHelper, KnowsItsNames) {
  EXPECT_TRUE(IsMountHelper("/sbin/mount.fuse.t0fs"));
  EXPECT_TRUE(IsMountHelper("mount.t0fs"));
  EXPECT_FALSE(IsMountHelper("/usr/bin/t0fs"));
}

}  // namespace
}  // namespace t0fs::cli
