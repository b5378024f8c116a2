#include "data/scrubber.h"

#include <fmt/format.h>

#include "common/logging.h"

namespace t0fs::data {

Scrubber::Scrubber(ChunkStore& store, uint64_t rate, Duration pause)
    : store_(store), rate_(rate), pause_(pause) {
  if (rate_ > 0) thread_ = std::thread([this] { Loop(); });
}

Scrubber::~Scrubber() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

std::vector<pb::ReplicaProblem> Scrubber::TakeProblems() {
  std::lock_guard lock(mu_);
  std::vector<pb::ReplicaProblem> out;
  out.swap(problems_);
  return out;
}

void Scrubber::Report(VolumeId volume, ChunkId chunk, const std::string& detail) {
  std::lock_guard lock(mu_);
  if (!reported_.insert(chunk).second) return;
  pb::ReplicaProblem p;
  p.set_chunk(chunk.value());
  p.set_volume(volume.value());
  p.set_detail(detail);
  problems_.push_back(std::move(p));
}

bool Scrubber::Sleep(std::chrono::steady_clock::duration d) {
  std::unique_lock lock(mu_);
  return !cv_.wait_for(lock, d, [&] { return stopping_; });
}

void Scrubber::Loop() {
  if (!Sleep(std::chrono::seconds(1))) return;
  for (;;) {
    for (VolumeId volume : store_.Volumes()) {
      bool eof = false;
      for (ChunkId after; !eof;) {
        auto page = store_.List(volume, after, 1000, &eof);
        if (!page.ok()) break;
        for (const ChunkListing& c : *page) {
          after = c.chunk;
          auto start = std::chrono::steady_clock::now();
          Status st = store_.Verify(volume, c.chunk);
          if (st.code() == StatusCode::kDataChecksum || st.code() == StatusCode::kCorruption) {
            LOG_ERROR("scrub: chunk {} on volume {}: {}", c.chunk, volume, st.ToString());
            Report(volume, c.chunk, st.ToString());
          }
          bytes_ += c.length;
          // Spend at most `rate_` bytes/s on verification.
          auto budget = std::chrono::nanoseconds(c.length * 1000000000ull / rate_);
          auto spent = std::chrono::steady_clock::now() - start;
          if (spent < budget && !Sleep(budget - spent)) return;
          std::lock_guard lock(mu_);
          if (stopping_) return;
        }
        if (page->empty()) break;
      }
    }
    ++passes_;
    {
      std::lock_guard lock(mu_);
      reported_.clear();
    }
    if (!Sleep(pause_.value)) return;
  }
}

}  // namespace t0fs::data
