// MetaClient: libt0fs's connection to the meta service, with one typed
// method per meta request (protobuf stays in meta_client.cc).
//
// - One session per Client, renewed in the background (lease/3). Renewal
//   also refreshes which data node is local (it may register after us).
// - Every call is retried on transport errors (meta restarting) and on
//   kTryAgain (meta's database failing over) until the
//   retry timeout, with backoff.
// - Mutating calls carry an OpToken (session, slot, seq) so a retry after a
//   lost reply is answered from meta's replay record instead of running
//   twice (a create retried after a meta crash does not fail with EEXIST).
//   A slot is held by one in-flight mutating call at a time.
// - If meta no longer knows the session (it expired), a new one is opened
//   and registered listeners re-open their handles (see SetSessionListener).
//
// Thread safety: safe for concurrent use.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "client/meta_api.h"
#include "common/fd.h"
#include "common/ids.h"
#include "rpc/channel.h"
#include "t0fs/client.h"

namespace t0fs::client {

// A new inode (MetaClient::MakeNode).
struct NewNode {
  InodeId parent;
  std::string_view name;
  uint32_t mode = 0;  // with the type bits (S_IFREG, S_IFDIR, S_IFLNK, ...)
  Caller owner;
  uint32_t rdev = 0;
  bool exclusive = true;  // regular files: false returns an existing file (O_CREAT without O_EXCL)
  std::string_view link_target;

  static NewNode Of(InodeId parent, std::string_view name, uint32_t mode, const Caller& owner) {
    NewNode node;
    node.parent = parent;
    node.name = name;
    node.mode = mode;
    node.owner = owner;
    return node;
  }
};

// What MakeNode answers.
struct MadeNode {
  Attr attr;
  bool created = true;         // false: an existing regular file (a non-exclusive create)
  std::optional<Attr> parent;  // the directory after the change (meta servers before 0.3 do not say)
};

// A chunk id reserved for this client's next creates (ReserveChunks): the
// volume of this node its files go to, meta's capability for the id.
struct PreparedChunkId {
  ChunkId chunk;
  VolumeId volume;
  Capability cap;
};

// What CreateOpen answers.
struct CreatedFile {
  OpenReply opened;
  bool created = true;
  std::optional<Attr> parent;
};

class MetaClient final : public MetaApi {
 public:
  // With several meta servers: how long a reply is waited for before the
  // request is sent to another server as well (the first reply wins, and
  // the silent server is left out a while), and how long before it is
  // given up (with one server: the rpc timeout).
  static constexpr std::chrono::seconds kHedgeAfter{1};
  static constexpr std::chrono::seconds kOtherServerAfter{15};
  // A session renewal that failed is tried again after this, doubled per
  // failure in a row (up to a third of the lease, the usual interval).
  static constexpr std::chrono::milliseconds kRenewRetry{1000};
  MetaClient(const ClientOptions& options, std::string secret);
  ~MetaClient() override;

  // Opens the session (fails fast: a wrong secret or unreachable meta is
  // reported at once, not retried).
  Status Connect();
  void Close();

