// MetaStore::ReadDir: dot entries, cookies, attributes, and paging that
// survives concurrent inserts and removals.
#include <sys/stat.h>

#include <map>
#include <random>
#include <set>

#include "meta/store/store_test_util.h"

namespace t0fs::meta {
namespace {

using testing::StoreTest;
using testing::T;

TEST_P(StoreTest, ReadDirDotsCookiesAndAttrs) {
  InodeId d = MkDir(kRootInode, "d");
  InodeId a = MkFile(d, "a");
  InodeId b = MkDir(d, "b");
  bool eof = false;
  auto all = store_->ReadDir(d, 0, 100, true, &eof);
  ASSERT_OK(all);
  EXPECT_TRUE(eof);
  ASSERT_EQ(all->size(), 4u);
  EXPECT_EQ((*all)[0].name, ".");
  EXPECT_EQ((*all)[0].ino, d);
  EXPECT_EQ((*all)[0].cookie, 1u);
  EXPECT_EQ((*all)[1].name, "..");
  EXPECT_EQ((*all)[1].ino, kRootInode);
  EXPECT_EQ((*all)[1].cookie, 2u);
  EXPECT_EQ((*all)[2].name, "a");
  EXPECT_EQ((*all)[2].ino, a);
  EXPECT_EQ((*all)[2].mode, uint32_t{S_IFREG | 0644});
  EXPECT_EQ((*all)[3].name, "b");
  EXPECT_EQ((*all)[3].ino, b);
  EXPECT_TRUE(S_ISDIR((*all)[3].mode));
  EXPECT_GT((*all)[3].cookie, (*all)[2].cookie);
  EXPECT_GT((*all)[2].cookie, 2u);
  for (const DirEntry& e : *all) {
    ASSERT_TRUE(e.attr.has_value()) << e.name;
    EXPECT_EQ(e.attr->ino, e.ino);
  }
  EXPECT_EQ((*all)[3].attr->nlink, 2u);

  auto bare = store_->ReadDir(d, 0, 100, false, &eof);
  ASSERT_OK(bare);
  for (const DirEntry& e : *bare) EXPECT_FALSE(e.attr.has_value());

  // The root is its own parent.
  auto root = store_->ReadDir(kRootInode, 0, 2, false, &eof);
  ASSERT_OK(root);
  EXPECT_FALSE(eof);
  EXPECT_EQ((*root)[1].ino, kRootInode);

  EXPECT_CODE(store_->ReadDir(a, 0, 10, false, &eof), kNotDirectory);
  EXPECT_CODE(store_->ReadDir(InodeId(999), 0, 10, false, &eof), kNotFound);
  EXPECT_CODE(store_->ReadDir(d, 0, 0, false, &eof), kInvalidArgument);
}

TEST_P(StoreTest, ReadDirOneEntryAtATime) {
  InodeId d = MkDir(kRootInode, "d");
  MkFile(d, "x");
  MkFile(d, "y");
  std::vector<std::string> seen;
  uint64_t cookie = 0;
  bool eof = false;
  int calls = 0;
  while (!eof) {
    auto page = store_->ReadDir(d, cookie, 1, false, &eof);
    ASSERT_OK(page);
    ASSERT_LE(page->size(), 1u);
    for (const DirEntry& e : *page) {
      seen.push_back(e.name);
      cookie = e.cookie;
    }
    ASSERT_LT(++calls, 10);
  }
  EXPECT_EQ(seen, (std::vector<std::string>{".", "..", "x", "y"}));
  // Empty directory: just the dots, and eof.
  InodeId empty = MkDir(kRootInode, "e");
  auto page = store_->ReadDir(empty, 0, 2, false, &eof);
  ASSERT_OK(page);
  EXPECT_EQ(page->size(), 2u);
  EXPECT_TRUE(eof);
  page = store_->ReadDir(empty, 2, 10, false, &eof);
  ASSERT_OK(page);
  EXPECT_TRUE(page->empty());
  EXPECT_TRUE(eof);
}

// 5000 entries listed in pages of varying size while, between pages, entries
// are removed (some already listed, some not) and new ones are created. Every
// entry that exists for the whole listing appears exactly once; no entry
// appears twice.
TEST_P(StoreTest, ReadDirPagingSurvivesConcurrentChanges) {
  constexpr int kEntries = 5000;
  InodeId d = MkDir(kRootInode, "big");
  std::vector<std::string> names;
  for (int i = 0; i < kEntries; ++i) {
    names.push_back("e" + std::to_string(i));
    ASSERT_NE(MkFile(d, names.back()), InodeId());
  }
  std::mt19937_64 rng(42);
  std::set<std::string> alive(names.begin(), names.end());
  std::set<std::string> removed;
  std::map<std::string, int> listed;
  uint64_t cookie = 0;
  bool eof = false;
  int created = 0;
  int pages = 0;
  while (!eof) {
    size_t max = 1 + rng() % 150;
    auto page = store_->ReadDir(d, cookie, max, pages % 3 == 0, &eof);
    ASSERT_OK(page);
    ASSERT_LE(page->size(), max);
    for (const DirEntry& e : *page) {
      ++listed[e.name];
      cookie = e.cookie;
    }
    ASSERT_LT(++pages, 10000);
    // Churn: remove a few random original entries, create a few new ones.
    for (int k = 0; k < 3; ++k) {
      const std::string& victim = names[rng() % names.size()];
      if (alive.erase(victim) == 1) {
        ASSERT_OK(store_->Unlink(OpToken{}, d, victim, T(200)));
        removed.insert(victim);
      }
    }
    for (int k = 0; k < 2; ++k) MkFile(d, "new" + std::to_string(created++));
  }
  EXPECT_EQ(listed["."], 1);
  EXPECT_EQ(listed[".."], 1);
  for (const auto& [name, count] : listed) EXPECT_EQ(count, 1) << name;
  for (const std::string& name : alive) EXPECT_EQ(listed.count(name), 1u) << name;
  EXPECT_GT(removed.size(), 100u);
  EXPECT_LT(alive.size(), static_cast<size_t>(kEntries));
}

}  // namespace
}  // namespace t0fs::meta
