#include "meta/change_feed.h"

#include <gtest/gtest.h>

namespace t0fs::meta {
namespace {

ChangeFeed::Change Name(uint64_t parent, std::string name) { return {InodeId(parent), std::move(name), InodeId()}; }
ChangeFeed::Change Attr(uint64_t ino) { return {InodeId(), "", InodeId(ino)}; }

TEST(ChangeFeed, FirstAskStartsFromNow) {
  ChangeFeed feed;
  feed.Add(SessionId(1), {Name(1, "old")});
  auto first = feed.Since(SessionId(2), 0, 0, 0);
  EXPECT_TRUE(first.complete);
  EXPECT_TRUE(first.changes.empty());
  EXPECT_EQ(first.epoch, feed.epoch());
  feed.Add(SessionId(1), {Name(1, "new"), Attr(1)});
  auto next = feed.Since(SessionId(2), first.epoch, first.next, 0);
  ASSERT_TRUE(next.complete);
  ASSERT_EQ(next.changes.size(), 2u);
  EXPECT_EQ(next.changes[0].name, "new");
  EXPECT_EQ(next.changes[0].parent, InodeId(1));
  EXPECT_EQ(next.changes[1].ino, InodeId(1));
  EXPECT_FALSE(next.more);
  // Nothing new: an empty, complete page at the same position.
  auto idle = feed.Since(SessionId(2), next.epoch, next.next, 0);
  EXPECT_TRUE(idle.complete);
  EXPECT_TRUE(idle.changes.empty());
  EXPECT_EQ(idle.next, next.next);
}

TEST(ChangeFeed, LeavesOutTheAskersOwnChanges) {
  ChangeFeed feed;
  auto start = feed.Since(SessionId(7), 0, 0, 0);
  feed.Add(SessionId(7), {Name(1, "mine")});
  feed.Add(SessionId(8), {Name(1, "theirs")});
  auto page = feed.Since(SessionId(7), start.epoch, start.next, 0);
  ASSERT_EQ(page.changes.size(), 1u);
  EXPECT_EQ(page.changes[0].name, "theirs");
}

TEST(ChangeFeed, PagesAtMax) {
  ChangeFeed feed;
  auto pos = feed.Since(SessionId(2), 0, 0, 0);
  for (int i = 0; i < 5; ++i) feed.Add(SessionId(1), {Attr(100 + i)});
  auto a = feed.Since(SessionId(2), pos.epoch, pos.next, 3);
  ASSERT_EQ(a.changes.size(), 3u);
  EXPECT_TRUE(a.more);
  auto b = feed.Since(SessionId(2), a.epoch, a.next, 3);
  ASSERT_EQ(b.changes.size(), 2u);
  EXPECT_FALSE(b.more);
  EXPECT_EQ(b.changes[1].ino, InodeId(104));
}

TEST(ChangeFeed, AskerThatFellBehindOrCameFromAnotherEpochLostChanges) {
  ChangeFeed feed(4);
  auto pos = feed.Since(SessionId(2), 0, 0, 0);
  for (int i = 0; i < 4; ++i) feed.Add(SessionId(1), {Attr(i + 1)});
  EXPECT_TRUE(feed.Since(SessionId(2), pos.epoch, pos.next, 0).complete);  // exactly what is kept
  feed.Add(SessionId(1), {Attr(9)});
  auto behind = feed.Since(SessionId(2), pos.epoch, pos.next, 0);
  EXPECT_FALSE(behind.complete);
  EXPECT_TRUE(behind.changes.empty());
  // From where it is told to go on, it is complete again.
  EXPECT_TRUE(feed.Since(SessionId(2), behind.epoch, behind.next, 0).complete);

  ChangeFeed restarted;
  EXPECT_NE(restarted.epoch(), feed.epoch());
  auto other = restarted.Since(SessionId(2), feed.epoch(), 1, 0);
  EXPECT_FALSE(other.complete);
  EXPECT_EQ(other.epoch, restarted.epoch());
  EXPECT_FALSE(restarted.Since(SessionId(2), restarted.epoch(), 99, 0).complete);  // ahead of the feed
}

}  // namespace
}  // namespace t0fs::meta
