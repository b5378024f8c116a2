// Objective settings: parsed and validated once, for every front end.
#include <gtest/gtest.h>

#include "t0fs/admin.h"

namespace t0fs::client {
namespace {

TEST(ParseObjective, SettingsApplyOverTheBase) {
  Objective base;
  base.replicas = 1;
  base.nodes = {NodeId(4)};
  auto obj = ParseObjective({"replicas=3", "placement=spread", "chunk-size=1M"}, base);
  ASSERT_TRUE(obj.ok()) << obj.status().ToString();
  EXPECT_EQ(obj->replicas, 3u);
  EXPECT_EQ(obj->placement, Placement::kSpread);
  EXPECT_EQ(obj->nodes, std::vector<NodeId>{NodeId(4)});  // not named: kept
  EXPECT_EQ(obj->chunk_size, 1u << 20);
  auto nodes = ParseObjective({"nodes=1,2"}, *obj);
  ASSERT_TRUE(nodes.ok());
  EXPECT_EQ(nodes->nodes, (std::vector<NodeId>{NodeId(1), NodeId(2)}));
  auto any = ParseObjective({"nodes="}, *nodes);
  ASSERT_TRUE(any.ok());
  EXPECT_TRUE(any->nodes.empty());
}

TEST(ParseObjective, BadSettingsAreNamed) {
  for (const char* bad : {"replicas=0", "replicas=17", "replicas=two", "placement=near", "nodes=1,x",
                          "nodes=0", "colour=blue", "replicas"}) {
    auto obj = ParseObjective({bad}, Objective());
    EXPECT_EQ(obj.status().code(), StatusCode::kInvalidArgument) << bad;
  }
}

TEST(ParseObjective, ProtectionGoals) {
  Objective base;
  base.replicas = 1;
  auto obj = ParseObjective({"protect=replicas:2"}, base);
  ASSERT_TRUE(obj.ok()) << obj.status().ToString();
  EXPECT_EQ(obj->protect.kind, ProtectKind::kReplicas);
  EXPECT_EQ(obj->protect.copies, 2u);
  EXPECT_EQ(obj->protect.within_s, kDefaultProtectWithinS);  // not named: the default
  auto later = ParseObjective({"within=5m", "protect=replicas:3"}, *obj);
  ASSERT_TRUE(later.ok());
  EXPECT_EQ(later->protect.copies, 3u);
  EXPECT_EQ(later->protect.within_s, 300u);
  auto kept = ParseObjective({"protect=replicas:4"}, *later);  // within kept from the base
  ASSERT_TRUE(kept.ok());
  EXPECT_EQ(kept->protect.within_s, 300u);
  auto ec = ParseObjective({"protect=ec:4+2", "keep-local=drop", "within=0s"}, base);
  ASSERT_TRUE(ec.ok()) << ec.status().ToString();
  EXPECT_EQ(ec->protect.kind, ProtectKind::kEc);
  EXPECT_EQ(ec->protect.copies, 4u);
  EXPECT_EQ(ec->protect.parity, 2u);
  EXPECT_EQ(ec->protect.within_s, 0u);
  EXPECT_EQ(ec->protect.keep_local, KeepLocal::kDrop);
  // after= delays keep-local=drop; it goes with a rule that is not drop.
  auto after = ParseObjective({"after=7d"}, *ec);
  ASSERT_TRUE(after.ok()) << after.status().ToString();
  EXPECT_EQ(after->protect.drop_after_s, 7u * 24 * 3600);
  auto pressure = ParseObjective({"keep-local=pressure"}, *after);
  ASSERT_TRUE(pressure.ok());
  EXPECT_EQ(pressure->protect.drop_after_s, 0u);
  EXPECT_EQ(ParseObjective({"keep-local=keep", "after=1h"}, *ec).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseObjective({"after=3651d"}, *ec).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseObjective({"after=1h"}, base).status().code(), StatusCode::kInvalidArgument);
  auto sync = ParseObjective({"sync"}, *ec);
  ASSERT_TRUE(sync.ok());
  EXPECT_EQ(sync->protect.kind, ProtectKind::kNone);
  EXPECT_EQ(sync->protect.within_s, 0u);
  EXPECT_EQ(ParseObjective({"protect=none"}, *later)->protect.kind, ProtectKind::kNone);
  for (const char* bad : {"protect=replicas:1", "protect=replicas:17", "protect=replicas:",
                          "protect=ec:4", "protect=ec:0+2", "protect=ec:4+x", "protect=mirror",
                          "within=soon", "within=31d", "within=1000h", "keep-local=maybe"}) {
    EXPECT_EQ(ParseObjective({"protect=replicas:2", bad}, base).status().code(),
              StatusCode::kInvalidArgument)
        << bad;
  }
  // A deadline or a rule for the local copy without a goal is a mistake.
  EXPECT_EQ(ParseObjective({"within=5m"}, base).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseObjective({"keep-local=drop"}, base).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseObjective({"keep-newest=3"}, base).status().code(), StatusCode::kInvalidArgument);
}

// keep-newest=N refines keep-local=drop|pressure; 0 removes it, and it goes
// with a goal or a rule that keeps every copy anyway.
TEST(ParseObjective, KeepNewest) {
  Objective base;
  base.replicas = 1;
  auto newest = ParseObjective({"protect=object", "keep-local=drop", "keep-newest=3"}, base);
  ASSERT_TRUE(newest.ok()) << newest.status().ToString();
  EXPECT_EQ(newest->keep_newest, 3u);
  auto kept = ParseObjective({"within=1m"}, *newest);  // kept from the base
  ASSERT_TRUE(kept.ok());
  EXPECT_EQ(kept->keep_newest, 3u);
  EXPECT_EQ(ParseObjective({"keep-newest=0"}, *newest)->keep_newest, 0u);
  EXPECT_EQ(ParseObjective({"keep-local=keep"}, *newest)->keep_newest, 0u);
  EXPECT_EQ(ParseObjective({"sync"}, *newest)->keep_newest, 0u);
  EXPECT_EQ(ParseObjective({"keep-local=keep", "keep-newest=2"}, *newest).status().code(),
            StatusCode::kInvalidArgument);
  for (const char* bad :
       {"keep-newest=-1", "keep-newest=x", "keep-newest=100001", "keep-newest="}) {
    EXPECT_EQ(ParseObjective({bad}, *newest).status().code(), StatusCode::kInvalidArgument) << bad;
  }
}

TEST(DescribeObjective, NamesWhatIsSet) {
  Objective o;
  o.replicas = 2;
  EXPECT_EQ(DescribeObjective(o), "replicas=2 placement=local");
  o.placement = Placement::kSpread;
  o.nodes = {NodeId(1), NodeId(2)};
  o.chunk_size = 1 << 20;
  EXPECT_EQ(DescribeObjective(o), "replicas=2 placement=spread nodes=1,2 chunk-size=1 MiB");
  o.protect = Protection{ProtectKind::kReplicas, 3, 0, 300, KeepLocal::kKeep};
  EXPECT_EQ(DescribeObjective(o),
            "replicas=2 placement=spread nodes=1,2 chunk-size=1 MiB protect=replicas:3 within=5m");
  o.protect = Protection{ProtectKind::kEc, 4, 2, 90, KeepLocal::kPressure};
  EXPECT_EQ(DescribeObjective(o),
            "replicas=2 placement=spread nodes=1,2 chunk-size=1 MiB protect=ec:4+2 within=90s "
            "keep-local=pressure");
  o.protect = Protection{ProtectKind::kObject, 0, 0, 60, KeepLocal::kDrop, 86400};
  EXPECT_EQ(DescribeObjective(o),
            "replicas=2 placement=spread nodes=1,2 chunk-size=1 MiB protect=object within=1m "
            "keep-local=drop after=1d");
  o.keep_newest = 5;
  EXPECT_EQ(DescribeObjective(o),
            "replicas=2 placement=spread nodes=1,2 chunk-size=1 MiB protect=object within=1m "
            "keep-local=drop after=1d keep-newest=5");
}

}  // namespace
}  // namespace t0fs::client