  // ---- namespace
  Result<Attr> Lookup(InodeId parent, std::string_view name);
  Result<Attr> GetAttr(InodeId ino) override;
  // Changes the attributes `args.mask` names other than the size (see Truncate).
  Result<Attr> SetAttr(InodeId ino, const SetAttrArgs& args);
  Result<MadeNode> MakeNode(const NewNode& node);
  // A regular file created (or found: `node.exclusive` false) and opened in
  // one round trip; O_TRUNC in `flags` is not applied to an existing file.
  // With `first_chunk`, a new file comes with chunk 0 placed for this
  // client's node; with `prepared` too, chunk 0 takes that id (one of
  // ReserveChunks', its files prepared on that volume of this node).
  Result<CreatedFile> CreateOpen(const NewNode& node, int flags, bool first_chunk,
                                 const PreparedChunkId* prepared = nullptr);
  // `count` chunk ids for this client's node's next creates (ChunkPool).
  Result<std::vector<PreparedChunkId>> ReserveChunks(uint32_t count);
  // Unlink and Rmdir answer the directory's attributes after the change
  // (when meta sends them).
  Result<std::optional<Attr>> Unlink(InodeId parent, std::string_view name);
  Result<std::optional<Attr>> Rmdir(InodeId parent, std::string_view name);
  Status Rename(InodeId old_parent, std::string_view old_name, InodeId new_parent, std::string_view new_name,
                uint32_t flags);
  Result<Attr> Link(InodeId ino, InodeId new_parent, std::string_view new_name);
  Result<std::string> ReadLink(InodeId ino);
  Result<DirPage> ReadDir(InodeId dir, uint64_t cookie, uint32_t max_entries, bool with_attrs);
  Result<StatFs> GetStatFs();
  Result<std::string> GetXattr(InodeId ino, std::string_view name);
  Status SetXattr(InodeId ino, std::string_view name, std::string_view value, uint32_t flags);
  Result<std::vector<std::string>> ListXattr(InodeId ino);
  Status RemoveXattr(InodeId ino, std::string_view name);

  // ---- files (MetaApi: the data path's)
  // Registers a handle of this session; open(2) `flags` (O_TRUNC truncates).
  Result<OpenReply> Open(InodeId ino, int flags);
  Status Release(HandleId handle);
  // Release, batched in the background with the closes of other threads
  // (one transaction for all); Close sends what is left first. A batch meta
  // refused (its store failing, a full disk) is sent again after a backoff
  // (1 s doubling, at most kReleaseBackoffMax) until it is taken: a handle
  // left open in meta keeps an unlinked file's chunks until the session
  // ends, and its file from being offloaded. At Close a failure is logged:
  // the session's end releases every handle it still has.
  void ReleaseLater(HandleId handle);
  // Sent by the thread that sends ReleaseLater's batches.
  void ReportReplicaLater(const ReplicaInfo& replica, ReplicaProblem problem) override;
  static constexpr size_t kMaxLaterReports = 256;
  static constexpr std::chrono::seconds kReleaseBackoffMax{30};
  Result<std::vector<CachedChunk>> GetLayout(InodeId ino, uint64_t first, uint64_t count, bool write) override;
  Result<std::vector<CachedChunk>> Allocate(InodeId ino, const std::vector<uint64_t>& indices) override;
  Result<Attr> Commit(const CommitRequest& req) override;
  Result<Attr> Truncate(InodeId ino, uint64_t size, uint64_t keep_chunks) override;
  Status ReportReplica(const ReplicaInfo& replica, ReplicaProblem problem, const Status& why) override;

  // ---- other clients' changes (Client::PollChanges)
  // Asks every meta server, without retries: one that does not answer
  // makes the batch incomplete. With `wait`, a long poll: a server with
  // nothing new answers at its next change or after `wait`; the call
  // returns at the first answers, and the questions of the others stay in
  // flight for the next call (which waits for them as long again).
  Result<ChangeBatch> PollChanges(std::chrono::milliseconds wait = std::chrono::milliseconds(0));
  // Client::InterruptPollChanges.
  void InterruptPollChanges();
  // An answer to a change poll is waited for this long at most (past its `wait`).
  static constexpr std::chrono::seconds kChangesTimeout{5};

  // ---- cluster
  // Every data node meta knows and its TCP address.
  Result<std::vector<std::pair<NodeId, std::string>>> NodeAddresses();

  // ---- the session
  SessionId session() const;
  NodeId local_node() const override;
  std::string local_socket() const;
  // The cluster's id (meta's, from the session).
  std::string cluster_id() const;
  // Called (from the renewal thread) after a new session replaced an expired one.
  void SetSessionListener(std::function<void()> listener);

