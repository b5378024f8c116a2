// Helpers for the store tests: temp dirs, a fixture run over every kind of
// store (opened by URL), and a random workload used by the consistency and crash tests.
#pragma once

#include <fcntl.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <filesystem>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "meta/store/engine_test/pg_home.h"
#include "meta/store/store_url.h"
#include "meta/store/store_url.h"

namespace t0fs::meta::testing {

inline Status StatusOf(const Status& st) {
  return st;
}
template <typename T>
Status StatusOf(const Result<T>& r) {
  return r.status();
}

inline ::testing::AssertionResult IsOk(const Status& st) {
  if (st.ok()) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << st.ToString();
}
inline ::testing::AssertionResult HasCode(const Status& st, StatusCode code) {
  if (st.code() == code) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << "got " << (st.ok() ? "ok" : st.ToString()) << ", want " << CodeText(code);
}

// Status or Result checks that print the status on failure; more context
// can be streamed in with <<.
#define ASSERT_OK(expr) \
  ASSERT_TRUE(::t0fs::meta::testing::IsOk(::t0fs::meta::testing::StatusOf(expr))) << #expr
#define EXPECT_OK(expr) \
  EXPECT_TRUE(::t0fs::meta::testing::IsOk(::t0fs::meta::testing::StatusOf(expr))) << #expr
#define EXPECT_CODE(expr, code_)                                                    \
  EXPECT_TRUE(::t0fs::meta::testing::HasCode(::t0fs::meta::testing::StatusOf(expr), \
                                             ::t0fs::StatusCode::code_))            \
      << #expr

// A directory under /tmp removed (with its contents) when dropped.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "t0fs-store-XXXXXX").string();
    char* made = ::mkdtemp(tmpl.data());
    if (made == nullptr) ADD_FAILURE() << "mkdtemp failed";
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::string File(const std::string& name) const { return path_ + "/" + name; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

inline Timespec T(int64_t sec, uint32_t nsec = 0) {
  return Timespec{sec, nsec};
}

inline std::unique_ptr<PosixStore> OpenOrDie(const std::string& path) {
  auto store = OpenSqliteStore(path);
  if (!store.ok()) {
    ADD_FAILURE() << "open " << path << ": " << store.status().ToString();
    return nullptr;
  }
  return std::move(*store);
}

// Registers node `node_id` with `volumes` volumes (uuids "n<node>-v<i>") and
// returns one target per volume.
inline std::vector<ReplicaTarget> RegisterTargets(MetaStore& store, uint64_t node_id, int volumes) {
  NodeRecord rec;
  rec.node = NodeId(node_id);
  rec.host_id = "host-" + std::to_string(node_id);
  rec.hostname = rec.host_id;
  rec.address = "127.0.0.1:" + std::to_string(7700 + node_id);
  for (int i = 0; i < volumes; ++i) {
    VolumeRecord v;
    v.uuid = "n" + std::to_string(node_id) + "-v" + std::to_string(i);
    v.path = "/data/" + v.uuid;
    v.total_bytes = 1 << 30;
    v.free_bytes = 1 << 29;
    rec.volumes.push_back(v);
  }
  auto stored = store.RegisterNode(rec);
  std::vector<ReplicaTarget> targets;
  if (!stored.ok()) {
    ADD_FAILURE() << stored.status().ToString();
    return targets;
  }
  for (const VolumeRecord& v : stored->volumes) targets.push_back({stored->node, v.volume});
  return targets;
}

// The stores every store test runs against: each engine, in each of its
// forms (the parameter of StoreTest; see OpenStoreOf). PostgreSQL only with
// T0FS_PG_URL (tests/pg/engine.sh runs this suite with it).
inline std::vector<std::string> StoreKinds() {
  if (PgTestUrl().empty()) return {"sqlite_memory", "sqlite_file"};
  return {"sqlite_memory", "sqlite_file", "postgres"};
}

// A new, empty store of `kind`, opened by URL; a SQLite file store lives in
// `dir`, a PostgreSQL store in the schema of `*pg` (made here; it must
// outlive the store). nullptr for postgres without T0FS_PG_URL.
inline std::unique_ptr<MetaStore> OpenStoreOf(const std::string& kind, const TempDir& dir,
                                              std::unique_ptr<PgHome>* pg = nullptr) {
  std::string url;
  if (kind == "sqlite_memory") {
    url = "sqlite::memory:";
  } else if (kind == "sqlite_file") {
    url = "sqlite://" + dir.File("meta.db");
  } else if (kind == "postgres") {
    if (PgTestUrl().empty() || pg == nullptr) return nullptr;
    *pg = std::make_unique<PgHome>();
    url = (*pg)->url();
  } else {
    ADD_FAILURE() << "unknown store kind " << kind;
    return nullptr;
  }
  auto location = ParseStoreUrl(url);
  if (!location.ok()) {
    ADD_FAILURE() << location.status().ToString();
    return nullptr;
  }
  auto store = OpenStore(*location);
  if (!store.ok()) {
    ADD_FAILURE() << "open " << url << ": " << store.status().ToString();
    return nullptr;
  }
  return std::move(*store);
}

// Fixture: a fresh store per test, of every kind (StoreKinds), and
// short-hands. Tests see only the MetaStore interface.
class StoreTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    store_ = OpenStoreOf(GetParam(), dir_, &pg_);
    ASSERT_NE(store_, nullptr);
  }

