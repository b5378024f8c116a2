#include <gtest/gtest.h>

#include <chrono>

#include "fuse/mount_config.h"
#include "fuse/ops/op_context.h"

namespace t0fs::fuse {
namespace {

using std::chrono::hours;
using std::chrono::seconds;

// A reply's times as a request would see them, changes heard or not.
std::pair<WireTimeout, WireTimeout> EntryAndAttr(const MountConfig& cfg, bool heard) {
  CacheTimeouts times(cfg);
  if (heard) times.WatchedUntil(std::chrono::steady_clock::now() + hours(1));
  times.BeginRequest();
  return times.entry_and_attr();
}

TEST(CacheTimeouts, LongWhileHeardShortOtherwise) {
  MountConfig cfg;  // entry and attr 1 s, cache 30 s
  auto [entry, attr] = EntryAndAttr(cfg, /*heard=*/true);
  EXPECT_EQ(entry.sec, 30u);
  EXPECT_EQ(attr.sec, 30u);
  std::tie(entry, attr) = EntryAndAttr(cfg, /*heard=*/false);
  EXPECT_EQ(entry.sec, 1u);
  EXPECT_EQ(attr.sec, 1u);
}

TEST(CacheTimeouts, ZeroMeansNeverCachedEvenWhileHeard) {
  MountConfig cfg;
  cfg.attr_timeout.value = seconds(0);
  auto [entry, attr] = EntryAndAttr(cfg, /*heard=*/true);
  EXPECT_EQ(entry.sec, 30u);
  EXPECT_TRUE(attr.zero());
  cfg.attr_timeout.value = seconds(1);
  cfg.entry_timeout.value = seconds(0);
  std::tie(entry, attr) = EntryAndAttr(cfg, /*heard=*/true);
  EXPECT_TRUE(entry.zero());
  EXPECT_EQ(attr.sec, 30u);
  CacheTimeouts times(cfg);
  times.WatchedUntil(std::chrono::steady_clock::now() + hours(1));
  times.BeginRequest();
  EXPECT_EQ(times.attr().sec, 30u);
}

}  // namespace
}  // namespace t0fs::fuse
