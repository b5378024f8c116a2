// MetaStore (and the SQLite store: opening, schema): the namespace operations (create, lookup,
// unlink, rmdir, link, setattr, xattrs). Rename, files, readdir and the
// consistency/crash tests live in the sibling *_test.cc files.
#include <sys/stat.h>

#include "meta/store/sqlite/sqlite_db.h"
#include "meta/store/store_test_util.h"

namespace t0fs::meta {
namespace {

using testing::OpenOrDie;
using testing::StoreTest;
using testing::T;
using testing::TempDir;

// ---- opening and schema ----

TEST(SqliteStoreOpen, NewStoreHasRootAndClusterId) {
  auto store = OpenOrDie(":memory:");
  ASSERT_NE(store, nullptr);
  auto root = store->GetAttr(kRootInode);
  ASSERT_OK(root);
  EXPECT_EQ(root->mode, uint32_t{S_IFDIR | 0755});
  EXPECT_EQ(root->nlink, 2u);
  EXPECT_EQ(root->uid, 0u);
  EXPECT_EQ(root->gid, 0u);
  EXPECT_EQ(root->size, 0u);
  std::string id = store->cluster_id();
  ASSERT_EQ(id.size(), 36u);
  EXPECT_EQ(id[8], '-');
  EXPECT_EQ(id[14], '4');  // version 4
  EXPECT_NE(OpenOrDie(":memory:")->cluster_id(), id);
  auto check = store->Check();
  ASSERT_OK(check);
  EXPECT_TRUE(check->empty());
}

TEST(SqliteStoreOpen, FileStoreSurvivesReopen) {
  TempDir dir;
  std::string path = dir.File("meta.db");
  std::string cluster;
  InodeId file, sub;
  {
    auto store = OpenOrDie(path);
    ASSERT_NE(store, nullptr);
    cluster = store->cluster_id();
    MakeNodeArgs d{kRootInode, "sub", S_IFDIR | 0700, 1, 2, 0, true, "", 0};
    auto r = store->MakeNode(OpToken{}, d, T(5));
    ASSERT_OK(r);
    sub = r->attr.ino;
    MakeNodeArgs f{sub, "f", S_IFREG | 0600, 1, 2, 0, true, "", 4096};
    auto rf = store->MakeNode(OpToken{}, f, T(6));
    ASSERT_OK(rf);
    file = rf->attr.ino;
    ASSERT_OK(store->SetXattr(OpToken{}, file, "user.k", std::string("v\0w", 3), 0, T(7)));
    // The highest inode is removed: its number must still never come back.
    MakeNodeArgs g{sub, "g", S_IFREG | 0600, 1, 2, 0, true, "", 4096};
    ASSERT_OK(store->MakeNode(OpToken{}, g, T(8)));
    ASSERT_OK(store->Unlink(OpToken{}, sub, "g", T(9)));
  }
  auto store = OpenOrDie(path);
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(store->cluster_id(), cluster);
  auto found = store->Lookup(sub, "f");
  ASSERT_OK(found);
  EXPECT_EQ(found->ino, file);
  EXPECT_EQ(found->chunk_size, 4096u);
  EXPECT_EQ(found->mtime, T(6));
  auto x = store->GetXattr(file, "user.k");
  ASSERT_OK(x);
  EXPECT_EQ(*x, std::string("v\0w", 3));
  EXPECT_CODE(store->Lookup(sub, "g"), kNotFound);
  MakeNodeArgs h{sub, "h", S_IFREG | 0600, 1, 2, 0, true, "", 4096};
  auto rh = store->MakeNode(OpToken{}, h, T(10));
  ASSERT_OK(rh);
  EXPECT_GT(rh->attr.ino.value(), file.value() + 1);
  auto check = store->Check();
  ASSERT_OK(check);
  EXPECT_TRUE(check->empty());
}

TEST(SqliteStoreOpen, UsesWalJournal) {
  TempDir dir;
  std::string path = dir.File("meta.db");
  auto store = OpenOrDie(path);
  ASSERT_NE(store, nullptr);
  auto raw = sqlite::Db::Open(path, std::chrono::milliseconds(1000));
  ASSERT_OK(raw);
  auto q = raw->Query("PRAGMA journal_mode");
  ASSERT_OK(q);
  auto row = (*q)->Step();
  ASSERT_OK(row);
  ASSERT_TRUE(*row);
  EXPECT_EQ((*q)->Bytes(0), "wal");
}

TEST(SqliteStoreOpen, RefusesNewerSchemaVersion) {
  TempDir dir;
  std::string path = dir.File("meta.db");
  ASSERT_NE(OpenOrDie(path), nullptr);
  {
    auto raw = sqlite::Db::Open(path, std::chrono::milliseconds(1000));
    ASSERT_OK(raw);
    ASSERT_OK(raw->Exec("PRAGMA user_version = 99"));
  }
  auto store = OpenSqliteStore(path);
  ASSERT_EQ(store.status().code(), StatusCode::kMetaSchema);
  EXPECT_NE(store.status().message().find("newer"), std::string::npos) << store.status().ToString();
}

TEST(SqliteStoreOpen, RefusesForeignDatabase) {
  TempDir dir;
  std::string path = dir.File("other.db");
  {
    auto raw = sqlite::Db::Open(path, std::chrono::milliseconds(1000));
    ASSERT_OK(raw);
    ASSERT_OK(raw->Exec("CREATE TABLE something (x INTEGER)"));
  }
  EXPECT_CODE(OpenSqliteStore(path), kMetaSchema);
}

struct KeyCollector {
  std::vector<std::string> keys;
  template <typename Field>
  void operator()(std::string_view key, Field&, std::string_view help) {
    EXPECT_FALSE(help.empty()) << key;
    keys.emplace_back(key);
  }
};

TEST(SqliteStoreOpen, OptionsAreValidatedAndListed) {
  StoreOptions bad;
  bad.sqlite.sync = "sometimes";
  EXPECT_CODE(OpenSqliteStore(":memory:", bad), kInvalidArgument);
  StoreOptions full;
  full.sqlite.sync = "full";
  EXPECT_OK(OpenSqliteStore(":memory:", full));

  KeyCollector collector;
  StoreOptions opts;
  opts.sqlite.Visit(collector);
  EXPECT_EQ(collector.keys, (std::vector<std::string>{"sync", "cache-size", "busy-timeout",
                                                      "checkpoint", "reserve"}));
}

TEST(SqliteStoreOpen, UnopenablePathFails) {
  EXPECT_CODE(OpenSqliteStore("/nonexistent-dir/for/sure/meta.db"), kMetaDatabase);
}

// ---- MakeNode ----

TEST_P(StoreTest, MakeNodeCreatesEveryType) {
  struct Case {
    const char* name;
    uint32_t mode;
  };
  for (const Case& c :
       {Case{"reg", S_IFREG | 0640}, Case{"dir", S_IFDIR | 0750}, Case{"fifo", S_IFIFO | 0600},
        Case{"sock", S_IFSOCK | 0600}, Case{"chr", S_IFCHR | 0600}, Case{"blk", S_IFBLK | 0600}}) {
    MakeNodeArgs a{kRootInode, c.name, c.mode, 7, 8, 0x0801, true, "", 1 << 20};
    auto r = store_->MakeNode(OpToken{}, a, T(50, 5));
    ASSERT_OK(r);
    EXPECT_TRUE(r->created);
    const InodeAttr& attr = r->attr;
    EXPECT_EQ(attr.mode, c.mode) << c.name;
    EXPECT_EQ(attr.uid, 7u);
    EXPECT_EQ(attr.gid, 8u);
    EXPECT_EQ(attr.size, 0u);
    EXPECT_EQ(attr.nlink, S_ISDIR(c.mode) ? 2u : 1u) << c.name;
    EXPECT_EQ(attr.rdev, (S_ISCHR(c.mode) || S_ISBLK(c.mode)) ? 0x0801u : 0u) << c.name;
    EXPECT_EQ(attr.chunk_size, S_ISREG(c.mode) ? uint64_t{1 << 20} : 0u) << c.name;
    EXPECT_EQ(attr.atime, T(50, 5));
    EXPECT_EQ(attr.mtime, T(50, 5));
    EXPECT_EQ(attr.ctime, T(50, 5));
    EXPECT_EQ(Attr(attr.ino).mode, c.mode);
  }
  MakeNodeArgs l{kRootInode, "lnk", S_IFLNK | 0777, 0, 0, 0, true, "some/where", 0};
  auto r = store_->MakeNode(OpToken{}, l, T(60));
  ASSERT_OK(r);
  EXPECT_EQ(r->attr.size, 10u);
  EXPECT_EQ(*store_->ReadLink(r->attr.ino), "some/where");

  InodeAttr root = Attr(kRootInode);
  EXPECT_EQ(root.nlink, 3u);  // one subdirectory
  EXPECT_EQ(root.mtime, T(60));
  EXPECT_EQ(root.ctime, T(60));
  EXPECT_EQ(root.size, 0u);
  EXPECT_TRUE(CheckProblems().empty());
}

TEST_P(StoreTest, MakeNodeRejectsBadNames) {
  for (const std::string& bad : {std::string(""), std::string("."), std::string(".."),
                                 std::string("a/b"), std::string("a\0b", 3)}) {
    EXPECT_CODE(Make(kRootInode, bad, S_IFREG | 0644), kInvalidArgument) << bad;
  }
  EXPECT_CODE(Make(kRootInode, std::string(256, 'n'), S_IFREG | 0644), kNameTooLong);
  EXPECT_OK(Make(kRootInode, std::string(255, 'n'), S_IFREG | 0644));
}

TEST_P(StoreTest, MakeNodeParentErrors) {
  InodeId file = MkFile(kRootInode, "f");
  EXPECT_CODE(Make(InodeId(999), "x", S_IFREG | 0644), kNotFound);
  EXPECT_CODE(Make(file, "x", S_IFREG | 0644), kNotDirectory);
  InodeId gone = MkDir(kRootInode, "gone");
  ASSERT_OK(store_->Rmdir(OpToken{}, kRootInode, "gone", T(101)));
  EXPECT_CODE(Make(gone, "x", S_IFDIR | 0755), kNotFound);
}

TEST_P(StoreTest, MakeNodeOnExistingName) {
  InodeId file = MkFile(kRootInode, "f");
  MkDir(kRootInode, "d");
  MakeNodeArgs l{kRootInode, "l", S_IFLNK | 0777, 0, 0, 0, true, "t", 0};
  ASSERT_OK(store_->MakeNode(OpToken{}, l, T(1)));

  EXPECT_CODE(Make(kRootInode, "f", S_IFREG | 0644), kExists);  // exclusive
  EXPECT_CODE(Make(kRootInode, "f", S_IFDIR | 0755), kExists);
  EXPECT_CODE(Make(kRootInode, "d", S_IFDIR | 0755), kExists);
  EXPECT_CODE(Make(kRootInode, "d", S_IFIFO | 0644), kExists);
  l.name = "f";
  EXPECT_CODE(store_->MakeNode(OpToken{}, l, T(1)), kExists);

  const Timespec dir_mtime = Attr(kRootInode).mtime;
  MakeNodeArgs open{kRootInode, "f", S_IFREG | 0600, 0, 0, 0, false, "", 100};
  auto again = store_->MakeNode(OpToken{}, open, T(200));
  ASSERT_OK(again);
  EXPECT_FALSE(again->created);
  EXPECT_EQ(again->attr.ino, file);
  EXPECT_EQ(again->attr.mode, uint32_t{S_IFREG | 0644});  // unchanged
  EXPECT_EQ(again->attr.ctime, T(100));
  open.name = "d";
  EXPECT_CODE(store_->MakeNode(OpToken{}, open, T(200)), kIsDirectory);
  open.name = "l";
  EXPECT_CODE(store_->MakeNode(OpToken{}, open, T(200)), kExists);
  EXPECT_EQ(Attr(kRootInode).mtime, dir_mtime);  // failed creates change nothing
}

TEST_P(StoreTest, MakeNodeArgumentErrors) {
  MakeNodeArgs f{kRootInode, "f", S_IFREG | 0644, 0, 0, 0, true, "", 0};
  EXPECT_CODE(store_->MakeNode(OpToken{}, f, T(1)), kInvalidArgument);  // no chunk size
  MakeNodeArgs l{kRootInode, "l", S_IFLNK | 0777, 0, 0, 0, true, std::string(4096, 't'), 0};
  EXPECT_CODE(store_->MakeNode(OpToken{}, l, T(1)), kNameTooLong);
  l.link_target = std::string(4095, 't');
  auto r = store_->MakeNode(OpToken{}, l, T(1));
  ASSERT_OK(r);
  EXPECT_EQ(r->attr.size, 4095u);
  MakeNodeArgs none{kRootInode, "x", 0644, 0, 0, 0, true, "", 0};
  EXPECT_CODE(store_->MakeNode(OpToken{}, none, T(1)), kInvalidArgument);  // no type
}

TEST_P(StoreTest, InodeNumbersAreNeverReused) {
  InodeId prev = kRootInode;
  for (int round = 0; round < 20; ++round) {
    InodeId ino = MkFile(kRootInode, "f");
    // The highest number was freed, yet not reused (engine.h: ids ascend but
    // need not be dense; PostgreSQL hands them out from blocks).
    EXPECT_GT(ino.value(), prev.value());
    prev = ino;
    ASSERT_OK(store_->Unlink(OpToken{}, kRootInode, "f", T(101)));
  }
}

// ---- lookups ----

TEST_P(StoreTest, LookupGetAttrReadLink) {
  InodeId d = MkDir(kRootInode, "d");
  InodeId f = MkFile(d, "f");
  EXPECT_EQ(Find(d, "f"), f);
  EXPECT_CODE(store_->Lookup(d, "missing"), kNotFound);
  EXPECT_CODE(store_->Lookup(f, "x"), kNotDirectory);
  EXPECT_CODE(store_->Lookup(InodeId(12345), "x"), kNotFound);
  EXPECT_CODE(store_->Lookup(d, std::string(256, 'x')), kNameTooLong);
  EXPECT_EQ(Find(d, "."), d);
  EXPECT_EQ(Find(d, ".."), kRootInode);
  EXPECT_EQ(Find(kRootInode, ".."), kRootInode);
  EXPECT_CODE(store_->GetAttr(InodeId(12345)), kNotFound);
  EXPECT_CODE(store_->GetAttr(InodeId()), kNotFound);
  EXPECT_CODE(store_->ReadLink(f), kInvalidArgument);
  EXPECT_CODE(store_->ReadLink(InodeId(12345)), kNotFound);
  // Reads never touch atime.
  InodeAttr before = Attr(f);
  (void)store_->ReadDir(d, 0, 10, true, nullptr);
  EXPECT_EQ(Attr(f).atime, before.atime);
}

// ---- Unlink and Rmdir ----

TEST_P(StoreTest, UnlinkRemovesAndFrees) {
  InodeId d = MkDir(kRootInode, "d");
  InodeId f = MkFile(d, "f");
  auto targets = testing::RegisterTargets(*store_, 1, 2);
  ASSERT_OK(store_->Allocate(OpToken{}, f, {0, 1}, targets));
  ASSERT_OK(store_->SetXattr(OpToken{}, f, "user.a", "1", 0, T(101)));
  ASSERT_OK(store_->Unlink(OpToken{}, d, "f", T(300)));
  EXPECT_CODE(store_->Lookup(d, "f"), kNotFound);
  EXPECT_CODE(store_->GetAttr(f), kNotFound);
  EXPECT_EQ(Attr(d).mtime, T(300));
  EXPECT_EQ(Attr(d).ctime, T(300));
  StoreCounts c = Counts();
  EXPECT_EQ(c.chunks, 0u);
  EXPECT_EQ(c.garbage_chunks, 4u);       // 2 chunks x 2 replicas
  EXPECT_TRUE(CheckProblems().empty());  // xattrs went with the inode

  EXPECT_CODE(store_->Unlink(OpToken{}, d, "f", T(301)), kNotFound);
  EXPECT_CODE(store_->Unlink(OpToken{}, kRootInode, "d", T(301)), kIsDirectory);
  EXPECT_CODE(store_->Unlink(OpToken{}, InodeId(999), "f", T(301)), kNotFound);
  InodeId g = MkFile(d, "g");
  EXPECT_CODE(store_->Unlink(OpToken{}, g, "x", T(301)), kNotDirectory);
  EXPECT_CODE(store_->Unlink(OpToken{}, d, "..", T(301)), kInvalidArgument);
}

TEST_P(StoreTest, UnlinkOneOfTwoHardLinks) {
  InodeId f = MkFile(kRootInode, "f");
  ASSERT_OK(store_->Link(OpToken{}, f, kRootInode, "g", T(200)));
  InodeId unlinked;
  ASSERT_OK(store_->Unlink(OpToken{}, kRootInode, "f", T(300), nullptr, &unlinked));
  EXPECT_EQ(unlinked, f);
  InodeAttr a = Attr(f);
  EXPECT_EQ(a.nlink, 1u);
  EXPECT_EQ(a.ctime, T(300));
  EXPECT_EQ(Find(kRootInode, "g"), f);
  EXPECT_TRUE(CheckProblems().empty());
}

TEST_P(StoreTest, RmdirCases) {
  InodeId d = MkDir(kRootInode, "d");
  InodeId sub = MkDir(d, "sub");
  MkFile(kRootInode, "f");
  EXPECT_EQ(Attr(d).nlink, 3u);
  EXPECT_CODE(store_->Rmdir(OpToken{}, kRootInode, "d", T(200)), kNotEmpty);
  EXPECT_CODE(store_->Rmdir(OpToken{}, kRootInode, "f", T(200)), kNotDirectory);
  EXPECT_CODE(store_->Rmdir(OpToken{}, kRootInode, "nope", T(200)), kNotFound);
  EXPECT_CODE(store_->Rmdir(OpToken{}, InodeId(999), "x", T(200)), kNotFound);
  EXPECT_CODE(store_->Rmdir(OpToken{}, kRootInode, ".", T(200)), kInvalidArgument);
  ASSERT_OK(store_->Rmdir(OpToken{}, d, "sub", T(300)));
  EXPECT_CODE(store_->GetAttr(sub), kNotFound);
  InodeAttr da = Attr(d);
  EXPECT_EQ(da.nlink, 2u);
  EXPECT_EQ(da.mtime, T(300));
  ASSERT_OK(store_->Rmdir(OpToken{}, kRootInode, "d", T(400)));
  EXPECT_EQ(Attr(kRootInode).nlink, 2u);
  EXPECT_TRUE(CheckProblems().empty());
}

TEST_P(StoreTest, RmdirOfOpenDirectoryKeepsItUntilRelease) {
  InodeId d = MkDir(kRootInode, "d");
  SessionId s = NewSession();
  auto h = store_->Open(OpToken{}, s, d, O_RDONLY | O_DIRECTORY, T(150));
  ASSERT_OK(h);
  ASSERT_OK(store_->Rmdir(OpToken{}, kRootInode, "d", T(200)));
  InodeAttr a = Attr(d);
  EXPECT_EQ(a.nlink, 0u);
  EXPECT_CODE(Make(d, "x", S_IFREG | 0644), kNotFound);
  EXPECT_CODE(store_->Lookup(d, "x"), kNotFound);
  EXPECT_TRUE(CheckProblems().empty());
  ASSERT_OK(store_->Release(OpToken{}, h->handle));
  EXPECT_CODE(store_->GetAttr(d), kNotFound);
  EXPECT_TRUE(CheckProblems().empty());
}

// ---- Link ----

TEST_P(StoreTest, LinkCases) {
  InodeId d = MkDir(kRootInode, "d");
  InodeId f = MkFile(kRootInode, "f");
  auto l = store_->Link(OpToken{}, f, d, "f2", T(200));
  ASSERT_OK(l);
  EXPECT_EQ(l->nlink, 2u);
  EXPECT_EQ(l->ctime, T(200));
  EXPECT_EQ(Attr(d).mtime, T(200));
  EXPECT_EQ(Find(d, "f2"), f);
  EXPECT_CODE(store_->Link(OpToken{}, d, kRootInode, "d2", T(201)), kNotPermitted);
  EXPECT_CODE(store_->Link(OpToken{}, f, d, "f2", T(201)), kExists);
  EXPECT_CODE(store_->Link(OpToken{}, InodeId(999), d, "z", T(201)), kNotFound);
  EXPECT_CODE(store_->Link(OpToken{}, f, InodeId(999), "z", T(201)), kNotFound);
  EXPECT_CODE(store_->Link(OpToken{}, f, f, "z", T(201)), kNotDirectory);
  EXPECT_CODE(store_->Link(OpToken{}, f, d, "", T(201)), kInvalidArgument);
  EXPECT_TRUE(CheckProblems().empty());
}

TEST_P(StoreTest, LinkToUnlinkedOpenFileFails) {
  InodeId f = MkFile(kRootInode, "f");
  SessionId s = NewSession();
  ASSERT_OK(store_->Open(OpToken{}, s, f, O_RDWR, T(150)));
  ASSERT_OK(store_->Unlink(OpToken{}, kRootInode, "f", T(200)));
  EXPECT_CODE(store_->Link(OpToken{}, f, kRootInode, "back", T(201)), kNotFound);
}

// ---- SetAttr ----

TEST_P(StoreTest, SetAttrFields) {
  InodeId f = MkFile(kRootInode, "f");
  SetAttrArgs a;
  a.ino = f;
  a.mask = kSetMode | kSetUid | kSetGid;
  a.mode = S_IFDIR | 04711;  // the type bits are ignored
  a.uid = 5;
  a.gid = 6;
  auto r = store_->SetAttr(OpToken{}, a, T(200));
  ASSERT_OK(r);
  EXPECT_EQ(r->mode, uint32_t{S_IFREG | 04711});
  EXPECT_EQ(r->uid, 5u);
  EXPECT_EQ(r->gid, 6u);
  EXPECT_EQ(r->ctime, T(200));
  EXPECT_EQ(r->mtime, T(100));
  EXPECT_EQ(r->atime, T(100));

  a.mask = kSetAtime | kSetMtime;
  a.atime = T(7, 1);
  a.mtime = T(8, 2);
  r = store_->SetAttr(OpToken{}, a, T(300));
  ASSERT_OK(r);
  EXPECT_EQ(r->atime, T(7, 1));
  EXPECT_EQ(r->mtime, T(8, 2));
  EXPECT_EQ(r->ctime, T(300));

  a.mask = kSetAtimeNow | kSetMtimeNow;
  r = store_->SetAttr(OpToken{}, a, T(400));
  ASSERT_OK(r);
  EXPECT_EQ(r->atime, T(400));
  EXPECT_EQ(r->mtime, T(400));

  a.mask = kSetCtime;
  a.ctime = T(9);
  r = store_->SetAttr(OpToken{}, a, T(500));
  ASSERT_OK(r);
  EXPECT_EQ(r->ctime, T(9));
  EXPECT_EQ(Attr(f).ctime, T(9));

  a.mask = 0;
  r = store_->SetAttr(OpToken{}, a, T(600));
  ASSERT_OK(r);
  EXPECT_EQ(r->ctime, T(9));  // nothing asked, nothing changed

  a.ino = InodeId(999);
  a.mask = kSetMode;
  EXPECT_CODE(store_->SetAttr(OpToken{}, a, T(700)), kNotFound);
}

TEST_P(StoreTest, SetAttrSizeOnNonFiles) {
  InodeId d = MkDir(kRootInode, "d");
  MakeNodeArgs l{kRootInode, "l", S_IFLNK | 0777, 0, 0, 0, true, "tgt", 0};
  auto link = store_->MakeNode(OpToken{}, l, T(1));
  ASSERT_OK(link);
  SetAttrArgs a;
  a.mask = kSetSize;
  a.size = 10;
  a.ino = d;
  EXPECT_CODE(store_->SetAttr(OpToken{}, a, T(200)), kIsDirectory);
  a.ino = link->attr.ino;
  EXPECT_CODE(store_->SetAttr(OpToken{}, a, T(200)), kInvalidArgument);
  a.ino = MkFile(kRootInode, "f");
  a.size = uint64_t{1} << 63;
  EXPECT_CODE(store_->SetAttr(OpToken{}, a, T(200)), kFileTooBig);
}

TEST_P(StoreTest, TruncationDropsWholeChunksPastTheBoundary) {
  InodeId f = MkFile(kRootInode, "f");  // chunk size 100
  auto targets = testing::RegisterTargets(*store_, 1, 2);
  ASSERT_OK(store_->Allocate(OpToken{}, f, {0, 1, 2, 3, 4, 5}, targets));
  CommitArgs c;
  c.ino = f;
  c.size = 550;
  ASSERT_OK(store_->Commit(OpToken{}, c, false, T(150)));
  auto indices = [&]() {
    std::vector<uint64_t> out;
    auto l = store_->GetLayout(f, 0, 100);
    EXPECT_OK(l);
    if (l.ok()) {
      for (const ChunkLayout& cl : *l) out.push_back(cl.index);
    }
    return out;
  };
  SetAttrArgs a;
  a.ino = f;
  a.mask = kSetSize;
  a.size = 250;  // chunk 2 keeps [200, 250); chunks 3.. go
  auto r = store_->SetAttr(OpToken{}, a, T(200));
  ASSERT_OK(r);
  EXPECT_EQ(r->size, 250u);
  EXPECT_EQ(r->mtime, T(200));
  EXPECT_EQ(r->ctime, T(200));
  EXPECT_EQ(indices(), (std::vector<uint64_t>{0, 1, 2}));
  EXPECT_EQ(Counts().garbage_chunks, 6u);  // 3 chunks x 2 replicas

  a.size = 200;  // on a boundary: chunk 2 goes entirely
  ASSERT_OK(store_->SetAttr(OpToken{}, a, T(201)));
  EXPECT_EQ(indices(), (std::vector<uint64_t>{0, 1}));

  // Growing drops chunks written past the old end but never committed.
  ASSERT_OK(store_->Allocate(OpToken{}, f, {7}, targets));
  a.size = 1000;
  ASSERT_OK(store_->SetAttr(OpToken{}, a, T(202)));
  EXPECT_EQ(indices(), (std::vector<uint64_t>{0, 1}));
  EXPECT_EQ(Attr(f).size, 1000u);

  // Same size: chunks past it (written, never committed) still go.
  ASSERT_OK(store_->Allocate(OpToken{}, f, {9, 12}, targets));  // 9 lies inside 1000 bytes
  ASSERT_OK(store_->SetAttr(OpToken{}, a, T(203)));
  EXPECT_EQ(indices(), (std::vector<uint64_t>{0, 1, 9}));

  a.size = 0;
  ASSERT_OK(store_->SetAttr(OpToken{}, a, T(204)));
  EXPECT_TRUE(indices().empty());
  EXPECT_EQ(Counts().garbage_chunks, 18u);
  EXPECT_EQ(Counts().chunks, 0u);
  EXPECT_TRUE(CheckProblems().empty());
}

// ---- xattrs ----

TEST_P(StoreTest, XattrCases) {
  InodeId f = MkFile(kRootInode, "f");
  std::string binary("\0\x01\xff value \0", 10);
  ASSERT_OK(store_->SetXattr(OpToken{}, f, "user.b", binary, 0, T(200)));
  EXPECT_EQ(Attr(f).ctime, T(200));
  ASSERT_OK(store_->SetXattr(OpToken{}, f, "user.a", "", 0, T(201)));
  EXPECT_EQ(*store_->GetXattr(f, "user.b"), binary);
  EXPECT_EQ(*store_->GetXattr(f, "user.a"), "");
  EXPECT_EQ(*store_->ListXattr(f), (std::vector<std::string>{"user.a", "user.b"}));

  EXPECT_CODE(store_->SetXattr(OpToken{}, f, "user.a", "x", XattrFlags::kCreate, T(202)), kExists);
  EXPECT_CODE(store_->SetXattr(OpToken{}, f, "user.c", "x", XattrFlags::kReplace, T(202)), kNoData);
  ASSERT_OK(store_->SetXattr(OpToken{}, f, "user.a", "new", XattrFlags::kReplace, T(203)));
  EXPECT_EQ(*store_->GetXattr(f, "user.a"), "new");
  ASSERT_OK(store_->SetXattr(OpToken{}, f, "user.c", "c", XattrFlags::kCreate, T(204)));
  EXPECT_CODE(store_->GetXattr(f, "user.zzz"), kNoData);
  EXPECT_CODE(store_->RemoveXattr(OpToken{}, f, "user.zzz", T(205)), kNoData);
  ASSERT_OK(store_->RemoveXattr(OpToken{}, f, "user.c", T(206)));
  EXPECT_EQ(Attr(f).ctime, T(206));
  EXPECT_CODE(store_->GetXattr(f, "user.c"), kNoData);

  EXPECT_CODE(store_->SetXattr(OpToken{}, f, std::string(256, 'n'), "v", 0, T(207)), kRange);
  EXPECT_CODE(store_->SetXattr(OpToken{}, f, "", "v", 0, T(207)), kRange);
  EXPECT_OK(store_->SetXattr(OpToken{}, f, std::string(255, 'n'), "v", 0, T(207)));
  EXPECT_CODE(store_->SetXattr(OpToken{}, f, "user.big", std::string(kMaxXattrValueLength + 1, 'v'),
                               0, T(207)),
              kTooBig);
  EXPECT_OK(store_->SetXattr(OpToken{}, f, "user.big", std::string(kMaxXattrValueLength, 'v'), 0,
                             T(207)));
  EXPECT_CODE(store_->GetXattr(InodeId(999), "user.a"), kNotFound);
  EXPECT_CODE(store_->ListXattr(InodeId(999)), kNotFound);
  EXPECT_CODE(store_->SetXattr(OpToken{}, InodeId(999), "user.a", "v", 0, T(1)), kNotFound);
  // Directories carry xattrs too.
  ASSERT_OK(store_->SetXattr(OpToken{}, kRootInode, "user.root", "r", 0, T(208)));
  EXPECT_EQ(*store_->GetXattr(kRootInode, "user.root"), "r");
}

}  // namespace
}  // namespace t0fs::meta

