// An existing database opens: a schema-2 database written by the code before
// the engine seam (testdata/v2_store.sql, made through a real mount) is
// migrated in place at open, keeps every name, attribute, layout, session and
// listing cookie, passes Check and takes new operations.
#include <fcntl.h>
#include <sys/stat.h>

#include <fstream>
#include <sstream>

#include "meta/store/sqlite/sqlite_db.h"
#include "meta/store/sqlite/sqlite_schema.h"
#include "meta/store/store_test_util.h"

namespace t0fs::meta {
namespace {

using testing::T;
using testing::TempDir;

std::string ReadFixture(const std::string& name) {
  std::ifstream in(std::string(T0FS_STORE_TESTDATA) + "/" + name);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Writes the fixture into a new database file at `path` (raw SQL, as the old
// code left it) and returns its user_version afterwards.
int64_t LoadFixture(const std::string& path, const std::string& name) {
  auto raw = sqlite::Db::Open(path, std::chrono::milliseconds(1000));
  EXPECT_OK(raw);
  if (!raw.ok()) return -1;
  std::string script = ReadFixture(name);
  EXPECT_FALSE(script.empty()) << name;
  EXPECT_OK(raw->Exec(script));
  auto v = raw->QueryInt("PRAGMA user_version");
  return v.ok() ? v->value_or(-1) : -1;
}

int64_t UserVersion(const std::string& path) {
  auto raw = sqlite::Db::Open(path, std::chrono::milliseconds(1000));
  if (!raw.ok()) return -1;
  auto v = raw->QueryInt("PRAGMA user_version");
  return v.ok() ? v->value_or(-1) : -1;
}

InodeId Walk(MetaStore& store, std::initializer_list<const char*> path) {
  InodeId cur = kRootInode;
  for (const char* name : path) {
    auto attr = store.Lookup(cur, name);
    if (!attr.ok()) return InodeId();
    cur = attr->ino;
  }
  return cur;
}

std::vector<DirEntry> ListAll(MetaStore& store, InodeId dir, uint64_t cookie = 0) {
  std::vector<DirEntry> out;
  bool eof = false;
  while (!eof) {
    auto page = store.ReadDir(dir, cookie, 7, false, &eof);
    EXPECT_OK(page);
    if (!page.ok()) break;
    for (const DirEntry& e : *page) {
      out.push_back(e);
      cookie = e.cookie;
    }
  }
  return out;
}

TEST(SqliteMigration, SchemaTwoDatabaseOpensAndKeepsEverything) {
  TempDir dir;
  const std::string path = dir.File("meta.db");
  ASSERT_EQ(LoadFixture(path, "v2_store.sql"), 2);
  auto store = testing::OpenOrDie(path);
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(UserVersion(path), sqlite::kSchemaVersion);
  EXPECT_EQ(store->cluster_id(), "ab7bdd16-6eae-40a8-a9d0-bff2a9078e6a");
  auto problems = store->Check();
  ASSERT_OK(problems);
  EXPECT_TRUE(problems->empty()) << problems->front();

  // Names, hard links, symlinks, xattrs, sizes, layouts, objectives.
  InodeId hello = Walk(*store, {"a", "hello"});
  ASSERT_EQ(hello, InodeId(7));
  EXPECT_EQ(Walk(*store, {"d", "hardlink"}), hello);
  EXPECT_EQ(store->GetAttr(hello)->nlink, 2u);
  EXPECT_EQ(*store->GetXattr(hello, "user.k"), "value");
  EXPECT_EQ(*store->ReadLink(Walk(*store, {"d", "symlink"})), "../a/hello");
  EXPECT_TRUE(S_ISFIFO(store->Lookup(Walk(*store, {"d"}), "fifo")->mode));
  InodeId data = Walk(*store, {"a", "b", "data"});
  ASSERT_TRUE(data.valid());
  EXPECT_EQ(*store->GetXattr(data, "user.bin"), std::string("\0\xff\0", 3));
  auto data_attr = store->GetAttr(data);
  ASSERT_OK(data_attr);
  EXPECT_EQ(data_attr->size, 200000u);
  EXPECT_EQ(data_attr->chunk_size, 65536u);
  EXPECT_EQ(data_attr->placement, Placement::kSpread);
  auto layout = store->GetLayout(data, 0, 100);
  ASSERT_OK(layout);
  ASSERT_EQ(layout->size(), 4u);
  EXPECT_EQ((*layout)[3].index, 3u);
  EXPECT_EQ((*layout)[3].replicas.at(0).node, NodeId(1));
  EXPECT_EQ(store->GetObjective(Walk(*store, {"a", "b", "after-objective"}))->placement,
            Placement::kSpread);
  // Version 4: no protection goal on anything that came over; one can be set.
  EXPECT_EQ(data_attr->protect, Protection{});
  const Protection protect{ProtectKind::kReplicas, 3, 0, 600, KeepLocal::kKeep};
  Objective objective = *store->GetObjective(data);
  objective.protect = protect;
  ASSERT_OK(store->SetObjective(data, objective, false));
  EXPECT_EQ(store->GetAttr(data)->protect, protect);
  objective.protect =
      Protection{};  // (else the check below names it: changed long ago, unprotected)
  ASSERT_OK(store->SetObjective(data, objective, false));
  EXPECT_EQ(Walk(*store, {"a", "moved"}), InodeId(20));
  EXPECT_FALSE(Walk(*store, {"empty"}).valid());

  // "..": the parent of every directory came over.
  InodeId c = Walk(*store, {"a", "b", "c"});
  EXPECT_EQ(store->Lookup(c, "..")->ino, Walk(*store, {"a", "b"}));
  EXPECT_EQ(store->Lookup(Walk(*store, {"a"}), "..")->ino, kRootInode);
  EXPECT_EQ(store->Lookup(kRootInode, "..")->ino, kRootInode);

  // Listings keep their order, and cookies handed out by the old code still
  // resume where they did (cookie = old dentry id + 2).
  InodeId d = Walk(*store, {"d"});
  std::vector<DirEntry> listed = ListAll(*store, d);
  ASSERT_EQ(listed.size(), 2u + 3 + 27);
  EXPECT_EQ(listed[2].name, "hardlink");
  EXPECT_EQ(listed[2].cookie, 10u);
  EXPECT_EQ(listed[5].name, "f1");
  EXPECT_EQ(listed.back().name, "f30");
  std::vector<DirEntry> resumed = ListAll(*store, d, 21);  // after f9 (dentry 19)
  ASSERT_FALSE(resumed.empty());
  EXPECT_EQ(resumed.front().name, "f11");
  EXPECT_EQ(resumed.size(), 20u);

  // New operations: new names list last, inode numbers continue, renames
  // move parents, the killed mount's session still holds its unlinked file.
  MakeNodeArgs f{d, "new", S_IFREG | 0644, 0, 0, 0, true, "", 65536};
  auto made = store->MakeNode(OpToken{}, f, T(2000000000));
  ASSERT_OK(made);
  EXPECT_GT(made->attr.ino.value(), 45u);
  EXPECT_EQ(ListAll(*store, d).back().name, "new");
  ASSERT_OK(
      store->Rename(OpToken{}, Walk(*store, {"a", "b"}), "c", kRootInode, "c", 0, T(2000000001)));
  EXPECT_EQ(store->Lookup(c, "..")->ino, kRootInode);
  EXPECT_EQ(store->GetAttr(InodeId(44))->nlink, 0u);
  EXPECT_EQ(store->Counts()->open_handles, 1u);
  ASSERT_OK(store->CloseSession(SessionId(1)));
  EXPECT_CODE(store->GetAttr(InodeId(44)), kNotFound);
  problems = store->Check();
  ASSERT_OK(problems);
  EXPECT_TRUE(problems->empty()) << problems->front();

  // Reopening a migrated database does not migrate again.
  store.reset();
  store = testing::OpenOrDie(path);
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(Walk(*store, {"c"}), c);
}

// A schema-3 database (before the protection goal) opens as the current version: its
// inodes, objectives and all, read as having no goal, and a goal set
// afterwards persists.
TEST(SqliteMigration, SchemaThreeDatabaseGainsNoProtection) {
  TempDir dir;
  const std::string path = dir.File("meta.db");
  InodeId file;
  Objective objective;
  {
    auto store = testing::OpenOrDie(path);
    ASSERT_NE(store, nullptr);
    MakeNodeArgs f{kRootInode, "f", S_IFREG | 0644, 0, 0, 0, true, "", 65536};
    auto made = store->MakeNode(OpToken{}, f, T(1000));
    ASSERT_OK(made);
    file = made->attr.ino;
    objective = *store->GetObjective(file);
    objective.replicas = 2;
    objective.placement = Placement::kSpread;
    objective.protect = Protection{ProtectKind::kEc, 4, 2, 300, KeepLocal::kDrop};
    ASSERT_OK(store->SetObjective(file, objective, false));
  }
  {
    // What version 3 had: no protection columns (a goal set above is gone).
    auto raw = sqlite::Db::Open(path, std::chrono::milliseconds(1000));
    ASSERT_OK(raw);
    ASSERT_OK(raw->Exec(
        "ALTER TABLE inodes DROP COLUMN protect; "
        "ALTER TABLE inodes DROP COLUMN protect_within; "
        "ALTER TABLE chunks DROP COLUMN object_version; ALTER TABLE chunks DROP COLUMN ec; "
        "PRAGMA user_version = 3;"));
  }
  ASSERT_EQ(UserVersion(path), 3);
  auto store = testing::OpenOrDie(path);
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(UserVersion(path), sqlite::kSchemaVersion);
  auto attr = store->GetAttr(file);
  ASSERT_OK(attr);
  EXPECT_EQ(attr->protect, Protection{});
  EXPECT_EQ(attr->protect.kind, ProtectKind::kNone);
  EXPECT_EQ(attr->replicas, 2u);
  EXPECT_EQ(attr->placement, Placement::kSpread);
  EXPECT_EQ(store->GetAttr(kRootInode)->protect, Protection{});
  auto problems = store->Check();
  ASSERT_OK(problems);
  EXPECT_TRUE(problems->empty()) << problems->front();
  ASSERT_OK(store->SetObjective(file, objective, false));
  store.reset();
  store = testing::OpenOrDie(path);
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(store->GetAttr(file)->protect, objective.protect);
}

// A current store at `path` with one node, one volume and a file of one
// allocated chunk on it; returns the node's targets (empty on failure).
std::vector<ReplicaTarget> StoreWithOneChunk(const std::string& path) {
  auto store = testing::OpenOrDie(path);
  if (store == nullptr) return {};
  std::vector<ReplicaTarget> targets = testing::RegisterTargets(*store, 1, 1);
  MakeNodeArgs f{kRootInode, "f", S_IFREG | 0644, 0, 0, 0, true, "", 65536};
  auto made = store->MakeNode(OpToken{}, f, T(1000));
  if (!made.ok() || !store->Allocate(OpToken{}, made->attr.ino, {0}, targets).ok()) return {};
  return targets;
}

// The one chunk of `store` (StoreWithOneChunk's), as the repair scan sees it.
std::optional<ChunkReplicas> OnlyChunk(MetaStore& store) {
  bool eof = false;
  auto chunks = store.ScanReplicas(ChunkId(), 10, &eof);
  if (!chunks.ok() || chunks->size() != 1) return std::nullopt;
  return chunks->front();
}

// A schema-4 database (before object copies) opens as version 5: its chunks
// have no object copy, and one recorded afterwards persists.
TEST(SqliteMigration, SchemaFourDatabaseGainsNoObjectCopies) {
  TempDir dir;
  const std::string path = dir.File("meta.db");
  ASSERT_FALSE(StoreWithOneChunk(path).empty());
  {
    auto raw = sqlite::Db::Open(path, std::chrono::milliseconds(1000));
    ASSERT_OK(raw);
    ASSERT_OK(raw->Exec(
        "ALTER TABLE chunks DROP COLUMN object_version; ALTER TABLE chunks DROP COLUMN ec; "
        "PRAGMA user_version = 4;"));
  }
  auto store = testing::OpenOrDie(path);
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(UserVersion(path), sqlite::kSchemaVersion);
  auto chunk = OnlyChunk(*store);
  ASSERT_TRUE(chunk.has_value());
  EXPECT_EQ(chunk->object_version, 0u);
  ASSERT_OK(store->SetObjectVersion(chunk->chunk, 3));
  store.reset();
  store = testing::OpenOrDie(path);
  ASSERT_NE(store, nullptr);
  chunk = OnlyChunk(*store);
  ASSERT_TRUE(chunk.has_value());
  EXPECT_EQ(chunk->object_version, 3u);
}

// A schema-5 database (before erasure-coded cells) opens as version 6: its
// chunks have no cells, and cells recorded afterwards persist.
TEST(SqliteMigration, SchemaFiveDatabaseGainsNoCells) {
  TempDir dir;
  const std::string path = dir.File("meta.db");
  const std::vector<ReplicaTarget> targets = StoreWithOneChunk(path);
  ASSERT_FALSE(targets.empty());
  {
    auto raw = sqlite::Db::Open(path, std::chrono::milliseconds(1000));
    ASSERT_OK(raw);
    ASSERT_OK(raw->Exec("ALTER TABLE chunks DROP COLUMN ec; PRAGMA user_version = 5;"));
  }
  auto store = testing::OpenOrDie(path);
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(UserVersion(path), 6);
  auto chunk = OnlyChunk(*store);
  ASSERT_TRUE(chunk.has_value());
  EXPECT_EQ(chunk->ec, "");
  const ec::EcStripe stripe{
      1, 1, 4096, 1, 100, {{NodeId(1), targets[0].volume}, {NodeId(1), targets[0].volume}}};
  ASSERT_OK(store->RecordEcCells(chunk->chunk, stripe, true));
  store.reset();
  store = testing::OpenOrDie(path);
  ASSERT_NE(store, nullptr);
  chunk = OnlyChunk(*store);
  ASSERT_TRUE(chunk.has_value());
  EXPECT_EQ(chunk->ec, ec::FormatStripe(stripe));
}

}  // namespace
}  // namespace t0fs::meta
