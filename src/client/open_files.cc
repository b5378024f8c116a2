#include "client/open_files.h"

#include <sys/stat.h>

#include <algorithm>
#include <tuple>

#include "client/layout_cache.h"

namespace t0fs::client {

Result<Attr> OpenFiles::GetAttr(InodeId ino) {
  std::shared_ptr<InodeState> st = Find(ino);
  if (st && attr_cache_.value.count() > 0) {
    std::optional<Attr> cached;
    {
      std::lock_guard lock(st->mu);
      if (st->meta_attr && std::chrono::steady_clock::now() - st->meta_attr_at < attr_cache_.value) {
        cached = st->meta_attr;
      }
    }
    if (cached) return WithOpenState(*cached);
  }
  if (!st && attr_cache_.value.count() > 0) {
    std::lock_guard lock(dirs_mu_);
    auto it = dirs_.find(ino);
    if (it != dirs_.end()) {
      if (std::chrono::steady_clock::now() - it->second.at < attr_cache_.value) return it->second.attr;
      dirs_.erase(it);
    }
  }
  ASSIGN_OR_RETURN(Attr attr, meta_.GetAttr(ino));
  if (st) NoteMetaAttr(*st, attr);
  return WithOpenState(attr);
}

void OpenFiles::NoteMetaAttr(InodeState& st, const Attr& attr) {
  std::lock_guard lock(st.mu);
  st.meta_attr = attr;
  st.meta_attr_at = std::chrono::steady_clock::now();
}

void OpenFiles::NoteDirChanged(const Attr& dir) {
  if (attr_cache_.value.count() == 0) return;
  constexpr size_t kMaxDirs = 4096;  // directories changed within attr_cache: a few
  std::lock_guard lock(dirs_mu_);
  if (dirs_.size() >= kMaxDirs) dirs_.clear();
  dirs_[dir.ino] = DirAttr{dir, std::chrono::steady_clock::now()};
}

void OpenFiles::ForgetMetaAttr(InodeId ino) {
  {
    std::lock_guard lock(dirs_mu_);
    dirs_.erase(ino);
  }
  if (std::shared_ptr<InodeState> st = Find(ino)) {
    std::lock_guard lock(st->mu);
    st->meta_attr.reset();
  }
}

void OpenFiles::ForgetMetaAttrs() {
  {
    std::lock_guard lock(dirs_mu_);
    dirs_.clear();
  }
  std::vector<std::shared_ptr<InodeState>> open;
  {
    std::lock_guard lock(inodes_mu_);
    for (auto& [ino, weak] : inodes_) {
      if (auto st = weak.lock()) open.push_back(std::move(st));
    }
  }
  for (auto& st : open) {
    std::lock_guard lock(st->mu);
    st->meta_attr.reset();
  }
}

Attr OpenFiles::WithOpenState(Attr attr) {
  // Our own uncommitted writes are part of what this client sees: every
  // answer with attributes must say so (the kernel takes the size of a
  // LOOKUP or READDIRPLUS answer as it takes GETATTR's, and a reader would
  // stop at a committed size that our writes have passed).
  std::shared_ptr<InodeState> st = Find(attr.ino);
  if (!st) return attr;
  std::shared_ptr<ChunkFile> passthrough;
  {
    std::lock_guard lock(st->mu);
    attr.size = std::max(attr.size, st->size);
    if (st->write_generation != st->committed_generation) {
      attr.mtime = st->last_write;
      attr.ctime = st->last_write;
    }
    if (st->passthrough.writers > 0) passthrough = st->passthrough.file;
  }
  // The kernel writes a passthrough file behind our back: its chunk file
  // has the current size and times (it is the file while held).
  struct stat sb {};
  if (passthrough && ::fstat(passthrough->data_fd(), &sb) == 0) {
    attr.size = static_cast<uint64_t>(sb.st_size);
    Timespec mtime{sb.st_mtim.tv_sec, static_cast<uint32_t>(sb.st_mtim.tv_nsec)};
    if (std::tie(mtime.sec, mtime.nsec) > std::tie(attr.mtime.sec, attr.mtime.nsec)) {
      attr.mtime = mtime;
      attr.ctime = mtime;
    }
  }
  return attr;
}

std::shared_ptr<InodeState> OpenFiles::Acquire(const Attr& attr, bool writable) {
  std::lock_guard lock(inodes_mu_);
  auto& slot = inodes_[attr.ino];
  std::shared_ptr<InodeState> st = slot.lock();
  if (!st) {
    st = std::make_shared<InodeState>();
    st->ino = attr.ino;
    st->chunk_size = attr.chunk_size;
    st->size = attr.size;
    st->committed_size = attr.size;
    st->writable = writable;
    slot = st;
  } else {
    {
      std::lock_guard state_lock(st->mu);
      st->size = std::max(st->size, attr.size);
      st->committed_size = std::max(st->committed_size, attr.size);
    }
    LayoutCache::NoteOpen(*st, writable);
  }
  st->open_files++;
  return st;
}

bool OpenFiles::Forget(const std::shared_ptr<InodeState>& st) {
  std::lock_guard lock(inodes_mu_);
  if (--st->open_files != 0) return false;
  inodes_.erase(st->ino);
  return true;
}

std::shared_ptr<InodeState> OpenFiles::Find(InodeId ino) {
  std::lock_guard lock(inodes_mu_);
  auto it = inodes_.find(ino);
  return it != inodes_.end() ? it->second.lock() : nullptr;
}

Attr OpenFiles::FromMeta(const Attr& attr) {
  if (std::shared_ptr<InodeState> st = Find(attr.ino)) NoteMetaAttr(*st, attr);
  if (S_ISDIR(attr.mode)) {
    std::lock_guard lock(dirs_mu_);
    auto it = dirs_.find(attr.ino);
    if (it != dirs_.end()) it->second = DirAttr{attr, std::chrono::steady_clock::now()};
  }
  return WithOpenState(attr);
}

}  // namespace t0fs::client
