#include "client/chunk_pool.h"

#include <fmt/format.h>

#include <algorithm>

#include "common/logging.h"

namespace t0fs::client {

ChunkPool::ChunkPool(MetaClient& meta, DataClient& data, uint32_t batch)
    : meta_(meta), data_(data), batch_(std::min(batch, kMaxBatch)) {}

ChunkPool::~ChunkPool() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  refill_cv_.notify_all();
  if (refiller_.joinable()) refiller_.join();
}

std::optional<PreparedChunk> ChunkPool::Take() {
  return Take(/*retry=*/true);
}

std::optional<PreparedChunk> ChunkPool::Take(bool retry) {
  if (batch_ == 0 || !meta_.local_node().valid()) return std::nullopt;
  std::unique_lock lock(mu_);
  DropExpiredLocked();
  if (ready_.empty()) {
    if (std::chrono::steady_clock::now() < off_until_) return std::nullopt;
    // Wait for the refill under way, or for one asked now; a failed one
    // sets off_until_ (and the create goes on without the pool). Twice at
    // most: the batch that ended first may have been asked before this
    // wait, and others took it.
    for (int waits = 0;
         waits < 2 && ready_.empty() && !stop_ && std::chrono::steady_clock::now() >= off_until_;
         ++waits) {
      WantRefillLocked();
      const uint64_t ended = refills_ended_;
      ready_cv_.wait(lock, [&] { return !ready_.empty() || stop_ || refills_ended_ > ended; });
    }
    if (ready_.empty()) return std::nullopt;
  }
  PreparedChunk out = std::move(ready_.front());
  ready_.pop_front();
  // Kept by the data node still? One that restarted forgot the files it
  // prepared (another writer of the chunk would make other ones): those
  // prepared before it go.
  auto kept = out.file->KeeperAlive();
  if (!kept.ok() || !*kept) {
    ready_.clear();
    if (!retry) {  // a batch prepared just now is not kept either: an older data node
      LOG_INFO(
          "new files' chunk 0 is opened per create for {} s: the data node does not keep "
          "the files it prepares (an older version?)",
          kRetryAfter.count());
      off_until_ = std::chrono::steady_clock::now() + kRetryAfter;
      return std::nullopt;
    }
    LOG_DEBUG(
        "prepared chunk {}: the data node no longer keeps its files (it restarted): the "
        "pool is emptied",
        out.id.chunk);
    lock.unlock();
    return Take(/*retry=*/false);
  }
  if (ready_.size() < batch_ && std::chrono::steady_clock::now() >= off_until_) WantRefillLocked();
  return out;
}

void ChunkPool::WantRefillLocked() {
  if (stop_ || want_refill_ || refilling_) return;
  want_refill_ = true;
  if (!refiller_.joinable()) {
    refiller_ = std::thread([this] { RunRefills(); });
  }
  refill_cv_.notify_one();
}

void ChunkPool::RunRefills() {
  std::unique_lock lock(mu_);
  for (;;) {
    refill_cv_.wait(lock, [&] { return want_refill_ || stop_; });
    if (stop_) return;
    want_refill_ = false;
    refilling_ = true;
    lock.unlock();
    Result<std::vector<PreparedChunk>> batch = Prepare();
    lock.lock();
    refilling_ = false;
    ++refills_ended_;
    if (batch.ok()) {
      const bool whole = batch->size() == batch_;
      for (PreparedChunk& c : *batch) ready_.push_back(std::move(c));
      // Creates took more than a batch meanwhile: another one at once.
      if (whole && ready_.size() < batch_) want_refill_ = true;
    } else {
      LOG_INFO("new files' chunk 0 is opened per create for {} s: preparing chunks failed: {}",
               kRetryAfter.count(), batch.status().ToString());
      off_until_ = std::chrono::steady_clock::now() + kRetryAfter;
    }
    ready_cv_.notify_all();
  }
}

void ChunkPool::DropExpiredLocked() {
  constexpr uint64_t kMarginMs = 60'000;  // the create's round trip and the clocks of meta's servers
  const uint64_t now = WallMillis();
  const auto oldest = std::chrono::steady_clock::now() - kMaxAge;
  std::erase_if(ready_, [&](const PreparedChunk& c) {
    return c.prepared_at < oldest || c.id.cap.expiry_ms < now + kMarginMs;
  });
}

void ChunkPool::Return(PreparedChunk chunk) {
  std::lock_guard lock(mu_);
  ready_.push_front(std::move(chunk));
}

void ChunkPool::Recycle(std::shared_ptr<ChunkFile> file) {
  if (batch_ == 0 || !file) return;
  // Held again (a passthrough writer let go at its close): the node keeps
  // unnamed files a writer holds, and drops the others after a while.
  if (!file->holds_writer() && !file->HoldWriter().ok()) return;
  std::lock_guard lock(mu_);
  if (stop_) return;
  recycled_.push_back(Recycled{std::move(file), std::chrono::steady_clock::now()});
  if (recycled_.size() > kMaxRecycled) recycled_.pop_front();  // closed: the node lets them go
}

Result<std::vector<PreparedChunk>> ChunkPool::Prepare() {
  ASSIGN_OR_RETURN(std::vector<PreparedChunkId> ids, meta_.ReserveChunks(batch_));
  // The newest recycled files first: the older may have been let go by the
  // node meanwhile (it drops unnamed empty files nobody holds after a while).
  std::vector<std::shared_ptr<ChunkFile>> reuse;
  {
    std::lock_guard lock(mu_);
    const auto oldest = std::chrono::steady_clock::now() - kMaxAge;
    while (!recycled_.empty() && reuse.size() < ids.size()) {
      Recycled r = std::move(recycled_.back());
      recycled_.pop_back();
      if (r.since >= oldest) reuse.push_back(std::move(r.file));
    }
  }
  ASSIGN_OR_RETURN(std::vector<std::shared_ptr<ChunkFile>> files, data_.PrepareLocal(ids, reuse));
  const auto now = std::chrono::steady_clock::now();
  std::vector<PreparedChunk> out;
  for (size_t i = 0; i < files.size() && i < ids.size(); ++i) {
    // Held from now on: the data node keeps the files while we live.
    RETURN_IF_ERROR(files[i]->HoldWriter());
    out.push_back(PreparedChunk{ids[i], std::move(files[i]), now});
  }
  return out;
}

}  // namespace t0fs::client
