#include "fuse/testing/mount_fixture.h"

#include "common/mountinfo.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "fuse/protocol/mount.h"

namespace t0fs::fuse::testing {

std::string FuseUnavailableReason() {
  if (::geteuid() != 0) return "not root";
  if (::access("/dev/fuse", R_OK | W_OK) != 0) return "/dev/fuse is missing";
  return "";
}

bool Eventually(const std::function<bool()>& done) {
  for (int i = 0; i < 10000; ++i) {
    if (done()) return true;
    ::usleep(1000);
  }
  return done();
}

void DetachMountsUnder(const std::string& path) {
  for (int round = 0; round < 16; ++round) {
    std::vector<std::string> found;
    for (const MountEntry& e : ReadMounts()) {
      if (e.point == path || e.point.rfind(path + "/", 0) == 0) found.push_back(e.point);
    }
    if (found.empty()) return;
    std::sort(found.begin(), found.end(),
              [](const std::string& a, const std::string& b) { return a.size() > b.size(); });
    for (const auto& mp : found) ::umount2(mp.c_str(), MNT_DETACH);
  }
}

TempDir::TempDir(std::string_view prefix) {
  const char* base = std::getenv("TMPDIR");
  std::string tmpl = std::string(base != nullptr && *base != '\0' ? base : "/tmp") + "/" +
                     std::string(prefix) + "-XXXXXX";
  if (::mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  ::chmod(tmpl.c_str(), 0755);
  path_ = tmpl;
}

TempDir::~TempDir() {
  DetachMountsUnder(path_);
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

std::string TempDir::MakeDir(std::string_view name) const {
  std::string p = path_ + "/" + std::string(name);
  ::mkdir(p.c_str(), 0755);
  return p;
}

void MountedFsTest::SetUp() {
  T0FS_REQUIRE_FUSE();
  dir_ = std::make_unique<TempDir>();
  mnt_ = dir_->MakeDir("mnt");
  client_ = std::make_unique<MemClient>();
  auto server = FuseServer::Mount(*client_, mnt_, config_);
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  server_ = std::move(*server);
}

void MountedFsTest::TearDown() {
  if (server_) server_->Stop();
  server_.reset();
  client_.reset();
  dir_.reset();
}

std::string ReadAll(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) return "<open failed: " + std::string(std::strerror(errno)) + ">";
  std::string out;
  char buf[65536];
  ssize_t n;
  while ((n = ::read(fd, buf, sizeof(buf))) > 0) out.append(buf, size_t(n));
  ::close(fd);
  return out;
}

}  // namespace t0fs::fuse::testing
