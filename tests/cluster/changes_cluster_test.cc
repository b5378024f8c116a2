// Client::PollChanges as a long poll, against meta and a data node in one
// process: another client's change ends the wait at once, the client's own
// changes are not reported, the wait ends by itself with nothing new,
// InterruptPollChanges ends it early (a mount stopping), with two meta
// servers one's answer does not wait for the other's, and an unlink or a
// rename reports the inode behind the name.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <future>
#include <thread>

#include "common/logging.h"
#include "common/secret.h"
#include "data/data_service.h"
#include "meta/meta_service.h"
#include "t0fs/client.h"

namespace t0fs {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;
using std::chrono::seconds;

class ChangesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    InitLogging("test", "warn");
    dir_ = fs::temp_directory_path() / ("t0fs-changes-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    ASSERT_TRUE(CreateSecret(dir_ + "/secret").ok());
    meta::MetaConfig cfg;
    cfg.listen = "127.0.0.1:0";
    cfg.db = dir_ + "/meta.db";
    cfg.secret_file = dir_ + "/secret";
    auto meta = meta::MetaService::Start(cfg);
    ASSERT_TRUE(meta.ok()) << meta.status().ToString();
    meta_ = std::move(meta).value();
    data::DataConfig dcfg;
    dcfg.meta = meta_->endpoint().ToString();
    dcfg.secret_file = dir_ + "/secret";
    dcfg.listen = "127.0.0.1:0";
    dcfg.volumes = {dir_ + "/vol"};
    auto data = data::DataService::Start(dcfg);
    ASSERT_TRUE(data.ok()) << data.status().ToString();
    data_ = std::move(data).value();
    for (int tries = 0; tries < 100 && !data_->registered(); ++tries)
      std::this_thread::sleep_for(milliseconds(50));
    ASSERT_TRUE(data_->registered());
    writer_ = Connect();
    watcher_ = Connect();
    ASSERT_NE(writer_, nullptr);
    ASSERT_NE(watcher_, nullptr);
    auto first = watcher_->PollChanges();  // starts the feed: from now on
    ASSERT_TRUE(first.ok()) << first.status().ToString();
  }

  void TearDown() override {
    writer_.reset();
    watcher_.reset();
    if (data_) data_->Stop();
    if (meta_) meta_->Stop();
    fs::remove_all(dir_);
  }

  std::unique_ptr<client::Client> Connect(std::string meta = "") {
    client::ClientOptions opts;
    opts.meta = meta.empty() ? meta_->endpoint().ToString() : meta;
    opts.secret_file = dir_ + "/secret";
    opts.retry_timeout.value = seconds(20);
    auto c = client::Client::Connect(opts);
    EXPECT_TRUE(c.ok()) << c.status().ToString();
    return c.ok() ? std::move(c).value() : nullptr;
  }

  // A poll of `watcher_` waiting up to `wait`, on a thread of its own.
  std::future<Result<client::ChangeBatch>> PollAsync(milliseconds wait) {
    return std::async(std::launch::async, [this, wait] { return watcher_->PollChanges(wait); });
  }

  static bool Touches(const client::ChangeBatch& batch, InodeId ino) {
    for (const client::NamespaceChange& c : batch.changes) {
      if (c.ino == ino) return true;
    }
    return false;
  }

  static bool Names(const client::ChangeBatch& batch, const std::string& name) {
    for (const client::NamespaceChange& c : batch.changes) {
      if (c.name == name && c.parent == kRootInode) return true;
    }
    return false;
  }

  std::string dir_;
  std::unique_ptr<meta::MetaService> meta_;
  std::unique_ptr<data::DataService> data_;
  std::unique_ptr<client::Client> writer_;
  std::unique_ptr<client::Client> watcher_;
};

TEST_F(ChangesTest, AnotherClientsChangeEndsTheWait) {
  // The poll waits (up to ten minutes) until the writer's mkdir: whether it
  // parked before or after it, the answer names the new directory.
  auto poll = PollAsync(seconds(600));
  std::this_thread::sleep_for(milliseconds(100));
  ASSERT_TRUE(writer_->Mkdir(kRootInode, "made-elsewhere", 0755, client::Caller{}).ok());
  ASSERT_EQ(poll.wait_for(seconds(120)), std::future_status::ready)
      << "the change did not end the wait";
  auto batch = poll.get();
  ASSERT_TRUE(batch.ok()) << batch.status().ToString();
  EXPECT_TRUE(batch->complete);
  EXPECT_TRUE(Names(*batch, "made-elsewhere"));
}

TEST_F(ChangesTest, OwnChangesAreNotReportedAndTheWaitEndsByItself) {
  ASSERT_TRUE(watcher_->Mkdir(kRootInode, "mine", 0755, client::Caller{}).ok());
  auto batch =
      watcher_->PollChanges(milliseconds(300));  // nothing from others: waits, then answers
  ASSERT_TRUE(batch.ok()) << batch.status().ToString();
  EXPECT_TRUE(batch->complete);
  EXPECT_FALSE(Names(*batch, "mine"));
  // The next one still hears others.
  ASSERT_TRUE(writer_->Mkdir(kRootInode, "theirs", 0755, client::Caller{}).ok());
  batch = watcher_->PollChanges(milliseconds(300));
  ASSERT_TRUE(batch.ok()) << batch.status().ToString();
  EXPECT_TRUE(Names(*batch, "theirs"));
}

