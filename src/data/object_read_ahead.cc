#include "data/object_read_ahead.h"

#include <algorithm>
#include <cstring>

namespace t0fs::data {

ObjectReadAhead::~ObjectReadAhead() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (ahead_thread_.joinable()) ahead_thread_.join();
}

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
  for (const Entry& e : entries_) kept += e.current.length + e.ahead.length;
  for (auto it = entries_.rbegin(); kept > kBudget && std::next(it) != entries_.rend(); ++it) {
    kept -= it->current.length + it->ahead.length;
    it->current = Window{};
    it->ahead = Window{};
  }
}

size_t ObjectReadAhead::Serve(Entry& e, const Window& window, uint64_t offset,
                              std::span<std::byte> out) {
  const size_t n = static_cast<size_t>(std::min<uint64_t>(out.size(), window.end() - offset));
  if (n > 0) std::memcpy(out.data(), window.bytes.get() + (offset - window.start), n);
  e.next = offset + n;
  ++hits_;
  return n;
}

void ObjectReadAhead::MaybeFetchAhead(Entry& e, const Fetch& fetch) {
  const Window& w = e.current;
  if (!w.bytes || w.at_end || e.ahead_pending || e.ahead.bytes) return;
  e.ahead_pending = true;
  tasks_.push_back(AheadTask{e.chunk, e.version, w.end(), e.window, fetch});
  e.window = std::min(e.window * 2, kMaxWindow);
  if (!ahead_thread_.joinable()) ahead_thread_ = std::thread([this] { AheadLoop(); });
  cv_.notify_all();
}

void ObjectReadAhead::AheadLoop() {
  std::unique_lock lock(mu_);
  for (;;) {
    cv_.wait(lock, [&] { return stopping_ || !tasks_.empty(); });
    if (stopping_) return;
    AheadTask task = std::move(tasks_.front());
    tasks_.pop_front();
    ++fetches_;
    ++fetched_ahead_;
    lock.unlock();
    std::unique_ptr<std::byte[]> bytes(new std::byte[task.size]);
    auto got = task.fetch(task.start, std::span(bytes.get(), task.size));
    lock.lock();
    for (Entry& e : entries_) {  // (not Find: a fetch ahead is no use of the entry)
      if (e.chunk != task.chunk || e.version != task.version || !e.ahead_pending) continue;
      e.ahead_pending = false;
      // Not kept when it failed (a reader fetches what it asks for), or the
      // reader went elsewhere meanwhile.
      if (got.ok() && e.current.bytes && e.current.end() == task.start) {
        e.ahead = Window{task.start, *got, *got < task.size, std::move(bytes)};
        Trim();
      }
      break;
    }
    cv_.notify_all();
  }
}

Result<size_t> ObjectReadAhead::Read(ChunkId chunk, uint64_t version, uint64_t offset,
                                     std::span<std::byte> out, const Fetch& fetch) {
  bool sequential = offset == 0;
  size_t window = kMinWindow;
  {
    std::unique_lock lock(mu_);
    for (;;) {
      Entry* e = Find(chunk, version);
      if (e == nullptr) break;
      if (e->current.Covers(offset, out.size())) {
        const size_t n = Serve(*e, e->current, offset, out);
        MaybeFetchAhead(*e, fetch);
        return n;
      }
      if (e->ahead.Covers(offset, out.size())) {  // the reader moved on: its next window
        e->current = std::move(e->ahead);
        e->ahead = Window{};
        const size_t n = Serve(*e, e->current, offset, out);
        MaybeFetchAhead(*e, fetch);
        return n;
      }
      // On its way: waited for, not fetched twice.
      if (e->ahead_pending && e->current.bytes && offset >= e->current.end() &&
          offset < e->current.end() + kMaxWindow) {
        if (stopping_) break;
        cv_.wait(lock);
        continue;  // (the entry may have gone meanwhile)
      }
      sequential = sequential || e->next == offset;
      if (e->next == offset) window = e->window;
      break;
    }
  }
  auto counted_fetch = [&](uint64_t at, std::span<std::byte> buf) {
    ++fetches_;
    return fetch(at, buf);
  };
  // Keeps what was fetched (a window, or none: where this read ended).
  auto keep = [&](Window fetched, uint64_t next) {
    std::lock_guard lock(mu_);
    Entry* e = Find(chunk, version);
    if (e == nullptr) {
      entries_.emplace_front();
      e = &entries_.front();
      e->chunk = chunk;
      e->version = version;
      while (entries_.size() > kEntries) entries_.pop_back();
    }
    if (fetched.bytes) {
      e->current = std::move(fetched);
      e->ahead = Window{};  // (a pending fetch ahead of the old window is not kept)
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
      keep(Window{offset, *got, *got < window, std::move(bytes)}, offset + n);
      return n;
    }
    // A bad block past the bytes asked for must not fail this read: those
    // alone are fetched again below (and fail only if they are bad).
  }
  auto got = counted_fetch(offset, out);
  if (got.ok()) keep(Window{}, offset + *got);
  return got;
}

}  // namespace t0fs::data
