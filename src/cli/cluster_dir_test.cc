// ClusterDir: creating, completing (after a failed first start) and reusing
// the cluster directory of `t0fs up`, and moving off busy ports.
#include "cli/cluster_dir.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "cli/ports.h"
#include "common/secret.h"

namespace t0fs::cli {
namespace {

namespace fs = std::filesystem;

class TempDir {
 public:
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "t0fs-clidir-XXXXXX").string();
    if (::mkdtemp(tmpl.data()) == nullptr) ADD_FAILURE() << "mkdtemp failed";
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// A port held by a listening socket for the life of the object.
class BusyPort {
 public:
  BusyPort() {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    EXPECT_EQ(::listen(fd_, 1), 0);
    socklen_t len = sizeof addr;
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
  }
  ~BusyPort() { ::close(fd_); }
  uint16_t port() const { return port_; }
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }

 private:
  int fd_ = -1;
  uint16_t port_ = 0;
};

std::string Read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Options on free ports of this machine (not the defaults, which a running
// cluster may hold).
// Where this process looks for free ports. ctest starts each test in its
// own process with consecutive pids: 32 ports apart, two tests running at
// once never find the same "free" port (free until one of them binds it).
uint16_t PortBase() {
  return static_cast<uint16_t>(20000 + (::getpid() % 1000) * 32);
}

ClusterDirOptions FreeOptions() {
  ClusterDirOptions o;
  auto meta = FindFreePorts("127.0.0.1", PortBase(), 1);
  EXPECT_TRUE(meta.ok());
  auto data = FindFreePorts("127.0.0.1", *meta + 1, 2);
  EXPECT_TRUE(data.ok());
  o.meta_listen = "127.0.0.1:" + std::to_string(*meta);
  o.data_listen = "127.0.0.1:" + std::to_string(*data);
  return o;
}

TEST(ClusterDir, CreatesANewCluster) {
  TempDir tmp;
  ClusterDirOrigin origin;
  std::vector<std::string> notes;
  ClusterDirOptions o = FreeOptions();
  auto dir = ClusterDir::OpenOrCreate(tmp / "c", o, &origin, &notes);
  ASSERT_TRUE(dir.ok()) << dir.status().ToString();
  EXPECT_EQ(origin, ClusterDirOrigin::kCreated);
  EXPECT_TRUE(notes.empty());
  EXPECT_EQ(dir->meta_address(), o.meta_listen);
  EXPECT_EQ(dir->data_address(), o.data_listen);
  struct stat st {};
  ASSERT_EQ(::stat(dir->secret().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_FALSE(dir->established());
  EXPECT_TRUE(dir->CheckPortsFree(2).ok());
}

// `--dir` naming where `t0fs up` ran (its cluster is in t0fs-data below)
// is refused with the directory to name instead.
TEST(ClusterDir, OpenNamesTheClusterOfUpBelowTheGivenDirectory) {
  TempDir tmp;
  auto none = ClusterDir::Open(tmp / "");
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().message().find("t0fs-data"), std::string::npos)
      << none.status().ToString();
  ClusterDirOrigin origin;
  std::vector<std::string> notes;
  ASSERT_TRUE(ClusterDir::OpenOrCreate(tmp / "t0fs-data", FreeOptions(), &origin, &notes).ok());
  auto above = ClusterDir::Open(tmp / "");
  ASSERT_FALSE(above.ok());
  EXPECT_EQ(above.status().code(), StatusCode::kNotFound);
  EXPECT_NE(above.status().message().find("--dir " + tmp / "t0fs-data"), std::string::npos)
      << above.status().ToString();
  EXPECT_TRUE(ClusterDir::Open(tmp / "t0fs-data").ok());
}

TEST(ClusterDir, BusyDefaultPortsMoveAndSaySo) {
  TempDir tmp;
  BusyPort meta_busy, data_busy;
  ClusterDirOptions o;
  o.meta_listen = meta_busy.address();
  o.data_listen = data_busy.address();
  o.data_nodes = 3;
  ClusterDirOrigin origin;
  std::vector<std::string> notes;
  auto dir = ClusterDir::OpenOrCreate(tmp / "c", o, &origin, &notes);
  ASSERT_TRUE(dir.ok()) << dir.status().ToString();
  EXPECT_NE(dir->meta_address(), meta_busy.address());
  EXPECT_NE(dir->data_address(), data_busy.address());
  EXPECT_NE(dir->meta_address(), dir->data_address());
  ASSERT_EQ(notes.size(), 2u);
  EXPECT_NE(notes[0].find(std::to_string(meta_busy.port()) + " is in use"), std::string::npos)
      << notes[0];
  EXPECT_NE(notes[0].find(dir->meta_address()), std::string::npos) << notes[0];
  EXPECT_NE(Read(dir->config()).find(dir->meta_address()), std::string::npos);
  EXPECT_TRUE(dir->CheckPortsFree(3).ok());
}

TEST(ClusterDir, AGivenBusyAddressIsAnError) {
  TempDir tmp;
  BusyPort busy;
  ClusterDirOptions o = FreeOptions();
  o.meta_listen = busy.address();
  o.meta_listen_given = true;
  ClusterDirOrigin origin;
  std::vector<std::string> notes;
  auto dir = ClusterDir::OpenOrCreate(tmp / "c", o, &origin, &notes);
  ASSERT_FALSE(dir.ok());
  EXPECT_EQ(dir.status().code(), StatusCode::kBusy);
  EXPECT_NE(dir.status().ToString().find(busy.address()), std::string::npos);
}

TEST(ClusterDir, AnUnfinishedDirectoryIsCompletedKeepingItsSecretAndEdits) {
  TempDir tmp;
  ClusterDirOptions o = FreeOptions();
  ClusterDirOrigin origin;
  std::vector<std::string> notes;
  // The first start failed after writing secret and config, with meta on a
  // port that is (now) busy.
  BusyPort busy;
  {
    ClusterDirOptions first = o;
    first.meta_listen =
        "127.0.0.1:" + std::to_string(busy.port() == 65535 ? 65534 : busy.port() + 1);
    auto dir = ClusterDir::OpenOrCreate(tmp / "c", first, &origin, &notes);
    ASSERT_TRUE(dir.ok()) << dir.status().ToString();
  }
  std::string secret = Read(tmp / "c/secret");
  std::string config = Read(tmp / "c/t0fs.toml");
  size_t at = config.find("\"127.0.0.1:");
  ASSERT_NE(at, std::string::npos);
  size_t end = config.find('"', at + 1);
  std::string recorded = config.substr(at + 1, end - at - 1);
  // As if that port was busy then too: both the meta and the data sections name it.
  for (size_t pos = 0; (pos = config.find(recorded, pos)) != std::string::npos;) {
    config.replace(pos, recorded.size(), busy.address());
  }
  config += "# my edit\n";
  { std::ofstream(tmp / "c/t0fs.toml") << config; }
  { std::ofstream(tmp / "c/meta.db") << ""; }  // meta got as far as creating its database

  notes.clear();
  auto dir = ClusterDir::OpenOrCreate(tmp / "c", o, &origin, &notes);
  ASSERT_TRUE(dir.ok()) << dir.status().ToString();
  EXPECT_EQ(origin, ClusterDirOrigin::kCompleted);
  EXPECT_EQ(Read(tmp / "c/secret"), secret);
  EXPECT_NE(dir->meta_address(), busy.address());
  std::string now = Read(tmp / "c/t0fs.toml");
  EXPECT_NE(now.find("# my edit"), std::string::npos);
  EXPECT_EQ(now.find(busy.address()), std::string::npos) << now;
  ASSERT_EQ(notes.size(), 1u);
}

TEST(ClusterDir, OnlyASecretLeftIsCompleted) {
  TempDir tmp;
  fs::create_directories(tmp / "c");
  ASSERT_TRUE(CreateSecret(tmp / "c/secret").ok());
  std::string secret = Read(tmp / "c/secret");
  ClusterDirOrigin origin;
  std::vector<std::string> notes;
  auto dir = ClusterDir::OpenOrCreate(tmp / "c", FreeOptions(), &origin, &notes);
  ASSERT_TRUE(dir.ok()) << dir.status().ToString();
  EXPECT_EQ(origin, ClusterDirOrigin::kCompleted);
  EXPECT_EQ(Read(tmp / "c/secret"), secret);
  EXPECT_TRUE(fs::exists(dir->config()));
}

TEST(ClusterDir, ATornSecretIsReplaced) {
  TempDir tmp;
  fs::create_directories(tmp / "c");
  { std::ofstream(tmp / "c/secret") << "ab"; }
  ::chmod((tmp / "c/secret").c_str(), 0600);
  ClusterDirOrigin origin;
  std::vector<std::string> notes;
  auto dir = ClusterDir::OpenOrCreate(tmp / "c", FreeOptions(), &origin, &notes);
  ASSERT_TRUE(dir.ok()) << dir.status().ToString();
  EXPECT_TRUE(LoadSecret(dir->secret()).ok());
}

// A cluster directory at `path` as a first `up` leaves it once its data
// node registered.
Result<ClusterDir> Established(const std::string& path, const ClusterDirOptions& o) {
  ClusterDirOrigin origin;
  std::vector<std::string> notes;
  auto created = ClusterDir::OpenOrCreate(path, o, &origin, &notes);
  if (created.ok()) std::ofstream(path + "/volume0/volume.json") << "{}";
  return created;
}

TEST(ClusterDir, AnEstablishedClusterKeepsItsAddresses) {
  TempDir tmp;
  ClusterDirOptions o = FreeOptions();
  ClusterDirOrigin origin;
  std::vector<std::string> notes;
  auto created = Established(tmp / "c", o);
  ASSERT_TRUE(created.ok());
  ClusterDirOptions other = FreeOptions();
  other.meta_listen = "127.0.0.1:1";
  other.meta_listen_given = true;
  auto dir = ClusterDir::OpenOrCreate(tmp / "c", other, &origin, &notes);
  ASSERT_TRUE(dir.ok()) << dir.status().ToString();
  EXPECT_EQ(origin, ClusterDirOrigin::kReused);
  EXPECT_TRUE(dir->established());
  EXPECT_EQ(dir->meta_address(), o.meta_listen);
  auto second = dir->data_address(1);
  ASSERT_TRUE(second.ok());
  EXPECT_NE(*second, dir->data_address());
}

TEST(ClusterDir, SeveralMetaServersOverAStoreByUrl) {
  TempDir tmp;
  ClusterDirOptions o = FreeOptions();
  auto meta = FindFreePorts("127.0.0.1", PortBase(), 4);
  ASSERT_TRUE(meta.ok());
  o.meta_listen = fmt::format("127.0.0.1:{}", *meta);
  o.data_listen = fmt::format("127.0.0.1:{}", *meta + 1);  // the default shape: meta + 1
  o.store = "postgresql://t0fs:pw@127.0.0.1:5432/t0fs";
  o.meta_servers = 2;
  ClusterDirOrigin origin;
  std::vector<std::string> notes;
  auto dir = ClusterDir::OpenOrCreate(tmp / "c", o, &origin, &notes);
  ASSERT_TRUE(dir.ok()) << dir.status().ToString();
  EXPECT_TRUE(notes.empty());
  ASSERT_EQ(dir->meta_servers(), 2u);
  const std::string second = fmt::format("127.0.0.1:{}", *meta + 1);
  EXPECT_EQ(dir->meta_listen(0), o.meta_listen);
  EXPECT_EQ(dir->meta_listen(1), second);
  EXPECT_EQ(dir->meta_address(), o.meta_listen + "," + second);
  // Data moved past the meta servers' ports.
  EXPECT_EQ(dir->data_address(), fmt::format("127.0.0.1:{}", *meta + 2));
  EXPECT_EQ(dir->store(), o.store);
  const std::string text = Read(dir->config());
  EXPECT_NE(text.find("store = \"" + o.store + "\""), std::string::npos) << text;
  EXPECT_EQ(text.find("meta.db"), std::string::npos) << text;
  EXPECT_TRUE(dir->CheckPortsFree(1).ok());
}

TEST(ClusterDir, SeveralMetaServersNeedASharedStoreAndNothingIsWritten) {
  TempDir tmp;
  ClusterDirOptions o = FreeOptions();
  o.meta_servers = 2;
  ClusterDirOrigin origin;
  std::vector<std::string> notes;
  auto dir = ClusterDir::OpenOrCreate(tmp / "c", o, &origin, &notes);
  ASSERT_FALSE(dir.ok());
  EXPECT_NE(dir.status().message().find("--store postgresql://"), std::string::npos)
      << dir.status().ToString();
  EXPECT_FALSE(std::filesystem::exists(tmp / "c"));
}

TEST(ClusterDir, AnEstablishedClusterKeepsItsStoreAndMetaServers) {
  TempDir tmp;
  ClusterDirOrigin origin;
  std::vector<std::string> notes;
  auto created = Established(tmp / "c", FreeOptions());
  ASSERT_TRUE(created.ok());
  EXPECT_EQ(created->store(), "sqlite://" + created->root() + "/meta.db");
  EXPECT_EQ(created->meta_servers(), 1u);
  const std::string before = Read(created->config());

  ClusterDirOptions other = FreeOptions();
  // A password no temp directory name contains (mkdtemp's six letters did "pw").
  other.store = "postgresql://t0fs:Secret-PW-42@db:5432/t0fs";
  auto moved = ClusterDir::OpenOrCreate(tmp / "c", other, &origin, &notes);
  ASSERT_FALSE(moved.ok());
  EXPECT_NE(moved.status().message().find("t0fs meta migrate"), std::string::npos)
      << moved.status().ToString();
  EXPECT_EQ(moved.status().message().find("Secret-PW-42"), std::string::npos)
      << "a password in a message";

  other = FreeOptions();
  other.meta_servers = 3;
  auto more = ClusterDir::OpenOrCreate(tmp / "c", other, &origin, &notes);
  ASSERT_FALSE(more.ok());
  EXPECT_NE(more.status().message().find("runs 1 meta server"), std::string::npos)
      << more.status().ToString();
  EXPECT_EQ(Read(created->config()), before);

  other.meta_servers = 1;  // as recorded: fine
  EXPECT_TRUE(ClusterDir::OpenOrCreate(tmp / "c", other, &origin, &notes).ok());
}

TEST(ClusterDir, AnUnfinishedClusterTakesTheStoreAskedForNow) {
  // A first start on a wrong --store failed before any data node registered:
  // the next `up` with the right one is not refused.
  TempDir tmp;
  ClusterDirOptions o = FreeOptions();
  o.store = "postgresql://t0fs@127.0.0.1:1/wrong";
  ClusterDirOrigin origin;
  std::vector<std::string> notes;
  ASSERT_TRUE(ClusterDir::OpenOrCreate(tmp / "c", o, &origin, &notes).ok());
  o.store = "postgresql://t0fs@127.0.0.1:5432/right";
  auto dir = ClusterDir::OpenOrCreate(tmp / "c", o, &origin, &notes);
  ASSERT_TRUE(dir.ok()) << dir.status().ToString();
  EXPECT_EQ(origin, ClusterDirOrigin::kCompleted);
  EXPECT_EQ(dir->store(), o.store);
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("written anew"), std::string::npos) << notes[0];
  // Asked for nothing in particular, it keeps what it has.
  notes.clear();
  o.store.clear();
  dir = ClusterDir::OpenOrCreate(tmp / "c", o, &origin, &notes);
  ASSERT_TRUE(dir.ok());
  EXPECT_EQ(dir->store(), "postgresql://t0fs@127.0.0.1:5432/right");
  EXPECT_TRUE(notes.empty());
}

TEST(ClusterDir, CheckPortsFreeNamesTheBusyAddress) {
  TempDir tmp;
  BusyPort busy;
  ClusterDirOptions o = FreeOptions();
  ClusterDirOrigin origin;
  std::vector<std::string> notes;
  ASSERT_TRUE(ClusterDir::OpenOrCreate(tmp / "c", o, &origin, &notes).ok());
  std::string config = Read(tmp / "c/t0fs.toml");
  size_t at = config.find(o.meta_listen);
  while (at != std::string::npos) {
    config.replace(at, o.meta_listen.size(), busy.address());
    at = config.find(o.meta_listen);
  }
  { std::ofstream(tmp / "c/t0fs.toml") << config; }
  auto dir = ClusterDir::Open(tmp / "c");
  ASSERT_TRUE(dir.ok());
  Status st = dir->CheckPortsFree(1);
  EXPECT_EQ(st.code(), StatusCode::kBusy);
  EXPECT_NE(st.ToString().find(busy.address()), std::string::npos) << st.ToString();
}

TEST(ClusterDir, RefusesADirectoryThatIsNotOurs) {
  TempDir tmp;
  fs::create_directories(tmp / "c");
  { std::ofstream(tmp / "c/thesis.tex") << "x"; }
  ClusterDirOrigin origin;
  std::vector<std::string> notes;
  auto dir = ClusterDir::OpenOrCreate(tmp / "c", FreeOptions(), &origin, &notes);
  ASSERT_FALSE(dir.ok());
  EXPECT_NE(dir.status().ToString().find("thesis.tex"), std::string::npos);
}

}  // namespace
}  // namespace t0fs::cli
