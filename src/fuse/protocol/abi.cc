#include "fuse/protocol/abi.h"

#include <array>

#include <fmt/format.h>

namespace t0fs::fuse::abi {

std::string_view OpcodeName(uint32_t opcode) {
  switch (static_cast<Opcode>(opcode)) {
    case Opcode::kLookup: return "LOOKUP";
    case Opcode::kForget: return "FORGET";
    case Opcode::kGetattr: return "GETATTR";
    case Opcode::kSetattr: return "SETATTR";
    case Opcode::kReadlink: return "READLINK";
    case Opcode::kSymlink: return "SYMLINK";
    case Opcode::kMknod: return "MKNOD";
    case Opcode::kMkdir: return "MKDIR";
    case Opcode::kUnlink: return "UNLINK";
    case Opcode::kRmdir: return "RMDIR";
    case Opcode::kRename: return "RENAME";
    case Opcode::kLink: return "LINK";
    case Opcode::kOpen: return "OPEN";
    case Opcode::kRead: return "READ";
    case Opcode::kWrite: return "WRITE";
    case Opcode::kStatfs: return "STATFS";
    case Opcode::kRelease: return "RELEASE";
    case Opcode::kFsync: return "FSYNC";
    case Opcode::kSetxattr: return "SETXATTR";
    case Opcode::kGetxattr: return "GETXATTR";
    case Opcode::kListxattr: return "LISTXATTR";
    case Opcode::kRemovexattr: return "REMOVEXATTR";
    case Opcode::kFlush: return "FLUSH";
    case Opcode::kInit: return "INIT";
    case Opcode::kOpendir: return "OPENDIR";
    case Opcode::kReaddir: return "READDIR";
    case Opcode::kReleasedir: return "RELEASEDIR";
    case Opcode::kFsyncdir: return "FSYNCDIR";
    case Opcode::kGetlk: return "GETLK";
    case Opcode::kSetlk: return "SETLK";
    case Opcode::kSetlkw: return "SETLKW";
    case Opcode::kAccess: return "ACCESS";
    case Opcode::kCreate: return "CREATE";
    case Opcode::kInterrupt: return "INTERRUPT";
    case Opcode::kBmap: return "BMAP";
    case Opcode::kDestroy: return "DESTROY";
    case Opcode::kIoctl: return "IOCTL";
    case Opcode::kPoll: return "POLL";
    case Opcode::kNotifyReply: return "NOTIFY_REPLY";
    case Opcode::kBatchForget: return "BATCH_FORGET";
    case Opcode::kFallocate: return "FALLOCATE";
    case Opcode::kReaddirplus: return "READDIRPLUS";
    case Opcode::kRename2: return "RENAME2";
    case Opcode::kLseek: return "LSEEK";
    case Opcode::kCopyFileRange: return "COPY_FILE_RANGE";
    case Opcode::kSetupmapping: return "SETUPMAPPING";
    case Opcode::kRemovemapping: return "REMOVEMAPPING";
    case Opcode::kSyncfs: return "SYNCFS";
    case Opcode::kTmpfile: return "TMPFILE";
    case Opcode::kStatx: return "STATX";
    case Opcode::kCopyFileRange64: return "COPY_FILE_RANGE_64";
  }
  return "UNKNOWN";
}

std::string FormatInitFlags(uint64_t flags) {
  static constexpr std::array<std::string_view, 43> kNames = {
      "ASYNC_READ",        "POSIX_LOCKS",      "FILE_OPS",           "ATOMIC_O_TRUNC",
      "EXPORT_SUPPORT",    "BIG_WRITES",       "DONT_MASK",          "SPLICE_WRITE",
      "SPLICE_MOVE",       "SPLICE_READ",      "FLOCK_LOCKS",        "HAS_IOCTL_DIR",
      "AUTO_INVAL_DATA",   "DO_READDIRPLUS",   "READDIRPLUS_AUTO",   "ASYNC_DIO",
      "WRITEBACK_CACHE",   "NO_OPEN_SUPPORT",  "PARALLEL_DIROPS",    "HANDLE_KILLPRIV",
      "POSIX_ACL",         "ABORT_ERROR",      "MAX_PAGES",          "CACHE_SYMLINKS",
      "NO_OPENDIR_SUPPORT", "EXPLICIT_INVAL_DATA", "MAP_ALIGNMENT",   "SUBMOUNTS",
      "HANDLE_KILLPRIV_V2", "SETXATTR_EXT",    "INIT_EXT",           "INIT_RESERVED",
      "SECURITY_CTX",      "HAS_INODE_DAX",    "CREATE_SUPP_GROUP",  "HAS_EXPIRE_ONLY",
      "DIRECT_IO_ALLOW_MMAP", "PASSTHROUGH",   "NO_EXPORT_SUPPORT",  "HAS_RESEND",
      "ALLOW_IDMAP",       "OVER_IO_URING",    "REQUEST_TIMEOUT"};
  std::string out;
  for (unsigned bit = 0; bit < 64; ++bit) {
    if ((flags & (1ull << bit)) == 0) continue;
    if (!out.empty()) out += '|';
    if (bit < kNames.size()) {
      out += kNames[bit];
    } else {
      out += fmt::format("bit{}", bit);
    }
  }
  return out.empty() ? "none" : out;
}

}  // namespace t0fs::fuse::abi
