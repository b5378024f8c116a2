// MemFile (mem_file.h): reads, writes, truncate and fallocate on the bytes
// of a MemClient inode, under the client's lock; no passthrough.
#include "fuse/testing/mem_file.h"

#include <fcntl.h>

#include <algorithm>
#include <atomic>
#include <cstring>

#include "fuse/testing/mem_inode.h"

namespace t0fs::fuse::testing {

using client::Attr;

class MemFile : public client::File {
 public:
  MemFile(MemClient* owner, InodeId ino, int flags) : owner_(owner), ino_(ino), flags_(flags) {}
  ~MemFile() override { (void)Close(); }

  Result<size_t> Read(uint64_t offset, std::span<std::byte> buf) override {
    owner_->RunHook("read");
    std::lock_guard lock(owner_->mu_);
    if (closed_) return Status(StatusCode::kBadHandle, "read after close");
    MemClient::Inode* inode = owner_->Find(ino_);
    if (inode == nullptr) return Status(StatusCode::kStale, "inode gone");
    if (offset >= inode->data.size()) return size_t(0);
    size_t n = std::min<uint64_t>(buf.size(), inode->data.size() - offset);
    std::memcpy(buf.data(), inode->data.data() + offset, n);
    return n;
  }

  Result<size_t> Write(uint64_t offset, std::span<const std::byte> data) override {
    std::lock_guard lock(owner_->mu_);
    if (closed_) return Status(StatusCode::kBadHandle, "write after close");
    if ((flags_ & O_ACCMODE) == O_RDONLY) return Status(StatusCode::kBadHandle, "read-only");
    MemClient::Inode* inode = owner_->Find(ino_);
    if (inode == nullptr) return Status(StatusCode::kStale, "inode gone");
    if (flags_ & O_APPEND) offset = inode->data.size();
    if (offset > kMaxFileSize || data.size() > kMaxFileSize - offset) {
      return Status(StatusCode::kFileTooBig, "MemClient file size limit");
    }
    if (offset + data.size() > inode->data.size()) inode->data.resize(offset + data.size());
    std::memcpy(inode->data.data() + offset, data.data(), data.size());
    inode->attr.size = inode->data.size();
    inode->Touch(true);
    return data.size();
  }

  Status Flush() override {
    owner_->RunHook("flush");
    return closed_ ? Status(StatusCode::kBadHandle) : Status::Ok();
  }
  Status Fsync(bool) override { return closed_ ? Status(StatusCode::kBadHandle) : Status::Ok(); }

  Status Truncate(uint64_t size) override {
    std::lock_guard lock(owner_->mu_);
    MemClient::Inode* inode = owner_->Find(ino_);
    if (inode == nullptr) return Status(StatusCode::kStale, "inode gone");
    if (size > kMaxFileSize) return Status(StatusCode::kFileTooBig, "MemClient file size limit");
    inode->data.resize(size);
    inode->attr.size = size;
    inode->Touch(true);
    return Status::Ok();
  }

  // As client::File documents it: mode 0 extends, KEEP_SIZE does nothing
  // visible, PUNCH_HOLE|KEEP_SIZE and ZERO_RANGE zero the range.
  Status Fallocate(int mode, uint64_t offset, uint64_t length) override {
    const bool keep = (mode & FALLOC_FL_KEEP_SIZE) != 0;
    const int kind = mode & ~FALLOC_FL_KEEP_SIZE;
    if (kind != 0 && kind != FALLOC_FL_PUNCH_HOLE && kind != FALLOC_FL_ZERO_RANGE) {
      return Status(StatusCode::kNotSupported, "fallocate mode");
    }
    if (kind == FALLOC_FL_PUNCH_HOLE && !keep) return Status(StatusCode::kNotSupported, "punch without keep size");
    std::lock_guard lock(owner_->mu_);
    MemClient::Inode* inode = owner_->Find(ino_);
    if (inode == nullptr) return Status(StatusCode::kStale, "inode gone");
    const uint64_t end = offset + length;
    if (end < offset || end > kMaxFileSize) return Status(StatusCode::kFileTooBig, "MemClient file size limit");
    if (kind != 0 && offset < inode->data.size()) {
      std::memset(inode->data.data() + offset, 0, std::min<uint64_t>(end, inode->data.size()) - offset);
    }
    if (!keep && end > inode->data.size()) inode->data.resize(end);
    inode->attr.size = inode->data.size();
    inode->Touch(true);
    return Status::Ok();
  }

  // In memory: nothing the kernel could use as a backing file.
  Result<client::PassthroughFile> OpenPassthrough(bool, bool) override {
    return Status(StatusCode::kNotSupported, "in-memory file");
  }
  void AbandonPassthrough() override {}

  Status Close() override {
    if (closed_.exchange(true)) return Status::Ok();
    owner_->CloseFile(ino_);
    return Status::Ok();
  }

  InodeId ino() const override { return ino_; }
  uint64_t size() const override { return attr().size; }
  Attr attr() const override {
    std::lock_guard lock(owner_->mu_);
    MemClient::Inode* inode = owner_->Find(ino_);
    return inode != nullptr ? inode->attr : Attr{};
  }

 private:
  MemClient* owner_;
  const InodeId ino_;
  const int flags_;
  std::atomic<bool> closed_{false};
};

std::unique_ptr<client::File> NewMemFile(MemClient* owner, InodeId ino, int flags) {
  return std::make_unique<MemFile>(owner, ino, flags);
}

}  // namespace t0fs::fuse::testing
