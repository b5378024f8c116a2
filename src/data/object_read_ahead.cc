#include "data/object_read_ahead.h"

#include <algorithm>
#include <cstring>

namespace t0fs::data {

ObjectReadAhead::Entry* ObjectReadAhead::Find(ChunkId chunk, uint64_t version) {
  for (auto it = entries_.begin(); it != entries_.end(); ++it) {
    if (it->chunk != chunk || it->version != version) continue;
    entries_.splice(entries_.begin(), entries_, it);
    return &entries_.front();
  }
  return nullptr;
}

void ObjectReadAhead::Trim() {
  size_t kept = 0;
  for (const Entry& e : entries_) kept += e.length;
  for (auto it = entries_.rbegin(); kept > kBudget && std::next(it) != entries_.rend(); ++it) {
    kept -= it->length;
    it->length = 0;
    it->at_end = false;
    it->bytes.reset();
  }
}

Result<size_t> ObjectReadAhead::Read(ChunkId chunk, uint64_t version, uint64_t offset,
                                     std::span<std::byte> out, const Fetch& fetch) {
  bool sequential = offset == 0;
  size_t window = kMinWindow;
  {
    std::lock_guard lock(mu_);
    if (Entry* e = Find(chunk, version)) {
      const uint64_t end = e->start + e->length;
      // Kept: every byte asked for, or all there is up to the object's end.
      if (offset >= e->start && (offset + out.size() <= end || (e->at_end && offset <= end))) {
        const size_t n = static_cast<size_t>(std::min<uint64_t>(out.size(), end - offset));
        if (n > 0) std::memcpy(out.data(), e->bytes.get() + (offset - e->start), n);
        e->next = offset + n;
        ++hits_;
        return n;
      }
      sequential = sequential || e->next == offset;
      if (e->next == offset) window = e->window;
    }
  }
  auto counted_fetch = [&](uint64_t at, std::span<std::byte> buf) {
    {
      std::lock_guard lock(mu_);
      ++fetches_;
    }
    return fetch(at, buf);
  };
  // Keeps what was fetched (a window, or none: where this read ended).
  auto keep = [&](std::unique_ptr<std::byte[]> bytes, size_t length, bool at_end, uint64_t next) {
    std::lock_guard lock(mu_);
    Entry* e = Find(chunk, version);
    if (e == nullptr) {
      entries_.emplace_front();
      e = &entries_.front();
      e->chunk = chunk;
      e->version = version;
      while (entries_.size() > kEntries) entries_.pop_back();
    }
    if (bytes) {
      e->start = offset;
      e->length = length;
      e->at_end = at_end;
      e->bytes = std::move(bytes);
      e->window = std::min(window * 2, kMaxWindow);
      Trim();
    }
    e->next = next;
  };
  if (sequential && out.size() < window) {
    std::unique_ptr<std::byte[]> bytes(new std::byte[window]);
    auto got = counted_fetch(offset, std::span(bytes.get(), window));
    if (got.ok()) {
      const size_t n = std::min(*got, out.size());
      std::memcpy(out.data(), bytes.get(), n);
      keep(std::move(bytes), *got, *got < window, offset + n);
      return n;
    }
    // A bad block past the bytes asked for must not fail this read: those
    // alone are fetched again below (and fail only if they are bad).
  }
  auto got = counted_fetch(offset, out);
  if (got.ok()) keep(nullptr, 0, false, offset + *got);
  return got;
}

uint64_t ObjectReadAhead::hits() const {
  std::lock_guard lock(mu_);
  return hits_;
}

uint64_t ObjectReadAhead::fetches() const {
  std::lock_guard lock(mu_);
  return fetches_;
}

}  // namespace t0fs::data