  // From now on no call (of this client, data calls included) retries an
  // unreachable service past now + `limit`, whatever its retry timeout.
  void LimitRetries(Duration limit);
  // When a retry loop that started at `start` gives up.
  std::chrono::steady_clock::time_point RetryDeadline(std::chrono::steady_clock::time_point start) const;

 private:
  struct Slot {
    uint32_t index;
    uint64_t seq;
  };
  // A read-only call of method M, retried on transport errors.
  template <rpc::Method M>
  Status Call(const rpc::RequestOf<M>& req, rpc::ReplyOf<M>* rsp);
  // A mutating call: fills req's token, retried with the same token.
  template <rpc::Method M>
  Status Mutate(rpc::RequestOf<M>& req, rpc::ReplyOf<M>* rsp);
  Status Retry(rpc::Method method, const std::function<Status()>& attempt);
  // Unlink or Rmdir.
  template <rpc::Method M>
  Result<std::optional<Attr>> Remove(InodeId parent, std::string_view name);
  Status OpenSession(SessionId resume);
  // Meta refused `refused` as expired: opens a new session unless another
  // thread already replaced that one (then the caller just retries with
  // the current session), and tells the listener of a new one.
  Status ReplaceSession(SessionId refused);
  void TellListener();
  Slot AcquireSlot();
  void ReleaseSlot(Slot slot);
  void RenewLoop();
  void ReleaseLoop();
  Status ReleaseBatch(const std::vector<HandleId>& handles);

  const ClientOptions options_;
  rpc::Channel channel_;

  std::mutex replace_mu_;  // one replacement of a refused session at a time (before mu_)
  mutable std::mutex mu_;  // guards the session fields, slots, stopping_
  SessionId session_;
  NodeId local_node_;
  std::string local_socket_;
  std::string cluster_id_;
  uint64_t lease_ms_ = 60000;
  std::vector<uint64_t> slot_seq_;   // last seq used per slot
  std::vector<uint32_t> free_slots_;
  std::function<void()> listener_;
  bool stopping_ = false;
  std::condition_variable cv_;
  std::thread renewer_;
  std::mutex release_mu_;  // guards releases_, release_stop_, release_backoff_
  std::condition_variable release_cv_;
  std::vector<HandleId> releases_;
  std::chrono::milliseconds release_backoff_{0};  // after a refused batch
  std::vector<std::pair<ReplicaInfo, ReplicaProblem>> later_reports_;
  bool release_stop_ = false;
  std::thread releaser_;
  // PollChanges: a channel of its own per meta server, and where its feed is.
  struct Feed {
    std::unique_ptr<rpc::Channel> channel;
    uint64_t epoch = 0;  // 0: not asked yet
    uint64_t next = 0;
    // A question in flight (a long poll left waiting by the last call).
    std::unique_ptr<rpc::Connection> asking;
    std::chrono::steady_clock::time_point late_after;  // its changes may be missed after
    std::chrono::steady_clock::time_point answer_by;   // or it counts as lost
    bool quick = false;                                // asked without a wait: answered at once
  };
  // PollChanges' halves: a question to `feed`, and the answer taken into
  // `batch` (true: the server has more to tell at once).
  Status AskChanges(Feed& feed, SessionId me, std::chrono::milliseconds wait);
  Result<bool> TakeChanges(Feed& feed, ChangeBatch& batch);
  std::mutex feeds_mu_;  // guards feeds_ (one poll at a time)
  std::vector<Feed> feeds_;
  UniqueFd changes_interrupt_;  // an eventfd: InterruptPollChanges ends a poll's wait
  // LimitRetries: steady-clock nanoseconds after which retries stop (0: none).
  std::atomic<int64_t> retry_limit_ns_{0};
  // Since when meta has not answered (steady clock, ns; 0: it answers):
  // Retry's deadline counts from then, so that while meta stays stopped or
  // hung past the retry timeout each request fails after one attempt
  // instead of waiting a minute of its own.
  std::atomic<int64_t> failing_since_ns_{0};
};

}  // namespace t0fs::client
