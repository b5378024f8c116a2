// Test helpers for tests that mount FUSE: skip when mounting is impossible,
// a temporary directory that detaches every mount below it before removal,
// and a fixture with a MemClient mounted through FuseServer.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include <gtest/gtest.h>

#include "fuse/fuse_server.h"
#include "fuse/testing/mem_client.h"

namespace t0fs::fuse::testing {

// "" when this process can mount FUSE (root and /dev/fuse), else why not.
std::string FuseUnavailableReason();

#define T0FS_REQUIRE_FUSE()                                                      \
  do {                                                                           \
    if (std::string why = ::t0fs::fuse::testing::FuseUnavailableReason();        \
        !why.empty()) {                                                          \
      GTEST_SKIP() << "mounting FUSE is not possible here: " << why;             \
    }                                                                            \
  } while (0)

// Polls `done` (every millisecond, for up to 10 s) until it holds; for
// effects the kernel delivers asynchronously (RELEASE after close(2)).
bool Eventually(const std::function<bool()>& done);

// Detaches every mount at or below `path` (deepest first).
void DetachMountsUnder(const std::string& path);

// A fresh directory under $TMPDIR (mode 0755); on destruction, mounts below
// it are detached and it is removed.
class TempDir {
 public:
  explicit TempDir(std::string_view prefix = "t0fs-fuse-test");
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  // Creates `name` below the directory; returns its path.
  std::string MakeDir(std::string_view name) const;

 private:
  std::string path_;
};

// A MemClient mounted in a temporary directory for each test.
class MountedFsTest : public ::testing::Test {
 protected:
  void SetUp() override;
  void TearDown() override;
  // Config for the mount; tests may change it before SetUp (in a constructor).
  MountConfig config_;
  std::string Path(std::string_view rel) const { return mnt_ + "/" + std::string(rel); }

  std::unique_ptr<TempDir> dir_;
  std::string mnt_;
  std::unique_ptr<MemClient> client_;
  std::unique_ptr<FuseServer> server_;
};

// The whole content of `path` through read(2) in 64 KiB pieces, or
// "<open failed: ...>".
std::string ReadAll(const std::string& path);

}  // namespace t0fs::fuse::testing
