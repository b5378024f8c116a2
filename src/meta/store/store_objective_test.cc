// Recursive SetObjective in bounded transactions: the batches cut through
// directories of every size (empty, smaller than a batch, exactly one, many)
// and every inode of the tree ends up with the objective, once; the change is
// idempotent; nothing outside the tree moves.
#include <map>

#include "meta/store/store_test_util.h"

namespace t0fs::meta {
namespace {

using testing::OpenOrDie;
using testing::T;

class ObjectiveWalkTest : public ::testing::Test {
 protected:
  static constexpr size_t kBatch = 7;
  static constexpr uint64_t kFileChunk = 4096;

  void SetUp() override {
    StoreOptions opts;
    opts.posix.objective_batch = kBatch;
    auto store = OpenSqliteStore(":memory:", opts);
    ASSERT_OK(store);
    store_ = std::move(store).value();
  }

  InodeId Make(InodeId parent, const std::string& name, bool dir) {
    MakeNodeArgs a;
    a.parent = parent;
    a.name = name;
    a.mode = dir ? (S_IFDIR | 0755) : (S_IFREG | 0644);
    a.chunk_size = dir ? 0 : kFileChunk;
    auto r = store_->MakeNode(OpToken{}, a, T(10));
    EXPECT_OK(r) << name;
    if (!r.ok()) return InodeId();
    inodes_[r->attr.ino.value()] = dir;
    return r->attr.ino;
  }

  // top/ with sub-directories of 0, 1, kBatch, kBatch + 1 and 3 * kBatch + 2
  // files, one nested three deep, and files directly in top/.
  InodeId BuildTree() {
    InodeId top = Make(kRootInode, "top", true);
    int n = 0;
    for (size_t files : {size_t{0}, size_t{1}, kBatch, kBatch + 1, 3 * kBatch + 2}) {
      InodeId dir = Make(top, "d" + std::to_string(n++), true);
      for (size_t i = 0; i < files; ++i) Make(dir, "f" + std::to_string(i), false);
    }
    InodeId deep = top;
    for (int level = 0; level < 3; ++level) {
      deep = Make(deep, "deep" + std::to_string(level), true);
      Make(deep, "leaf", false);
    }
    for (int i = 0; i < 3; ++i) Make(top, "file" + std::to_string(i), false);
    return top;
  }

  std::unique_ptr<PosixStore> store_;
  std::map<uint64_t, bool> inodes_;  // the tree: ino -> is a directory
};

TEST_F(ObjectiveWalkTest, EveryInodeOfTheTreeOnceAcrossBatches) {
  InodeId outside = Make(kRootInode, "outside", false);
  inodes_.erase(outside.value());
  InodeId top = BuildTree();
  ASSERT_GT(inodes_.size(), 5 * kBatch);
  const Objective objective{3,
                            Placement::kSpread,
                            {NodeId(2), NodeId(5)},
                            8192,
                            Protection{ProtectKind::kReplicas, 4, 0, 300, KeepLocal::kKeep}};
  auto changed = store_->SetObjective(top, objective, true);
  ASSERT_OK(changed);
  EXPECT_EQ(*changed, inodes_.size());
  for (const auto& [ino, dir] : inodes_) {
    auto attr = store_->GetAttr(InodeId(ino));
    ASSERT_OK(attr);
    EXPECT_EQ(attr->replicas, 3u) << ino;
    EXPECT_EQ(attr->placement, Placement::kSpread) << ino;
    EXPECT_EQ(attr->placement_nodes, objective.nodes) << ino;
    EXPECT_EQ(attr->protect, objective.protect) << ino;
    // Directories take the chunk size for new files; files keep theirs.
    EXPECT_EQ(attr->chunk_size, dir ? 8192u : kFileChunk) << ino;
  }
  auto untouched = store_->GetAttr(outside);
  ASSERT_OK(untouched);
  EXPECT_EQ(untouched->replicas, 1u);
  EXPECT_EQ(untouched->protect.kind, ProtectKind::kNone);
  auto root = store_->GetAttr(kRootInode);
  ASSERT_OK(root);
  EXPECT_EQ(root->replicas, 1u);

  // Idempotent: the same change again visits the same inodes, changes nothing else.
  auto again = store_->SetObjective(top, objective, true);
  ASSERT_OK(again);
  EXPECT_EQ(*again, inodes_.size());
  auto problems = store_->Check();
  ASSERT_OK(problems);
  EXPECT_TRUE(problems->empty());
}

TEST_F(ObjectiveWalkTest, NotRecursiveChangesOnlyTheTop) {
  InodeId top = BuildTree();
  auto changed = store_->SetObjective(top, Objective{2, Placement::kLocal, {}, 8192, {}}, false);
  ASSERT_OK(changed);
  EXPECT_EQ(*changed, 1u);
  for (const auto& [ino, dir] : inodes_) {
    auto attr = store_->GetAttr(InodeId(ino));
    ASSERT_OK(attr);
    EXPECT_EQ(attr->replicas, InodeId(ino) == top ? 2u : 1u) << ino;
  }
}

TEST_F(ObjectiveWalkTest, NewEntriesInheritAfterTheWalk) {
  InodeId top = BuildTree();
  const Protection protect{ProtectKind::kReplicas, 3, 0, 60, KeepLocal::kKeep};
  ASSERT_OK(store_->SetObjective(top, Objective{2, Placement::kLocal, {}, 8192, protect}, true));
  InodeId later = Make(Make(top, "later", true), "f", false);
  auto attr = store_->GetAttr(later);
  ASSERT_OK(attr);
  EXPECT_EQ(attr->replicas, 2u);
  EXPECT_EQ(attr->protect, protect);
  auto objective = store_->GetObjective(later);
  ASSERT_OK(objective);
  EXPECT_EQ(objective->protect, protect);
  EXPECT_CODE(
      store_->SetObjective(InodeId(99999), Objective{2, Placement::kLocal, {}, 0, {}}, true),
      kNotFound);
}

}  // namespace
}  // namespace t0fs::meta