namespace t0fs::meta {
namespace {

// The chunk size of a new file is its creator's choice (the service's policy,
// meta/policy.h, picks it from the directory); directories pass theirs on to
// subdirectories; other types have none.
TEST_P(StoreTest, ChunkSizeIsTheCallersForFilesAndInheritedByDirectories) {
  InodeId fixed = MkDir(kRootInode, "fixed");
  ASSERT_OK(store_->SetObjective(fixed, Objective{1, Placement::kLocal, {}, 8 << 20, {}}, true));
  InodeId sub = MkDir(fixed, "sub");
  EXPECT_EQ(Attr(sub).chunk_size, uint64_t{8} << 20);
  MakeNodeArgs f{sub, "f", S_IFREG | 0644, 0, 0, 0, true, "", 12288};
  auto file = store_->MakeNode(OpToken{}, f, T(2));
  ASSERT_OK(file);
  EXPECT_EQ(file->attr.chunk_size, 12288u);
  MakeNodeArgs p{sub, "p", S_IFIFO | 0644, 0, 0, 0, true, "", 12288};
  auto fifo = store_->MakeNode(OpToken{}, p, T(2));
  ASSERT_OK(fifo);
  EXPECT_EQ(fifo->attr.chunk_size, 0u);
}

T0FS_STORE_TEST_SUITE(StoreTest);

}  // namespace
}  // namespace t0fs::meta

