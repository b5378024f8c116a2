// AdminClient over RPC against a fake meta and a fake data node (rpc::Server
// on loopback with canned handlers): what each call asks, and how the
// answer arrives in the plain records of t0fs/admin.h.
#include <gtest/gtest.h>

#include <mutex>

#include "rpc/proto/data.pb.h"
#include "rpc/proto/meta.pb.h"
#include "rpc/server.h"
#include "t0fs/admin.h"

namespace t0fs::client {
namespace {

using rpc::Method;

const std::string kAdminSecret(64, 'a');

// A server on a loopback port with the given handlers.
std::unique_ptr<rpc::Server> StartServer(std::vector<std::pair<Method, rpc::Handler>> handlers) {
  rpc::ServerOptions opts;
  opts.name = "fake";
  opts.secret = kAdminSecret;
  opts.listen = {*rpc::Endpoint::Parse("127.0.0.1:0")};
  auto server = std::make_unique<rpc::Server>(opts, std::move(handlers));
  EXPECT_TRUE(server->Start().ok());
  return server;
}

// Meta with two nodes (one with two volumes), a check with one problem and
// one chunk below its objective, and 3 chunk replicas listed in pages of
// at most 2. Records the admin requests it gets.
class AdminRpcTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::vector<std::pair<Method, rpc::Handler>> h;
    h.push_back(rpc::Handle<Method::kClusterStatus>(
        [this](const pb::Empty&, pb::ClusterStatusRsp& rsp, rpc::Call& call) {
          Record(call.peer_role);
          rsp.set_cluster_id("c-1");
          rsp.set_files(7);
          rsp.set_under_replicated(2);
          rsp.set_copy_rate_bps(1.5);
          rsp.set_metrics_address("127.0.0.1:9000");
          auto* n = rsp.add_nodes();
          n->set_node(1);
          n->set_address(data_address_);
          n->set_state("up");
          n->set_host_id("h1");
          n->set_tcp_read_bytes(10);
          n->set_local_opens(3);
          for (uint64_t vol : {1, 2}) {
            auto* v = n->add_volumes();
            v->set_volume(vol);
            v->set_path("/v" + std::to_string(vol));
            v->set_total_bytes(100);
            v->set_free_bytes(40);
            v->set_chunks(5);
          }
          auto* lost = rsp.add_nodes();
          lost->set_node(2);
          lost->set_state("down");
          lost->set_lost(true);
          return Status::Ok();
        }));
    h.push_back(rpc::Handle<Method::kFsck>([](const pb::Empty&, pb::FsckRsp& rsp, rpc::Call&) {
      rsp.set_inodes(4);
      rsp.set_chunks(3);
      rsp.add_problems("dentry 5 points to no inode");
      rsp.add_below_objective("chunk 9 has 1 of 2");
      return Status::Ok();
    }));
    h.push_back(rpc::Handle<Method::kChunkList>(
        [this](const pb::ChunkListReq& req, pb::ChunkListRsp& rsp, rpc::Call&) {
          Record("after=" + std::to_string(req.after()));
          for (uint64_t chunk : {10, 11, 12}) {
            if (chunk <= req.after() || rsp.chunks_size() == 2) continue;
            auto* c = rsp.add_chunks();
            c->set_chunk(chunk);
            c->set_node(1);
            c->set_ino(100 + chunk);
            c->set_version(1);
            c->set_garbage(chunk == 12);
          }
          rsp.set_eof(rsp.chunks_size() == 0 || rsp.chunks(rsp.chunks_size() - 1).chunk() == 12);
          return Status::Ok();
        }));
    h.push_back(rpc::Handle<Method::kNodeAdmin>(
        [this](const pb::NodeAdminReq& req, pb::Empty&, rpc::Call&) {
          if (req.node() != 1)
            return Status(StatusCode::kNotFound, "no node " + std::to_string(req.node()));
          Record(req.admin_state() == pb::NODE_DRAINING ? "drain" : "undrain");
          return Status::Ok();
        }));
    std::vector<std::pair<Method, rpc::Handler>> d;
    d.push_back(rpc::Handle<Method::kListChunks>(
        [this](const pb::ListChunksReq& req, pb::ListChunksRsp& rsp, rpc::Call&) {
          Record("volume=" + std::to_string(req.volume()));
          if (req.volume() != 1) return Status(StatusCode::kNotFound, "no volume");
          if (req.after() == 0) {
            rsp.add_chunks()->set_chunk(10);
            rsp.mutable_chunks(0)->set_length(4096);
            rsp.mutable_chunks(0)->set_version(2);
            rsp.mutable_chunks(0)->set_volume(1);
          }
          rsp.set_eof(req.after() != 0);
          return Status::Ok();
        }));
    data_ = StartServer(std::move(d));
    data_address_ = data_->bound(0).ToString();
    meta_ = StartServer(std::move(h));
    AdminClient::Options options;
    options.meta = meta_->bound(0).ToString();
    options.secret = kAdminSecret;
    auto admin = AdminClient::Open(options);
    ASSERT_TRUE(admin.ok()) << admin.status().ToString();
    admin_ = std::move(*admin);
  }
  void TearDown() override {
    meta_->Stop();
    data_->Stop();
  }

