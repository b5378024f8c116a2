#include "ec/stripe_record.h"

#include <gtest/gtest.h>

namespace t0fs::ec {
namespace {

TEST(EcStripe, TextRoundTrips) {
  EcStripe s{
      2, 1,       1u << 20,
      7, 4718592, {{NodeId(2), VolumeId(20)}, {NodeId(0), VolumeId(0)}, {NodeId(3), VolumeId(31)}}};
  const std::string text = FormatStripe(s);
  EXPECT_EQ(text, "2+1 1048576 7 4718592 2:20,0:0,3:31");
  auto back = ParseStripe(text);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, s);
  EXPECT_EQ(back->placed(), 2u);
  EXPECT_EQ(FormatStripe(EcStripe{}), "");
  auto none = ParseStripe("");
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
}

TEST(EcStripe, MalformedTextIsRefused) {
  for (const char* bad :
       {"2+1", "2+1 4096 1 10", "2+1 4096 1 10 1:1,2:2", "2+1 4096 1 10 1:1,2:2,3:3,4:4",
        "0+1 4096 1 10 1:1", "2+0 4096 1 10 1:1,2:2", "20+20 4096 1 10 1:1",
        "2+1 0 1 10 1:1,2:2,3:3", "2+1 4096 1 10 1:1,2:2,3:x", "2+1 4096 1 10 1:1,2:2,3:3 ", "x"}) {
    EXPECT_FALSE(ParseStripe(bad).ok()) << bad;
  }
}

}  // namespace
}  // namespace t0fs::ec
