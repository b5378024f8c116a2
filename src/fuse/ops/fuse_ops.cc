#include "fuse/ops/fuse_ops.h"

#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/logging.h"

namespace t0fs::fuse {
namespace {

using Op = abi::Opcode;

constexpr std::array<OpHandler, abi::kMaxOpcode> BuildTable() {
  std::array<OpHandler, abi::kMaxOpcode> t{};
  for (auto& h : t) h = &OpUnsupported;
  auto set = [&t](Op op, OpHandler h) { t[static_cast<uint32_t>(op)] = h; };
  set(Op::kLookup, &OpLookup);
  set(Op::kForget, &OpForget);
  set(Op::kBatchForget, &OpBatchForget);
  set(Op::kGetattr, &OpGetattr);
  set(Op::kSetattr, &OpSetattr);
  set(Op::kReadlink, &OpReadlink);
  set(Op::kSymlink, &OpSymlink);
  set(Op::kMknod, &OpMknod);
  set(Op::kMkdir, &OpMkdir);
  set(Op::kUnlink, &OpUnlink);
  set(Op::kRmdir, &OpRmdir);
  set(Op::kRename, &OpRename);
  set(Op::kRename2, &OpRename2);
  set(Op::kLink, &OpLink);
  set(Op::kOpen, &OpOpen);
  set(Op::kRead, &OpRead);
  set(Op::kWrite, &OpWrite);
  set(Op::kStatfs, &OpStatfs);
  set(Op::kRelease, &OpRelease);
  set(Op::kFsync, &OpFsync);
  set(Op::kSetxattr, &OpSetxattr);
  set(Op::kGetxattr, &OpGetxattr);
  set(Op::kListxattr, &OpListxattr);
  set(Op::kRemovexattr, &OpRemovexattr);
  set(Op::kFlush, &OpFlush);
  set(Op::kOpendir, &OpOpendir);
  set(Op::kReaddir, &OpReaddir);
  set(Op::kReleasedir, &OpReleasedir);
  set(Op::kFsyncdir, &OpFsyncdir);
  set(Op::kGetlk, &OpLock);
  set(Op::kSetlk, &OpLock);
  set(Op::kSetlkw, &OpLock);
  set(Op::kAccess, &OpAccess);
  set(Op::kCreate, &OpCreate);
  set(Op::kBmap, &OpBmap);
  set(Op::kDestroy, &OpDestroy);
  set(Op::kIoctl, &OpIoctl);
  set(Op::kPoll, &OpPoll);
  set(Op::kFallocate, &OpFallocate);
  set(Op::kReaddirplus, &OpReaddirplus);
  set(Op::kLseek, &OpLseek);
  set(Op::kCopyFileRange, &OpCopyFileRange);
  set(Op::kCopyFileRange64, &OpCopyFileRange);
  return t;
}

constexpr std::array<OpHandler, abi::kMaxOpcode> kHandlers = BuildTable();

}  // namespace

FuseOps::FuseOps(client::Client& client, const MountConfig& config) : ctx_(client, config) {}

FuseOps::~FuseOps() { CloseAll(); }

void FuseOps::CloseAll() {
  auto files = ctx_.files.Drain();
  if (!files.empty()) {
    LOG_INFO("fuse: closing {} files the kernel did not release", files.size());
  }
  for (auto& file : files) {
    Status st = file->Close();
    if (!st.ok()) LOG_WARN("fuse: close at unmount: {}", st.ToString());
  }
  ctx_.dirs.Drain();
}

thread_local uint64_t CacheTimeouts::t_generation = 0;

void OpContext::ForgetCachedNames(int device) {
  if (no_epoch_.load(std::memory_order_relaxed)) return;
  abi::OutHeader h{};
  h.len = sizeof(h);
  h.error = static_cast<int32_t>(abi::NotifyCode::kIncEpoch);
  if (::write(device, &h, sizeof(h)) == static_cast<ssize_t>(sizeof(h))) {
    names_forgotten_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  const int err = errno;
  if (err == EINVAL && !no_epoch_.exchange(true)) {
    LOG_INFO(
        "fuse: the kernel has no FUSE_NOTIFY_INC_EPOCH (Linux 6.16+): after a create or rename "
        "finds a name taken that this mount had answered missing, the name is seen at the next "
        "change poll");
  } else if (err != EINVAL) {
    LOG_DEBUG("fuse: FUSE_NOTIFY_INC_EPOCH: {}", std::strerror(err));
  }
}

bool OpContext::InvalInode(int device, InodeId ino, int64_t offset) {
  abi::NotifyInvalInodeOut out{};
  out.ino = ino.value();
  out.off = offset;
  out.len = 0;
  abi::OutHeader h{};
  h.len = static_cast<uint32_t>(sizeof(h) + sizeof(out));
  h.error = static_cast<int32_t>(abi::NotifyCode::kInvalInode);
  iovec iov[] = {{&h, sizeof(h)}, {&out, sizeof(out)}};
  if (::writev(device, iov, 2) >= 0) return true;
  if (errno != ENOENT) {  // ENOENT: the kernel holds no such inode
    LOG_DEBUG("fuse: FUSE_NOTIFY_INVAL_INODE of inode {}: {}", ino, std::strerror(errno));
  }
  return false;
}

void OpContext::ForgetAttrs(int device, InodeId ino) {
  // Attributes only: the OPEN drops the cached pages itself.
  if (InvalInode(device, ino, -1)) attrs_forgotten_.fetch_add(1, std::memory_order_relaxed);
}

void FuseOps::Handle(Request& req, Reply& reply) {
  ctx_.timeouts.BeginRequest();
  const uint32_t opcode = req.opcode();
  OpHandler handler = opcode < kHandlers.size() ? kHandlers[opcode] : &OpUnsupported;
  handler(ctx_, req, reply);
}

}  // namespace t0fs::fuse
