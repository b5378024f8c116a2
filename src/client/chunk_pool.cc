#include "client/chunk_pool.h"

#include <fmt/format.h>

#include <algorithm>

#include "common/logging.h"

namespace t0fs::client {

ChunkPool::ChunkPool(MetaClient& meta, DataClient& data, uint32_t batch)
    : meta_(meta), data_(data), batch_(std::min(batch, kMaxBatch)) {}

std::optional<PreparedChunk> ChunkPool::Take() {
  if (batch_ == 0 || !meta_.local_node().valid()) return std::nullopt;
  std::lock_guard lock(mu_);
  DropExpiredLocked();
  if (ready_.empty()) {
    if (std::chrono::steady_clock::now() < off_until_) return std::nullopt;
    if (Status st = Refill(); !st.ok()) {
      LOG_INFO("new files' chunk 0 is opened per create for {} s: preparing chunks failed: {}",
               kRetryAfter.count(), st.ToString());
      off_until_ = std::chrono::steady_clock::now() + kRetryAfter;
      return std::nullopt;
    }
  }
  PreparedChunk out = std::move(ready_.front());
  ready_.pop_front();
  return out;
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

Status ChunkPool::Refill() {
  ASSIGN_OR_RETURN(std::vector<PreparedChunkId> ids, meta_.ReserveChunks(batch_));
  ASSIGN_OR_RETURN(std::vector<std::shared_ptr<ChunkFile>> files, data_.PrepareLocal(ids));
  const auto now = std::chrono::steady_clock::now();
  for (size_t i = 0; i < files.size(); ++i) {
    // Held from now on: the data node keeps the files while we live.
    RETURN_IF_ERROR(files[i]->HoldWriter());
    ready_.push_back(PreparedChunk{ids[i], std::move(files[i]), now});
  }
  return Status::Ok();
}

}  // namespace t0fs::client