  Result<MakeNodeResult> Make(InodeId parent, const std::string& name, uint32_t mode,
                              Timespec now = T(100)) {
    MakeNodeArgs a;
    a.parent = parent;
    a.name = name;
    a.mode = mode;
    a.uid = 1000;
    a.gid = 1000;
    a.chunk_size = S_ISREG(mode) ? kChunk : 0;
    return store_->MakeNode(OpToken{}, a, now);
  }
  InodeId MkFile(InodeId parent, const std::string& name, Timespec now = T(100)) {
    auto r = Make(parent, name, S_IFREG | 0644, now);
    EXPECT_TRUE(r.ok()) << name << ": " << r.status().ToString();
    return r.ok() ? r->attr.ino : InodeId();
  }
  InodeId MkDir(InodeId parent, const std::string& name, Timespec now = T(100)) {
    auto r = Make(parent, name, S_IFDIR | 0755, now);
    EXPECT_TRUE(r.ok()) << name << ": " << r.status().ToString();
    return r.ok() ? r->attr.ino : InodeId();
  }
  InodeAttr Attr(InodeId ino) {
    auto r = store_->GetAttr(ino);
    EXPECT_TRUE(r.ok()) << ino.value() << ": " << r.status().ToString();
    return r.ok() ? *r : InodeAttr{};
  }
  // The inode `name` in `dir` names, or 0.
  InodeId Find(InodeId dir, const std::string& name) {
    auto r = store_->Lookup(dir, name);
    return r.ok() ? r->ino : InodeId();
  }
  // Names in `dir` (without "." and ".."), in listing order.
  std::vector<std::string> Names(InodeId dir) {
    std::vector<std::string> names;
    uint64_t cookie = 0;
    bool eof = false;
    while (!eof) {
      auto page = store_->ReadDir(dir, cookie, 100, false, &eof);
      EXPECT_TRUE(page.ok()) << page.status().ToString();
      if (!page.ok()) break;
      for (const DirEntry& e : *page) {
        if (e.name != "." && e.name != "..") names.push_back(e.name);
        cookie = e.cookie;
      }
    }
    return names;
  }
  std::vector<std::string> CheckProblems() {
    auto r = store_->Check();
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *r : std::vector<std::string>{"check failed"};
  }
  StoreCounts Counts() {
    auto r = store_->Counts();
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *r : StoreCounts{};
  }
  SessionId NewSession() {
    auto r = store_->OpenSession("test", "host", T(100));
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *r : SessionId();
  }

  static constexpr uint64_t kChunk = 100;
  TempDir dir_;                  // before store_: removed after the store is closed
  std::unique_ptr<PgHome> pg_;   // likewise, the PostgreSQL schema
  std::unique_ptr<MetaStore> store_;
};

// Instantiates a StoreTest-derived fixture once per store kind.
#define T0FS_STORE_TEST_SUITE(fixture)                                               \
  INSTANTIATE_TEST_SUITE_P(Engines, fixture,                                         \
                           ::testing::ValuesIn(::t0fs::meta::testing::StoreKinds()), \
                           [](const auto& info) { return info.param; })

// A random mix of every mutating operation over a small name pool, so that
// names collide, directories move, files are unlinked while open, and
// retried tokens replay. Operations fail with POSIX errors all the time;
// Step() only reports failures that mean the store itself is broken.
class RandomWorkload {
 public:
  RandomWorkload(MetaStore& store, uint64_t seed, SessionId session,
                 std::vector<ReplicaTarget> targets)
      : store_(store), rng_(seed), session_(session), targets_(std::move(targets)) {
    dirs_.push_back(kRootInode);
  }

  Status Step() {
    Status st = StepOnce();
    if (st.code() == StatusCode::kMetaDatabase || st.code() == StatusCode::kInternal ||
        st.code() == StatusCode::kCorruption) {
      return st;
    }
    return Status::Ok();
  }