namespace t0fs::meta {
namespace {

// ---- leases (several meta servers on one store) ----

TEST_P(StoreTest, LeaseHasOneHolderUntilItExpires) {
  using std::chrono::milliseconds;
  const milliseconds ttl(5000);
  auto a = store_->AcquireLease("planner", "server-a", T(100), ttl);
  ASSERT_OK(a);
  EXPECT_TRUE(*a);
  // Another holder waits while it runs; the holder renews it.
  auto b = store_->AcquireLease("planner", "server-b", T(104, 999999999), ttl);
  ASSERT_OK(b);
  EXPECT_FALSE(*b);
  auto renewed = store_->AcquireLease("planner", "server-a", T(104), ttl);
  ASSERT_OK(renewed);
  EXPECT_TRUE(*renewed);  // now until 109
  b = store_->AcquireLease("planner", "server-b", T(108, 500000000), ttl);
  ASSERT_OK(b);
  EXPECT_FALSE(*b);
  // Not renewed in time (server-a died): server-b takes it over.
  b = store_->AcquireLease("planner", "server-b", T(109), ttl);
  ASSERT_OK(b);
  EXPECT_TRUE(*b);
  a = store_->AcquireLease("planner", "server-a", T(110), ttl);
  ASSERT_OK(a);
  EXPECT_FALSE(*a);
  // Leases of different names are independent.
  auto other = store_->AcquireLease("gc", "server-a", T(110), ttl);
  ASSERT_OK(other);
  EXPECT_TRUE(*other);
  EXPECT_CODE(store_->AcquireLease("", "server-a", T(110), ttl), kInvalidArgument);
  EXPECT_CODE(store_->AcquireLease("gc", "server-a", T(110), milliseconds(0)), kInvalidArgument);
  EXPECT_TRUE(CheckProblems().empty());
}

// Chunks a writer waits for, marked by any meta server for the one that
// plans repairs: a mark lasts until its end, is extended by marking again,
// and a full set refuses new ones.
TEST_P(StoreTest, UrgentMarksLastUntilTheirEndAndAreBounded) {
  auto urgent = [&](Timespec now) {
    auto chunks = store_->UrgentChunks(now);
    EXPECT_OK(chunks);
    std::set<uint64_t> out;
    if (chunks.ok()) {
      for (ChunkId c : *chunks) out.insert(c.value());
    }
    return out;
  };
  EXPECT_TRUE(urgent(T(100)).empty());
  auto added = store_->MarkUrgent(ChunkId(7), T(220), T(100), 2);
  ASSERT_OK(added);
  EXPECT_TRUE(*added);
  added = store_->MarkUrgent(ChunkId(9), T(150), T(100), 2);
  ASSERT_OK(added);
  EXPECT_TRUE(*added);
  EXPECT_EQ(urgent(T(149)), (std::set<uint64_t>{7, 9}));
  EXPECT_CODE(store_->MarkUrgent(ChunkId(11), T(300), T(120), 2), kBusy);  // two live: full
  added = store_->MarkUrgent(ChunkId(9), T(260), T(120), 2);               // marked: extended
  ASSERT_OK(added);
  EXPECT_FALSE(*added);
  EXPECT_EQ(urgent(T(230)), (std::set<uint64_t>{9}));          // 7's ended at 220
  added = store_->MarkUrgent(ChunkId(11), T(300), T(230), 2);  // room again
  ASSERT_OK(added);
  EXPECT_TRUE(*added);
  EXPECT_EQ(urgent(T(230)), (std::set<uint64_t>{9, 11}));
  EXPECT_TRUE(urgent(T(300)).empty());
  EXPECT_TRUE(CheckProblems().empty());
}

TEST_P(StoreTest, TheFirstSecretClaimsTheStore) {
  ASSERT_OK(store_->ClaimSecret("aaaa"));
  ASSERT_OK(store_->ClaimSecret("aaaa"));  // the same cluster, restarted
  Status other = store_->ClaimSecret("bbbb");
  EXPECT_EQ(other.code(), StatusCode::kInvalidArgument) << other.ToString();
  EXPECT_NE(other.message().find(store_->cluster_id()), std::string::npos) << other.ToString();
  ASSERT_OK(store_->ClaimSecret("aaaa"));  // a refusal changed nothing
}

}  // namespace
}  // namespace t0fs::meta
