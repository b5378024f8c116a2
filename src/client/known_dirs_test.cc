#include "client/known_dirs.h"

#include <string>

#include <gtest/gtest.h>

namespace t0fs::client {
namespace {

TEST(KnownDirs, AnswersOnlyForDirectoriesItMadeWhileHearingOthers) {
  KnownDirs known;
  known.Made(InodeId(10));
  known.Added(InodeId(10), "a");
  EXPECT_FALSE(known.Missing(InodeId(10), "b")) << "no complete poll yet: not trusted";
  known.Heard();
  EXPECT_TRUE(known.Missing(InodeId(10), "b"));
  EXPECT_FALSE(known.Missing(InodeId(10), "a"));
  EXPECT_FALSE(known.Missing(InodeId(11), "b")) << "a directory it did not make";
  known.Added(InodeId(11), "x");  // unknown directory: nothing learned
  EXPECT_FALSE(known.Missing(InodeId(11), "y"));
}

TEST(KnownDirs, FollowsOwnChangesAndForgetsOnOthers) {
  KnownDirs known;
  known.Heard();
  known.Made(InodeId(10));
  known.Added(InodeId(10), "a");
  known.Removed(InodeId(10), "a");
  EXPECT_TRUE(known.Missing(InodeId(10), "a"));
  known.Added(InodeId(10), "b");
  known.Forget(InodeId(10));  // another client changed a name in it
  EXPECT_FALSE(known.Missing(InodeId(10), "c"));
  known.Made(InodeId(12));
  known.ForgetAll();
  EXPECT_FALSE(known.Missing(InodeId(12), "c"));
  EXPECT_EQ(known.dirs(), 0u);
}

TEST(KnownDirs, DropsTheLeastRecentlyUsedWhenFull) {
  KnownDirs known;
  known.Heard();
  for (size_t i = 0; i < KnownDirs::kMaxDirs; ++i) known.Made(InodeId(100 + i));
  known.Heard();                                  // the loop may outlast kFresh on a busy machine
  EXPECT_TRUE(known.Missing(InodeId(100), "x"));  // 100 is now the most recently used
  known.Made(InodeId(1));                          // one too many: 101 goes
  EXPECT_EQ(known.dirs(), KnownDirs::kMaxDirs);
  EXPECT_TRUE(known.Missing(InodeId(100), "x"));
  EXPECT_FALSE(known.Missing(InodeId(101), "x"));
  EXPECT_TRUE(known.Missing(InodeId(1), "x"));
}

TEST(KnownDirs, ANameCapForgetsDirectoriesNotNames) {
  KnownDirs known;
  known.Heard();
  known.Made(InodeId(1));
  known.Made(InodeId(2));
  for (size_t i = 0; i < KnownDirs::kMaxNames; ++i) known.Added(InodeId(2), std::to_string(i));
  // The loop may outlast kFresh (under ASan on a busy machine): what is
  // tested here is the cap, so the mount has just heard again.
  known.Heard();
  EXPECT_TRUE(known.Missing(InodeId(1), "x"));
  known.Added(InodeId(2), "one more");  // over the cap: the least recently used goes first
  known.Heard();
  EXPECT_FALSE(known.Missing(InodeId(2), "x")) << "a dropped directory is not answered for";
  EXPECT_TRUE(known.Missing(InodeId(1), "x"));
  EXPECT_FALSE(known.Missing(InodeId(2), "0"));
}

}  // namespace
}  // namespace t0fs::client
