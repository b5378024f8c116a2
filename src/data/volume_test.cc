// FileSystemWarning: what the data node says about a volume's file system,
// against a sysfs tree of the test's own.
#include "data/volume.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace t0fs::data {
namespace {

class FileSystemWarningTest : public ::testing::Test {
 protected:
  void SetUp() override {
    sys_ = std::filesystem::temp_directory_path() / ("t0fs-sysfs-" + std::to_string(::getpid()));
    std::filesystem::create_directories(sys_ + "/fs/ext4/vdz");
  }
  void TearDown() override { std::filesystem::remove_all(sys_); }
  void JournalTask(const std::string& text) {
    std::ofstream(sys_ + "/fs/ext4/vdz/journal_task") << text;
  }
  static MountEntry Mount(const std::string& fstype) {
    MountEntry m;
    m.point = "/srv/nvme0";
    m.fstype = fstype;
    m.source = "/dev/vdz";  // no such device here: its name is taken as is
    return m;
  }
  std::string sys_;
};

TEST_F(FileSystemWarningTest, Ext4WithoutAJournalIsNamed) {
  JournalTask("<none>\n");
  const std::string warning = FileSystemWarning(Mount("ext4"), sys_);
  EXPECT_NE(warning.find("/srv/nvme0"), std::string::npos) << warning;
  EXPECT_NE(warning.find("/dev/vdz"), std::string::npos) << warning;
  EXPECT_NE(warning.find("no journal"), std::string::npos) << warning;
}

TEST_F(FileSystemWarningTest, NothingToSayOtherwise) {
  JournalTask("1234\n");  // the journal thread's pid: journaled
  EXPECT_EQ(FileSystemWarning(Mount("ext4"), sys_), "");
  JournalTask("<none>\n");
  EXPECT_EQ(FileSystemWarning(Mount("xfs"), sys_), "");  // no such file for XFS, nor a need
  std::filesystem::remove(sys_ + "/fs/ext4/vdz/journal_task");
  EXPECT_EQ(FileSystemWarning(Mount("ext4"), sys_), "");  // unknown: say nothing
  EXPECT_EQ(FileSystemWarning("/no/such/volume/dir", sys_), "");
}

}  // namespace
}  // namespace t0fs::data
