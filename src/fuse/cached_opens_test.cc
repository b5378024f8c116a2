// CachedOpens: which inodes the change watcher leaves alone, and what their
// last close passes on.
#include "fuse/ops/cached_opens.h"

#include <gtest/gtest.h>

#include <vector>

namespace t0fs::fuse {
namespace {

TEST(CachedOpens, AChangeToAnOpenInodeWaitsForItsLastClose) {
  CachedOpens opens;
  std::vector<InodeId> forgotten;
  auto forget = [&](InodeId ino) { forgotten.push_back(ino); };
  int notified = 0;
  auto notify = [&] { notified++; };

  opens.NotifyUnlessOpen(InodeId(5), notify);  // not open: at once
  EXPECT_EQ(notified, 1);
  EXPECT_FALSE(opens.IsOpen(InodeId(5)));

  opens.Opened(10, InodeId(5));
  opens.Opened(11, InodeId(5));  // a second handle of the same inode
  opens.Opened(12, InodeId(6));
  EXPECT_TRUE(opens.IsOpen(InodeId(5)));
  opens.NotifyUnlessOpen(InodeId(5), notify);  // held back
  opens.NotifyUnlessOpen(InodeId(5), notify);  // (the watcher's repeat)
  EXPECT_EQ(notified, 1);
  EXPECT_EQ(opens.held_back(), 2u);

  opens.Released(10, forget);  // not the last handle
  EXPECT_TRUE(forgotten.empty());
  opens.Released(99, forget);  // a handle never counted (passthrough): ignored
  opens.Released(11, forget);  // the last: the change goes on, once
  EXPECT_EQ(forgotten, std::vector<InodeId>{InodeId(5)});
  EXPECT_FALSE(opens.IsOpen(InodeId(5)));

  opens.Released(12, forget);  // inode 6 had no change held back
  EXPECT_EQ(forgotten.size(), 1u);
  EXPECT_FALSE(opens.IsOpen(InodeId(6)));

  // Closed and opened again: a new count, nothing held back from before.
  opens.Opened(13, InodeId(5));
  opens.Released(13, forget);
  EXPECT_EQ(forgotten.size(), 1u);
  opens.NotifyUnlessOpen(InodeId(5), notify);
  EXPECT_EQ(notified, 2);
}

}  // namespace
}  // namespace t0fs::fuse