  void Record(const std::string& what) {
    std::lock_guard lock(mu_);
    seen_.push_back(what);
  }
  std::vector<std::string> Seen() {
    std::lock_guard lock(mu_);
    return seen_;
  }

  std::unique_ptr<rpc::Server> meta_, data_;
  std::string data_address_;
  std::unique_ptr<AdminClient> admin_;
  std::mutex mu_;
  std::vector<std::string> seen_;  // guarded by mu_
};

TEST_F(AdminRpcTest, StatusArrivesAsPlainRecords) {
  auto status = admin_->GetStatus();
  ASSERT_TRUE(status.ok()) << status.status().ToString();
  EXPECT_EQ(Seen(), std::vector<std::string>{"admin"});  // the role it speaks as
  EXPECT_EQ(status->cluster_id, "c-1");
  EXPECT_EQ(status->files, 7u);
  EXPECT_EQ(status->under_replicated, 2u);
  EXPECT_EQ(status->copy_rate_bps, 1.5);
  EXPECT_EQ(status->metrics_address, "127.0.0.1:9000");
  ASSERT_EQ(status->nodes.size(), 2u);
  const NodeStatus& n = status->nodes[0];
  EXPECT_EQ(n.node, NodeId(1));
  EXPECT_EQ(n.state, "up");
  EXPECT_FALSE(n.lost);
  EXPECT_EQ(status->nodes[1].state, "down");
  EXPECT_TRUE(status->nodes[1].lost);
  EXPECT_EQ(n.host_id, "h1");
  EXPECT_EQ(n.tcp_read_bytes, 10u);
  EXPECT_EQ(n.local_opens, 3u);
  ASSERT_EQ(n.volumes.size(), 2u);
  EXPECT_EQ(n.volumes[1].volume, VolumeId(2));
  EXPECT_EQ(n.volumes[1].path, "/v2");
  EXPECT_EQ(n.volumes[1].free_bytes, 40u);
  EXPECT_EQ(n.volumes[1].chunks, 5u);
  auto nodes = admin_->Nodes();
  ASSERT_TRUE(nodes.ok());
  EXPECT_EQ(nodes->size(), 2u);
}

TEST_F(AdminRpcTest, NamespaceCheckTellsProblemsFromChunksBelowObjective) {
  auto check = admin_->CheckNamespace();
  ASSERT_TRUE(check.ok()) << check.status().ToString();
  EXPECT_EQ(check->inodes, 4u);
  EXPECT_EQ(check->chunks, 3u);
  EXPECT_EQ(check->problems, std::vector<std::string>{"dentry 5 points to no inode"});
  EXPECT_EQ(check->below_objective, std::vector<std::string>{"chunk 9 has 1 of 2"});
}

TEST_F(AdminRpcTest, ChunkRefsFollowEveryPage) {
  auto refs = admin_->ChunkRefs();
  ASSERT_TRUE(refs.ok()) << refs.status().ToString();
  ASSERT_EQ(refs->size(), 3u);
  EXPECT_EQ((*refs)[0].chunk, ChunkId(10));
  EXPECT_EQ((*refs)[0].ino, InodeId(110));
  EXPECT_FALSE((*refs)[1].garbage);
  EXPECT_TRUE((*refs)[2].garbage);
  EXPECT_EQ(Seen(), (std::vector<std::string>{"after=0", "after=11"}));
}

TEST_F(AdminRpcTest, ChunkFilesAskTheDataNode) {
  auto files = admin_->StoredChunks(data_address_, VolumeId(1));
  ASSERT_TRUE(files.ok()) << files.status().ToString();
  ASSERT_EQ(files->size(), 1u);
  EXPECT_EQ((*files)[0].chunk, ChunkId(10));
  EXPECT_EQ((*files)[0].length, 4096u);
  EXPECT_EQ((*files)[0].version, 2u);
  EXPECT_EQ(admin_->StoredChunks(data_address_, VolumeId(2)).status().code(),
            StatusCode::kNotFound);
  EXPECT_EQ(admin_->StoredChunks("not an address", VolumeId(1)).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(Seen(), (std::vector<std::string>{"volume=1", "volume=1", "volume=2"}));
}

TEST_F(AdminRpcTest, DrainAndUndrain) {
  EXPECT_TRUE(admin_->Drain(NodeId(1)).ok());
  EXPECT_TRUE(admin_->Undrain(NodeId(1)).ok());
  EXPECT_EQ(admin_->Drain(NodeId(9)).code(), StatusCode::kNotFound);
  EXPECT_EQ(Seen(), (std::vector<std::string>{"drain", "undrain"}));
}

TEST_F(AdminRpcTest, WrongSecretIsRefused) {
  AdminClient::Options options;
  options.meta = meta_->bound(0).ToString();
  options.secret = std::string(64, 'x');
  auto admin = AdminClient::Open(options);
  ASSERT_TRUE(admin.ok());
  EXPECT_FALSE((*admin)->GetStatus().ok());
}

}  // namespace
}  // namespace t0fs::client
