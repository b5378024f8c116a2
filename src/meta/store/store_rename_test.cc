// MetaStore::Rename: every rename(2)/renameat2(2) case.
#include <fcntl.h>
#include <sys/stat.h>

#include "meta/store/store_test_util.h"

namespace t0fs::meta {
namespace {

using testing::StoreTest;
using testing::T;

constexpr uint32_t kNoReplace = RenameFlags::kNoReplace;
constexpr uint32_t kExchange = RenameFlags::kExchange;

class RenameTest : public StoreTest {
 protected:
  Status Mv(InodeId op, const std::string& on, InodeId np, const std::string& nn,
            uint32_t flags = 0, Timespec now = T(500)) {
    return store_->Rename(OpToken{}, op, on, np, nn, flags, now);
  }
  void ExpectClean() {
    auto problems = CheckProblems();
    EXPECT_TRUE(problems.empty()) << ::testing::PrintToString(problems);
  }
};

TEST_P(RenameTest, WithinOneDirectory) {
  InodeId f = MkFile(kRootInode, "a");
  ASSERT_OK(Mv(kRootInode, "a", kRootInode, "b"));
  EXPECT_EQ(Find(kRootInode, "a"), InodeId());
  EXPECT_EQ(Find(kRootInode, "b"), f);
  EXPECT_EQ(Attr(f).ctime, T(500));
  EXPECT_EQ(Attr(f).mtime, T(100));
  EXPECT_EQ(Attr(kRootInode).mtime, T(500));
  EXPECT_EQ(Attr(kRootInode).ctime, T(500));
  ExpectClean();
}

TEST_P(RenameTest, FileBetweenDirectories) {
  InodeId d1 = MkDir(kRootInode, "d1");
  InodeId d2 = MkDir(kRootInode, "d2");
  InodeId f = MkFile(d1, "f");
  ASSERT_OK(Mv(d1, "f", d2, "g"));
  EXPECT_EQ(Find(d2, "g"), f);
  EXPECT_EQ(Find(d1, "f"), InodeId());
  EXPECT_EQ(Attr(d1).mtime, T(500));
  EXPECT_EQ(Attr(d2).mtime, T(500));
  EXPECT_EQ(Attr(d1).nlink, 2u);
  EXPECT_EQ(Attr(d2).nlink, 2u);
  ExpectClean();
}

TEST_P(RenameTest, DirectoryBetweenDirectoriesFixesLinkCounts) {
  InodeId d1 = MkDir(kRootInode, "d1");
  InodeId d2 = MkDir(kRootInode, "d2");
  InodeId sub = MkDir(d1, "sub");
  MkFile(sub, "inner");
  EXPECT_EQ(Attr(d1).nlink, 3u);
  ASSERT_OK(Mv(d1, "sub", d2, "moved"));
  EXPECT_EQ(Attr(d1).nlink, 2u);
  EXPECT_EQ(Attr(d2).nlink, 3u);
  EXPECT_EQ(Find(sub, ".."), d2);
  EXPECT_NE(Find(sub, "inner"), InodeId());
  EXPECT_EQ(Attr(sub).ctime, T(500));
  ExpectClean();
}

TEST_P(RenameTest, MissingSourceAndBadArguments) {
  InodeId f = MkFile(kRootInode, "f");
  EXPECT_CODE(Mv(kRootInode, "nope", kRootInode, "x"), kNotFound);
  EXPECT_CODE(Mv(kRootInode, "f", kRootInode, "x", kNoReplace | kExchange), kInvalidArgument);
  EXPECT_CODE(Mv(kRootInode, "f", kRootInode, "x", 4), kInvalidArgument);
  EXPECT_CODE(Mv(kRootInode, "f", kRootInode, ""), kInvalidArgument);
  EXPECT_CODE(Mv(kRootInode, "..", kRootInode, "x"), kInvalidArgument);
  EXPECT_CODE(Mv(kRootInode, "f", kRootInode, std::string(256, 'x')), kNameTooLong);
  EXPECT_CODE(Mv(InodeId(999), "f", kRootInode, "x"), kNotFound);
  EXPECT_CODE(Mv(kRootInode, "f", InodeId(999), "x"), kNotFound);
  EXPECT_CODE(Mv(kRootInode, "f", f, "x"), kNotDirectory);
  EXPECT_EQ(Find(kRootInode, "f"), f);
  EXPECT_EQ(Attr(kRootInode).mtime, T(100));
}

TEST_P(RenameTest, NoReplace) {
  InodeId a = MkFile(kRootInode, "a");
  InodeId b = MkFile(kRootInode, "b");
  EXPECT_CODE(Mv(kRootInode, "a", kRootInode, "b", kNoReplace), kExists);
  EXPECT_EQ(Find(kRootInode, "b"), b);
  ASSERT_OK(Mv(kRootInode, "a", kRootInode, "c", kNoReplace));
  EXPECT_EQ(Find(kRootInode, "c"), a);
}

TEST_P(RenameTest, ExchangeNeedsBothEntries) {
  MkFile(kRootInode, "a");
  EXPECT_CODE(Mv(kRootInode, "a", kRootInode, "missing", kExchange), kNotFound);
}

TEST_P(RenameTest, TypeMismatches) {
  MkDir(kRootInode, "dir");
  InodeId full = MkDir(kRootInode, "full");
  MkFile(full, "x");
  MkFile(kRootInode, "file");
  MkDir(kRootInode, "empty");
  EXPECT_CODE(Mv(kRootInode, "dir", kRootInode, "file"), kNotDirectory);
  EXPECT_CODE(Mv(kRootInode, "file", kRootInode, "dir"), kIsDirectory);
  EXPECT_CODE(Mv(kRootInode, "dir", kRootInode, "full"), kNotEmpty);
  EXPECT_CODE(Mv(kRootInode, "empty", kRootInode, "full"), kNotEmpty);
  ExpectClean();
}

TEST_P(RenameTest, DirectoryOntoEmptyDirectory) {
  InodeId d1 = MkDir(kRootInode, "d1");
  InodeId src = MkDir(d1, "src");
  InodeId dst = MkDir(kRootInode, "dst");
  EXPECT_EQ(Attr(kRootInode).nlink, 4u);
  ASSERT_OK(Mv(d1, "src", kRootInode, "dst"));
  EXPECT_EQ(Find(kRootInode, "dst"), src);
  EXPECT_CODE(store_->GetAttr(dst), kNotFound);
  EXPECT_EQ(Attr(kRootInode).nlink, 4u);  // gained src, lost dst
  EXPECT_EQ(Attr(d1).nlink, 2u);
  ExpectClean();
  // Same parent.
  MkDir(kRootInode, "e1");
  InodeId e2 = MkDir(kRootInode, "e2");
  EXPECT_EQ(Attr(kRootInode).nlink, 6u);
  ASSERT_OK(Mv(kRootInode, "e1", kRootInode, "e2"));
  EXPECT_CODE(store_->GetAttr(e2), kNotFound);
  EXPECT_EQ(Attr(kRootInode).nlink, 5u);
  ExpectClean();
}

TEST_P(RenameTest, DirectoryBelowItself) {
  InodeId a = MkDir(kRootInode, "a");
  InodeId b = MkDir(a, "b");
  InodeId c = MkDir(b, "c");
  EXPECT_CODE(Mv(kRootInode, "a", a, "x"), kInvalidArgument);
  EXPECT_CODE(Mv(kRootInode, "a", c, "x"), kInvalidArgument);
  EXPECT_CODE(Mv(a, "b", c, "x"), kInvalidArgument);
  // Exchange: either side moving below itself is refused.
  MkFile(c, "f");
  EXPECT_CODE(Mv(kRootInode, "a", c, "f", kExchange), kInvalidArgument);
  EXPECT_CODE(Mv(c, "f", kRootInode, "a", kExchange), kInvalidArgument);
  // Moving up is fine.
  ASSERT_OK(Mv(b, "c", kRootInode, "c"));
  EXPECT_EQ(Find(c, ".."), kRootInode);
  ExpectClean();
}

TEST_P(RenameTest, SameInodeIsANoOp) {
  InodeId f = MkFile(kRootInode, "f");
  ASSERT_OK(Mv(kRootInode, "f", kRootInode, "f", 0, T(700)));
  EXPECT_EQ(Find(kRootInode, "f"), f);
  EXPECT_EQ(Attr(kRootInode).mtime, T(100));
  EXPECT_EQ(Attr(f).ctime, T(100));
  ASSERT_OK(store_->Link(OpToken{}, f, kRootInode, "g", T(200)));
  ASSERT_OK(Mv(kRootInode, "f", kRootInode, "g", 0, T(700)));
  EXPECT_EQ(Find(kRootInode, "f"), f);  // both names stay (POSIX)
  EXPECT_EQ(Find(kRootInode, "g"), f);
  EXPECT_EQ(Attr(f).nlink, 2u);
  ASSERT_OK(Mv(kRootInode, "f", kRootInode, "g", kExchange, T(700)));
  EXPECT_EQ(Attr(f).ctime, T(200));
  InodeId d = MkDir(kRootInode, "d");
  ASSERT_OK(Mv(kRootInode, "d", kRootInode, "d"));
  EXPECT_EQ(Find(kRootInode, "d"), d);
  ExpectClean();
}

TEST_P(RenameTest, ReplacingAFileFreesIt) {
  InodeId a = MkFile(kRootInode, "a");
  InodeId b = MkFile(kRootInode, "b");
  auto targets = testing::RegisterTargets(*store_, 1, 1);
  ASSERT_OK(store_->Allocate(OpToken{}, b, {0, 1, 2}, targets));
  ASSERT_OK(Mv(kRootInode, "a", kRootInode, "b"));
  EXPECT_EQ(Find(kRootInode, "b"), a);
  EXPECT_CODE(store_->GetAttr(b), kNotFound);
  EXPECT_EQ(Counts().garbage_chunks, 3u);
  ExpectClean();
}

TEST_P(RenameTest, ReplacingAHardLinkedFileKeepsIt) {
  InodeId a = MkFile(kRootInode, "a");
  InodeId b = MkFile(kRootInode, "b");
  ASSERT_OK(store_->Link(OpToken{}, b, kRootInode, "b2", T(200)));
  std::vector<InodeId> changed;
  ASSERT_OK(store_->Rename(OpToken{}, kRootInode, "a", kRootInode, "b", 0, T(500), &changed));
  EXPECT_EQ(changed, (std::vector<InodeId>{a, b}));  // a's ctime, b's link count
  InodeAttr attr = Attr(b);
  EXPECT_EQ(attr.nlink, 1u);
  EXPECT_EQ(attr.ctime, T(500));
  ExpectClean();
}

TEST_P(RenameTest, ReplacingAnOpenFileKeepsItUntilRelease) {
  MkFile(kRootInode, "a");
  InodeId b = MkFile(kRootInode, "b");
  auto targets = testing::RegisterTargets(*store_, 1, 1);
  ASSERT_OK(store_->Allocate(OpToken{}, b, {0}, targets));
  SessionId s = NewSession();
  auto h = store_->Open(OpToken{}, s, b, O_RDWR, T(150));
  ASSERT_OK(h);
  ASSERT_OK(Mv(kRootInode, "a", kRootInode, "b"));
  EXPECT_EQ(Attr(b).nlink, 0u);
  EXPECT_EQ(Counts().garbage_chunks, 0u);
  ExpectClean();
  ASSERT_OK(store_->Release(OpToken{}, h->handle));
  EXPECT_CODE(store_->GetAttr(b), kNotFound);
  EXPECT_EQ(Counts().garbage_chunks, 1u);
  ExpectClean();
}

TEST_P(RenameTest, ExchangeFiles) {
  InodeId d1 = MkDir(kRootInode, "d1");
  InodeId d2 = MkDir(kRootInode, "d2");
  InodeId a = MkFile(d1, "a");
  InodeId b = MkFile(d2, "b");
  ASSERT_OK(Mv(d1, "a", d2, "b", kExchange));
  EXPECT_EQ(Find(d1, "a"), b);
  EXPECT_EQ(Find(d2, "b"), a);
  EXPECT_EQ(Attr(a).ctime, T(500));
  EXPECT_EQ(Attr(b).ctime, T(500));
  EXPECT_EQ(Attr(d1).mtime, T(500));
  EXPECT_EQ(Attr(d2).mtime, T(500));
  ExpectClean();
}

TEST_P(RenameTest, ExchangeDirectoryWithFileAcrossParents) {
  InodeId d1 = MkDir(kRootInode, "d1");
  InodeId d2 = MkDir(kRootInode, "d2");
  InodeId sub = MkDir(d1, "sub");
  InodeId f = MkFile(d2, "f");
  ASSERT_OK(Mv(d1, "sub", d2, "f", kExchange));
  EXPECT_EQ(Find(d1, "sub"), f);
  EXPECT_EQ(Find(d2, "f"), sub);
  EXPECT_EQ(Attr(d1).nlink, 2u);
  EXPECT_EQ(Attr(d2).nlink, 3u);
  EXPECT_EQ(Find(sub, ".."), d2);
  ExpectClean();
  // And back the other way round (file as source).
  ASSERT_OK(Mv(d1, "sub", d2, "f", kExchange));
  EXPECT_EQ(Attr(d1).nlink, 3u);
  EXPECT_EQ(Attr(d2).nlink, 2u);
  ExpectClean();
}

TEST_P(RenameTest, ExchangeDirectories) {
  InodeId d1 = MkDir(kRootInode, "d1");
  InodeId d2 = MkDir(kRootInode, "d2");
  InodeId x = MkDir(d1, "x");
  InodeId y = MkDir(d2, "y");
  MkFile(y, "inside");
  ASSERT_OK(Mv(d1, "x", d2, "y", kExchange));
  EXPECT_EQ(Find(d1, "x"), y);
  EXPECT_EQ(Find(d2, "y"), x);
  EXPECT_EQ(Attr(d1).nlink, 3u);
  EXPECT_EQ(Attr(d2).nlink, 3u);
  EXPECT_EQ(Find(y, ".."), d1);
  // Exchanging a non-empty directory is fine (nothing is removed).
  EXPECT_NE(Find(y, "inside"), InodeId());
  ExpectClean();
}

TEST_P(RenameTest, ExchangeWithinOneDirectory) {
  InodeId d = MkDir(kRootInode, "d");
  InodeId f = MkFile(kRootInode, "f");
  ASSERT_OK(Mv(kRootInode, "d", kRootInode, "f", kExchange));
  EXPECT_EQ(Find(kRootInode, "d"), f);
  EXPECT_EQ(Find(kRootInode, "f"), d);
  EXPECT_EQ(Attr(kRootInode).nlink, 3u);
  ExpectClean();
}

TEST_P(RenameTest, RenamedEntryListsOnce) {
  MkFile(kRootInode, "a");
  MkFile(kRootInode, "b");
  ASSERT_OK(Mv(kRootInode, "a", kRootInode, "c"));
  EXPECT_EQ(Names(kRootInode), (std::vector<std::string>{"b", "c"}));
  ASSERT_OK(Mv(kRootInode, "b", kRootInode, "c"));
  EXPECT_EQ(Names(kRootInode), (std::vector<std::string>{"c"}));
}

T0FS_STORE_TEST_SUITE(RenameTest);

}  // namespace
}  // namespace t0fs::meta
