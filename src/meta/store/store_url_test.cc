// Store URLs: the accepted forms, the old --db flag, and one clear error line
// for everything else.
#include "common/url_redact.h"
#include "meta/store/store_url.h"

#include "meta/store/store_test_util.h"

namespace t0fs::meta {
namespace {

using testing::TempDir;

TEST(StoreUrl, SqliteForms) {
  auto abs = ParseStoreUrl("sqlite:///var/lib/t0fs/meta.db");
  ASSERT_OK(abs);
  EXPECT_EQ(abs->engine, StoreLocation::Engine::kSqlite);
  EXPECT_EQ(abs->path, "/var/lib/t0fs/meta.db");
  auto rel = ParseStoreUrl("sqlite://data/meta.db");
  ASSERT_OK(rel);
  EXPECT_EQ(rel->path, "data/meta.db");
  auto mem = ParseStoreUrl("sqlite::memory:");
  ASSERT_OK(mem);
  EXPECT_EQ(mem->path, ":memory:");
}

TEST(StoreUrl, RefusedWithOneLine) {
  for (const char* url : {"postgresql://", "mysql://x/y", "/var/lib/t0fs/meta.db", "sqlite://",
                          ""}) {
    auto r = ParseStoreUrl(url);
    EXPECT_CODE(r, kInvalidArgument) << url;
    if (r.ok()) continue;
    EXPECT_EQ(r.status().message().find('\n'), std::string::npos) << r.status().ToString();
    EXPECT_NE(r.status().message().find(url), std::string::npos) << r.status().ToString();
  }
}

TEST(StoreUrl, PasswordsStayOutOfLogs) {
  EXPECT_EQ(RedactUrlPassword("postgresql://t0fs:s3cret@db:5432/t0fs"), "postgresql://t0fs:***@db:5432/t0fs");
  EXPECT_EQ(RedactUrlPassword("postgresql://t0fs@db:5432/t0fs"), "postgresql://t0fs@db:5432/t0fs");
  EXPECT_EQ(RedactUrlPassword("sqlite:///var/lib/t0fs/meta.db"), "sqlite:///var/lib/t0fs/meta.db");
  EXPECT_EQ(RedactUrlPassword("sqlite::memory:"), "sqlite::memory:");
}

TEST(StoreUrl, PostgresKeepsTheWholeUrl) {
  for (const char* url : {"postgresql://t0fs@db.example:5432/t0fs",
                          "postgres://a:5432,b:5432/t0fs?target_session_attrs=read-write"}) {
    auto pg = ParseStoreUrl(url);
    ASSERT_OK(pg);
    EXPECT_EQ(pg->engine, StoreLocation::Engine::kPostgres);
    EXPECT_EQ(pg->path, url);
  }
}

TEST(StoreUrl, FromFlags) {
  auto store = StoreUrlFromFlags("sqlite:///a.db", "");
  ASSERT_OK(store);
  EXPECT_EQ(*store, "sqlite:///a.db");
  auto db_abs = StoreUrlFromFlags("", "/var/lib/t0fs/meta.db");
  ASSERT_OK(db_abs);
  EXPECT_EQ(*db_abs, "sqlite:///var/lib/t0fs/meta.db");
  auto db_rel = StoreUrlFromFlags("", "meta.db");
  ASSERT_OK(db_rel);
  EXPECT_EQ(*db_rel, "sqlite://meta.db");
  auto neither = StoreUrlFromFlags("", "");
  ASSERT_OK(neither);
  EXPECT_EQ(*neither, "sqlite://meta.db");
  EXPECT_CODE(StoreUrlFromFlags("sqlite::memory:", "meta.db"), kInvalidArgument);
}

TEST(StoreUrl, OpensAStoreThatKeepsItsData) {
  TempDir dir;
  const std::string url = "sqlite://" + dir.File("meta.db");
  auto location = ParseStoreUrl(url);
  ASSERT_OK(location);
  std::string cluster;
  {
    auto store = OpenStore(*location);
    ASSERT_OK(store);
    cluster = (*store)->cluster_id();
    MakeNodeArgs args;
    args.parent = kRootInode;
    args.name = "kept";
    args.mode = S_IFDIR | 0755;
    ASSERT_OK((*store)->MakeNode(OpToken{}, args, WallNow()));
  }
  auto store = OpenStore(*location);
  ASSERT_OK(store);
  EXPECT_EQ((*store)->cluster_id(), cluster);
  EXPECT_OK((*store)->Lookup(kRootInode, "kept"));
}

}  // namespace
}  // namespace t0fs::meta
