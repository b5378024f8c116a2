#include "meta/store/posix_store.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <random>
#include <thread>

#include "common/logging.h"
#include "common/secret.h"
#include "meta/store/store_util.h"

namespace t0fs::meta {
namespace {

constexpr std::string_view kClusterIdKey = "cluster_id";
constexpr std::string_view kCreatedKey = "created";

// A random (version 4) UUID in its text form.
std::string NewUuid() {
  std::string bytes = RandomBytes(16);
  bytes[6] = static_cast<char>((bytes[6] & 0x0f) | 0x40);
  bytes[8] = static_cast<char>((bytes[8] & 0x3f) | 0x80);
  std::string hex = HexEncode(bytes);
  return fmt::format("{}-{}-{}-{}-{}", hex.substr(0, 8), hex.substr(8, 4), hex.substr(12, 4),
                     hex.substr(16, 4), hex.substr(20));
}

// Creates the root directory and the cluster id of a new store, in one
// transaction: a crash during creation leaves an empty store, created again
// at the next open. Returns the cluster id, new or found.
Result<std::string> PrepareStore(WriteTxn& txn, std::string_view engine) {
  ASSIGN_OR_RETURN(std::optional<std::string> id, txn.GetProperty(kClusterIdKey));
  if (id) return std::move(*id);
  ASSIGN_OR_RETURN(std::optional<InodeRow> root, txn.GetInode(kRootInode));
  if (root) {
    return Status(StatusCode::kMetaSchema, "the metadata store has a root but no cluster id");
  }
  const Timespec now = WallNow();
  InodeRow row;
  row.attr.ino = kRootInode;
  row.attr.mode = S_IFDIR | 0755;
  row.attr.nlink = 2;
  row.attr.atime = row.attr.mtime = row.attr.ctime = now;
  row.attr.generation = 1;
  row.parent = kRootInode;
  RETURN_IF_ERROR(txn.PutInode(row));
  RETURN_IF_ERROR(txn.ReserveId(Counter::kInode, kRootInode.value()));
  std::string cluster_id = NewUuid();
  RETURN_IF_ERROR(txn.PutProperty(kClusterIdKey, cluster_id));
  RETURN_IF_ERROR(txn.PutProperty(kCreatedKey, fmt::format("{}.{:09}", now.sec, now.nsec)));
  RETURN_IF_ERROR(txn.Commit());
  LOG_DEBUG("created metadata store on {} (cluster {})", engine, cluster_id);
  return cluster_id;
}

}  // namespace

Result<std::unique_ptr<PosixStore>> PosixStore::Open(std::unique_ptr<Engine> engine,
                                                     const PosixStoreOptions& opts) {
  if (engine == nullptr) return Status(StatusCode::kInvalidArgument, "no metadata engine");
  std::string cluster_id;
  for (int attempt = 0;; ++attempt) {
    auto txn = engine->BeginWrite(WriteOptions{.durable = true});
    Result<std::string> prepared = txn.ok() ? PrepareStore(**txn, engine->name()) : txn.status();
    if (prepared.ok()) {
      cluster_id = std::move(prepared).value();
      break;
    }
    // Two servers creating one store at once: one wins, the other retries.
    if (prepared.status().code() != StatusCode::kTryAgain || attempt + 1 >= opts.max_attempts) {
      return prepared.status();
    }
  }
  return std::unique_ptr<PosixStore>(
      new PosixStore(std::move(engine), opts, std::move(cluster_id)));
}

PosixStore::PosixStore(std::unique_ptr<Engine> engine, PosixStoreOptions opts,
                       std::string cluster_id)
    : engine_(std::move(engine)), opts_(opts), cluster_id_(std::move(cluster_id)) {}

PosixStore::~PosixStore() = default;

Status PosixStore::Retry(const std::function<Status()>& attempt) {
  // Full jitter over an exponential window (1 ms doubling, capped at 100 ms):
  // writers that conflicted on one hot row (a shared directory) spread out
  // instead of meeting again.
  thread_local std::minstd_rand rng(std::random_device{}());
  Status st;
  for (int i = 0; i < std::max(opts_.max_attempts, 1); ++i) {
    if (i > 0) {
      const int window_us = std::min(1000 << std::min(i - 1, 7), 100000);
      std::this_thread::sleep_for(std::chrono::microseconds(
          std::uniform_int_distribution<int>(window_us / 2, window_us)(rng)));
    }
    st = attempt();
    if (st.code() != StatusCode::kTryAgain) return st;
  }
  return st;
}

Status PosixStore::Mutate(const OpToken& token, const Body& body, const Replay& replay,
                          bool durable, const Prefetch& prefetch) {
  return Retry([&] { return MutateOnce(token, body, replay, durable, prefetch); });
}

Status PosixStore::MutateOnce(const OpToken& token, const Body& body, const Replay& replay,
                              bool durable, const Prefetch& prefetch) {
  const WriteOptions wopts{.durable = durable};
  ASSIGN_OR_RETURN(std::unique_ptr<WriteTxn> txn, engine_->BeginWrite(wopts));
  if (prefetch) RETURN_IF_ERROR(prefetch(*txn));
  const bool record = token.session.valid();
  // The outcome recorded for `token` earlier, when it is this very request.
  auto recorded = [&](WriteTxn& t) -> Result<std::optional<ReplayRow>> {
    ASSIGN_OR_RETURN(std::optional<ReplayRow> prior, t.GetReplay(token.session, token.slot));
    if (prior && prior->seq != token.seq) prior.reset();
    return prior;
  };
  auto answer = [&](WriteTxn& t, const ReplayRow& prior) -> Status {
    if (prior.code != StatusCode::kOk) return Status(prior.code, prior.message);
    if (!replay) return Status::Ok();
    return replay(t, Outcome{prior.ino, prior.handle, prior.flag});
  };
  if (record) {
    ASSIGN_OR_RETURN(std::optional<ReplayRow> slot, txn->GetReplay(token.session, token.slot));
    if (slot && slot->seq == token.seq) return answer(*txn, *slot);  // nothing written
    if (!slot) RETURN_IF_ERROR(internal::RequireSession(*txn, token.session));
  }
  Outcome out;
  Status st = body(*txn, out);
  if (internal::IsEngineError(st)) return st;  // `txn` rolls back everything
  if (!st.ok()) {
    if (!record) return st;  // nothing to apply, nothing to record
    // The failed body's writes are dropped; the outcome is recorded alone,
    // unless a retry of the same request recorded one meanwhile.
    txn.reset();
    ASSIGN_OR_RETURN(txn, engine_->BeginWrite(wopts));
    ASSIGN_OR_RETURN(std::optional<ReplayRow> prior, recorded(*txn));
    if (prior) return answer(*txn, *prior);
    out = Outcome{};
  }
  if (record) {
    RETURN_IF_ERROR(txn->PutReplay(ReplayRow{token.session, token.slot, token.seq, st.code(),
                                             st.ok() ? std::string() : st.message(), out.ino,
                                             out.handle, out.flag}));
  }
  RETURN_IF_ERROR(txn->Commit());
  return st;
}

Status PosixStore::Write(const std::function<Status(WriteTxn&)>& body) {
  return Mutate(OpToken{}, [&](WriteTxn& txn, Outcome&) { return body(txn); });
}

Status PosixStore::Read(const std::function<Status(ReadTxn&)>& body) {
  return Retry([&]() -> Status {
    ASSIGN_OR_RETURN(std::unique_ptr<ReadTxn> txn, engine_->BeginRead());
    return body(*txn);
  });
}

}  // namespace t0fs::meta