 private:
  uint64_t Pick(uint64_t n) { return std::uniform_int_distribution<uint64_t>(0, n - 1)(rng_); }
  std::string Name() { return std::string(1, static_cast<char>('a' + Pick(6))); }
  InodeId Dir() { return dirs_[Pick(dirs_.size())]; }
  InodeId File() { return files_.empty() ? kRootInode : files_[Pick(files_.size())]; }
  Timespec Now() { return Timespec{static_cast<int64_t>(1000 + ++clock_), 0}; }
  OpToken Token() {
    // Now and then retry the previous token (must replay), or use a fresh one.
    if (Pick(4) == 0) return OpToken{};
    if (Pick(5) != 0) ++seq_;
    return OpToken{session_, static_cast<uint32_t>(Pick(3)), seq_};
  }

  Status StepOnce() {
    switch (Pick(16)) {
      case 0: {
        MakeNodeArgs a{Dir(), Name(), S_IFDIR | 0755, 0, 0, 0, true, "", 0};
        auto r = store_.MakeNode(Token(), a, Now());
        if (r.ok()) dirs_.push_back(r->attr.ino);
        return r.status();
      }
      case 1:
      case 2: {
        MakeNodeArgs a{Dir(), Name(), S_IFREG | 0644, 0, 0, 0, Pick(2) == 0, "", 64};
        auto r = store_.MakeNode(Token(), a, Now());
        if (r.ok()) files_.push_back(r->attr.ino);
        return r.status();
      }
      case 3: {
        MakeNodeArgs a{Dir(), Name(), S_IFLNK | 0777, 0, 0, 0, true, "target/" + Name(), 0};
        return store_.MakeNode(Token(), a, Now()).status();
      }
      case 4:
        return store_.Link(Token(), File(), Dir(), Name(), Now()).status();
      case 5:
        return store_.Unlink(Token(), Dir(), Name(), Now());
      case 6:
        return store_.Rmdir(Token(), Dir(), Name(), Now());
      case 7:
      case 8: {
        uint32_t flags = Pick(4) == 0 ? static_cast<uint32_t>(1 + Pick(2)) : 0;
        return store_.Rename(Token(), Dir(), Name(), Dir(), Name(), flags, Now());
      }
      case 9: {
        SetAttrArgs a;
        a.ino = File();
        a.mask = Pick(2) == 0 ? kSetSize : (kSetMode | kSetMtimeNow);
        a.size = Pick(400);
        a.mode = 0600;
        return store_.SetAttr(Token(), a, Now()).status();
      }
      case 10:
        if (Pick(2) == 0) {
          return store_.SetXattr(Token(), File(), "user." + Name(), std::string(Pick(20), 'x'), 0,
                                 Now());
        }
        return store_.RemoveXattr(Token(), File(), "user." + Name(), Now());
      case 11: {
        uint32_t flags = Pick(3) == 0 ? (O_RDWR | O_TRUNC) : O_RDONLY;
        auto r = store_.Open(Token(), session_, File(), flags, Now());
        if (r.ok()) handles_.push_back(r->handle);
        return r.status();
      }
      case 12: {
        if (handles_.empty()) return Status::Ok();
        size_t i = Pick(handles_.size());
        HandleId h = handles_[i];
        handles_.erase(handles_.begin() + static_cast<ptrdiff_t>(i));
        return store_.Release(Token(), h);
      }
      case 13: {
        std::vector<uint64_t> idx = {Pick(8), Pick(8)};
        std::vector<ReplicaTarget> t(
            targets_.begin(), targets_.begin() + static_cast<ptrdiff_t>(1 + Pick(targets_.size())));
        return store_.Allocate(Token(), File(), idx, t).status();
      }
      case 14: {
        InodeId ino = File();
        auto layout = store_.GetLayout(ino, 0, 8);
        CommitArgs c;
        c.ino = ino;
        c.size = Pick(600);
        if (Pick(2) == 0) c.mtime = Now();
        if (layout.ok()) {
          for (const ChunkLayout& l : *layout) c.written.push_back({l.replicas[0].chunk, Pick(9)});
        }
        return store_.Commit(Token(), c, Pick(8) == 0, Now()).status();
      }
      default: {
        bool eof = false;
        return store_.ReadDir(Dir(), 0, 1 + Pick(5), Pick(2) == 0, &eof).status();
      }
    }
  }

  MetaStore& store_;
  std::mt19937_64 rng_;
  SessionId session_;
  std::vector<ReplicaTarget> targets_;
  std::vector<InodeId> dirs_;
  std::vector<InodeId> files_;
  std::vector<HandleId> handles_;
  uint64_t seq_ = 0;
  uint64_t clock_ = 0;
};

}  // namespace t0fs::meta::testing
