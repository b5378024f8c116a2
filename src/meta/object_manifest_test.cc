// The object tier's manifest: one line per path of a protect=object file the
// bucket holds chunks of, with the keys to read it back by and whether every
// chunk's newest version is there.
#include "meta/object_manifest.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "common/object_key.h"
#include "meta/store/store_test_util.h"

namespace t0fs::meta {
namespace {

constexpr uint64_t kChunkBytes = 1 << 20;

class ObjectManifestTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = testing::OpenStoreOf("sqlite_memory", dir_);
    ASSERT_NE(store_, nullptr);
    node_ = testing::RegisterTargets(*store_, 1, 1);
    ASSERT_EQ(node_.size(), 1u);
  }

  // A directory or file `name` in `parent`; files under `protect` (and
  // replicas=1) when it is set.
  InodeId Make(InodeId parent, const std::string& name, uint32_t mode,
               ProtectKind protect = ProtectKind::kNone) {
    MakeNodeArgs a;
    a.parent = parent;
    a.name = name;
    a.mode = mode;
    a.chunk_size = kChunkBytes;
    auto made = store_->MakeNode(OpToken{}, a, testing::T(100));
    EXPECT_OK(made);
    if (!made.ok()) return InodeId();
    if (protect != ProtectKind::kNone) {
      Objective obj;
      obj.protect.kind = protect;
      EXPECT_OK(store_->SetObjective(made->attr.ino, obj, false));
    }
    return made->attr.ino;
  }
  // Chunks 0..versions.size()-1 of `file` written at those versions; the
  // file is `size` bytes. Returns their ids.
  std::vector<ChunkId> Write(InodeId file, const std::vector<uint64_t>& versions, uint64_t size) {
    std::vector<uint64_t> indices;
    for (uint64_t i = 0; i < versions.size(); ++i) indices.push_back(i);
    auto layout = store_->Allocate(OpToken{}, file, indices, node_);
    EXPECT_OK(layout);
    std::vector<ChunkId> ids;
    CommitArgs c{file, HandleId(), size, testing::T(110), {}};
    for (size_t i = 0; layout.ok() && i < layout->size(); ++i) {
      ids.push_back((*layout)[i].replicas.front().chunk);
      c.written.emplace_back(ids.back(), versions[i]);
    }
    EXPECT_OK(store_->Commit(OpToken{}, c, false, testing::T(110)));
    return ids;
  }
  // The manifest's lines by path, after checking its header.
  std::map<std::string, nlohmann::json> Manifest(ManifestCounts* counts = nullptr) {
    auto text = BuildObjectManifest(*store_, "cid", "pre/", testing::T(200), counts);
    EXPECT_OK(text);
    std::map<std::string, nlohmann::json> files;
    if (!text.ok()) return files;
    std::istringstream in(*text);
    std::string line;
    EXPECT_TRUE(std::getline(in, line));
    nlohmann::json header = nlohmann::json::parse(line);
    EXPECT_EQ(header["t0fs_object_manifest"], 1);
    EXPECT_EQ(header["cluster"], "cid");
    EXPECT_EQ(header["prefix"], "pre/");
    size_t lines = 0;
    while (std::getline(in, line)) {
      nlohmann::json file = nlohmann::json::parse(line);
      files[file["path"].get<std::string>()] = file;
      ++lines;
    }
    EXPECT_EQ(header["files"], lines);
    return files;
  }

  testing::TempDir dir_;
  std::unique_ptr<MetaStore> store_;
  std::vector<ReplicaTarget> node_;
};

