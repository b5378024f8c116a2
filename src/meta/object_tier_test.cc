// ObjectTier: object keys and the checks of its settings (no server: the
// tier against a real gateway is tests/s3/object_tier.sh).
#include "meta/object_tier.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>

#include "meta/store/store_test_util.h"

namespace t0fs::meta {
namespace {

TEST(ObjectTier, KeysNameChunkAndVersion) {
  EXPECT_EQ(ObjectKey("t0fs/c/", ChunkId(0x1f), 3), "t0fs/c/chunks/000000000000001f.3");
  EXPECT_EQ(ObjectKey("", ChunkId(1), 0), "chunks/0000000000000001.0");
}

ObjectTierConfig Valid(const std::string& credentials) {
  ObjectTierConfig c;
  c.endpoint = "http://127.0.0.1:9";
  c.bucket = "b";
  c.credentials = credentials;
  return c;
}

TEST(ObjectTier, OpenChecksSettingsAndNamesTheFlag) {
  testing::TempDir dir;
  const std::string creds = dir.File("creds");
  std::ofstream(creds) << "access_key = a\nsecret_key = s\n";
  // Readable by others: refused.
  EXPECT_CODE(ObjectTier::Open(Valid(creds), "cid"), kPermissionDenied);
  ASSERT_EQ(::chmod(creds.c_str(), 0600), 0);
  auto tier = ObjectTier::Open(Valid(creds), "cid");
  ASSERT_OK(tier);
  EXPECT_EQ((*tier)->prefix(), "t0fs/cid/");
  EXPECT_EQ((*tier)->Key(ChunkId(2), 7), "t0fs/cid/chunks/0000000000000002.7");
  pb::ObjectTier node = (*tier)->NodeConfig();
  EXPECT_EQ(node.credentials_file(), creds);  // the path, never the secret
  EXPECT_EQ(node.bucket(), "b");

  ObjectTierConfig prefixed = Valid(creds);
  prefixed.prefix = "mine";
  EXPECT_EQ((*ObjectTier::Open(prefixed, "cid"))->prefix(), "mine/");

  ObjectTierConfig bad = Valid(creds);
  bad.endpoint = "127.0.0.1:9";
  EXPECT_CODE(ObjectTier::Open(bad, "cid"), kInvalidArgument);
  bad = Valid(creds);
  bad.bucket.clear();
  EXPECT_CODE(ObjectTier::Open(bad, "cid"), kInvalidArgument);
  bad = Valid("");
  EXPECT_CODE(ObjectTier::Open(bad, "cid"), kInvalidArgument);
  auto missing = ObjectTier::Open(Valid(dir.File("absent")), "cid");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("object tier"), std::string::npos)
      << missing.status().ToString();
}

}  // namespace
}  // namespace t0fs::meta
