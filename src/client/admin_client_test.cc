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

TEST(DescribeObjective, NamesWhatIsSet) {
  Objective o;
  o.replicas = 2;
  EXPECT_EQ(DescribeObjective(o), "replicas=2 placement=local");
  o.placement = Placement::kSpread;
  o.nodes = {NodeId(1), NodeId(2)};
  o.chunk_size = 1 << 20;
  EXPECT_EQ(DescribeObjective(o), "replicas=2 placement=spread nodes=1,2 chunk-size=1 MiB");
}

}  // namespace
}  // namespace t0fs::client