TEST_F(ObjectManifestTest, ListsTheKeysOfEveryProtectedFileByPath) {
  const InodeId dir = Make(kRootInode, "ckpt", S_IFDIR | 0755);
  const InodeId sub = Make(dir, "step1", S_IFDIR | 0755);
  // Two chunks, both uploaded at their committed version: complete.
  const InodeId whole = Make(sub, "model.pt", S_IFREG | 0644, ProtectKind::kObject);
  std::vector<ChunkId> whole_ids = Write(whole, {1, 1}, kChunkBytes + 5);
  for (ChunkId c : whole_ids) ASSERT_OK(store_->SetObjectVersion(c, 1));
  // Chunk 1 rewritten (version 2) after its upload at 1, chunk 2 never
  // uploaded: listed, not complete; chunk 1's older object still listed.
  const InodeId partial = Make(dir, "opt.pt", S_IFREG | 0644, ProtectKind::kObject);
  std::vector<ChunkId> partial_ids = Write(partial, {1, 2, 1}, 3 * kChunkBytes);
  ASSERT_OK(store_->SetObjectVersion(partial_ids[0], 1));
  ASSERT_OK(store_->SetObjectVersion(partial_ids[1], 1));
  // Not listed: protect=object with nothing uploaded yet, and a file
  // without the goal.
  Write(Make(dir, "waiting", S_IFREG | 0644, ProtectKind::kObject), {1}, 10);
  Write(Make(kRootInode, "plain", S_IFREG | 0644), {1}, 10);

  ManifestCounts counts;
  auto files = Manifest(&counts);
  ASSERT_EQ(files.size(), 2u) << "listed: " << nlohmann::json(files).dump();
  EXPECT_EQ(counts.files, 2u);
  EXPECT_EQ(counts.complete, 1u);
  EXPECT_EQ(counts.chunks, 4u);

  const nlohmann::json& w = files.at("/ckpt/step1/model.pt");
  EXPECT_EQ(w["inode"], whole.value());
  EXPECT_EQ(w["size"], kChunkBytes + 5);
  EXPECT_EQ(w["chunk_size"], kChunkBytes);
  EXPECT_EQ(w["complete"], true);
  ASSERT_EQ(w["chunks"].size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(w["chunks"][i]["index"], i);
    EXPECT_EQ(w["chunks"][i]["offset"], i * kChunkBytes);
    EXPECT_EQ(w["chunks"][i]["current"], true);
    EXPECT_EQ(w["chunks"][i]["key"], ObjectKey("pre/", whole_ids[i], 1));
  }

  const nlohmann::json& p = files.at("/ckpt/opt.pt");
  EXPECT_EQ(p["complete"], false);
  ASSERT_EQ(p["chunks"].size(), 2u);  // chunk 2 has no object
  EXPECT_EQ(p["chunks"][0]["current"], true);
  EXPECT_EQ(p["chunks"][1]["index"], 1);
  EXPECT_EQ(p["chunks"][1]["version"], 1);
  EXPECT_EQ(p["chunks"][1]["current"], false);
  EXPECT_EQ(p["chunks"][1]["key"], ObjectKey("pre/", partial_ids[1], 1));
}

TEST_F(ObjectManifestTest, AFileWithTwoNamesIsListedUnderEach) {
  const InodeId f = Make(kRootInode, "a", S_IFREG | 0644, ProtectKind::kObject);
  ASSERT_OK(store_->SetObjectVersion(Write(f, {1}, 10).front(), 1));
  const InodeId dir = Make(kRootInode, "d", S_IFDIR | 0755);
  ASSERT_OK(store_->Link(OpToken{}, f, dir, "b", testing::T(120)));
  auto files = Manifest();
  ASSERT_EQ(files.size(), 2u);
  EXPECT_EQ(files.at("/a")["inode"], f.value());
  EXPECT_EQ(files.at("/d/b")["inode"], f.value());
}

TEST_F(ObjectManifestTest, ANameThatIsNotUtf8IsReplacedNotFatal) {
  const InodeId f =
      Make(kRootInode, std::string("bad\xff", 4), S_IFREG | 0644, ProtectKind::kObject);
  ASSERT_OK(store_->SetObjectVersion(Write(f, {1}, 10).front(), 1));
  auto files = Manifest();
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(files.begin()->first, "/bad\xEF\xBF\xBD");
  EXPECT_EQ(files.begin()->second["inode"], f.value());
}

TEST_F(ObjectManifestTest, AnEmptyBucketGivesTheHeaderOnly) {
  Make(kRootInode, "f", S_IFREG | 0644, ProtectKind::kObject);
  ManifestCounts counts;
  EXPECT_TRUE(Manifest(&counts).empty());
  EXPECT_EQ(counts.files, 0u);
}

}  // namespace
}  // namespace t0fs::meta