// An unlink or a rename changes the inode behind the name (its link count,
// its ctime), not only the directory: another client's kernel keeps the
// attributes of the file's other names for the cache time.
TEST_F(ChangesTest, AnUnlinkOrRenameReportsTheInodeBehindTheName) {
  auto a = writer_->Mknod(kRootInode, "a", 0100644, 0, client::Caller{});
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  auto b = writer_->Mknod(kRootInode, "b", 0100644, 0, client::Caller{});
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  ASSERT_TRUE(writer_->Link(a->ino, kRootInode, "a2").ok());
  ASSERT_TRUE(writer_->Link(b->ino, kRootInode, "b2").ok());
  ASSERT_TRUE(watcher_->PollChanges(milliseconds(0)).ok());  // what came before
  ASSERT_TRUE(writer_->Unlink(kRootInode, "a").ok());
  auto batch = watcher_->PollChanges(seconds(600));
  ASSERT_TRUE(batch.ok()) << batch.status().ToString();
  EXPECT_TRUE(Touches(*batch, a->ino)) << "a2's link count";
  // "a2" onto "b": b loses a link (b2 keeps it), a2's inode gets a new ctime.
  ASSERT_TRUE(writer_->Rename(kRootInode, "a2", kRootInode, "b", 0).ok());
  batch = watcher_->PollChanges(seconds(600));
  ASSERT_TRUE(batch.ok()) << batch.status().ToString();
  EXPECT_TRUE(Touches(*batch, b->ino)) << "b2's link count";
  EXPECT_TRUE(Touches(*batch, a->ino)) << "the moved inode's ctime";
}

TEST_F(ChangesTest, AnInterruptEndsAWaitInProgress) {
  auto poll = PollAsync(seconds(600));
  std::this_thread::sleep_for(milliseconds(100));
  watcher_->InterruptPollChanges();
  ASSERT_EQ(poll.wait_for(seconds(120)), std::future_status::ready)
      << "the interrupt did not end the wait";
  auto batch = poll.get();
  ASSERT_TRUE(batch.ok()) << batch.status().ToString();
  EXPECT_TRUE(batch->complete);  // the question stays asked; nothing was missed
  // The question left waiting is answered by the next call, with a change made meanwhile.
  ASSERT_TRUE(writer_->Mkdir(kRootInode, "later", 0755, client::Caller{}).ok());
  batch = watcher_->PollChanges(seconds(600));
  ASSERT_TRUE(batch.ok()) << batch.status().ToString();
  EXPECT_TRUE(Names(*batch, "later"));
}

// Two meta servers (here two separate ones sharing the secret: the feeds are
// per server either way). A change through the second ends a poll while the
// first still has nothing; the first's question stays asked and answers the
// next call when something changes there.
TEST_F(ChangesTest, OneServersAnswerDoesNotWaitForTheOthers) {
  meta::MetaConfig cfg;
  cfg.listen = "127.0.0.1:0";
  cfg.db = dir_ + "/second.db";
  cfg.secret_file = dir_ + "/secret";
  auto second = meta::MetaService::Start(cfg);
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  // Session ids come from each store's own counter here (one shared store
  // in a real cluster): the second's first ones are used up, so that no
  // client below has another's id on the other server (a change would look
  // like the asker's own).
  for (int i = 0; i < 5; ++i) ASSERT_NE(Connect((*second)->endpoint().ToString()), nullptr);
  auto both = Connect(meta_->endpoint().ToString() + "," + (*second)->endpoint().ToString());
  auto on_second = Connect((*second)->endpoint().ToString());
  ASSERT_NE(both, nullptr);
  ASSERT_NE(on_second, nullptr);
  ASSERT_TRUE(both->PollChanges().ok());  // starts both feeds
  auto poll = std::async(std::launch::async, [&] { return both->PollChanges(seconds(600)); });
  std::this_thread::sleep_for(milliseconds(100));
  ASSERT_TRUE(on_second->Mkdir(kRootInode, "on-second", 0755, client::Caller{}).ok());
  ASSERT_EQ(poll.wait_for(seconds(120)), std::future_status::ready)
      << "the answer waited for the other server";
  auto batch = poll.get();
  ASSERT_TRUE(batch.ok()) << batch.status().ToString();
  EXPECT_TRUE(batch->complete);
  EXPECT_TRUE(Names(*batch, "on-second"));
  ASSERT_TRUE(writer_->Mkdir(kRootInode, "on-first", 0755, client::Caller{}).ok());
  batch = both->PollChanges(seconds(600));
  ASSERT_TRUE(batch.ok()) << batch.status().ToString();
  EXPECT_TRUE(Names(*batch, "on-first"));
  both.reset();
  on_second.reset();
  (*second)->Stop();
}

}  // namespace
}  // namespace t0fs
