// The kernel FUSE protocol (major 7), as t0fs speaks it over /dev/fuse.
//
// Written from the protocol description (Documentation/filesystems/fuse.rst,
// the changelog of the uapi header and the kernel's fs/fuse sources): every
// struct is the exact little-endian layout of the wire, padded to 8 bytes.
// Sizes are checked below and against <linux/fuse.h> in abi_test.
//
// Framing: a request is InHeader + per-opcode arguments (+ extensions of
// total_extlen * 8 bytes at the end); a reply is OutHeader + payload, written
// with one write/writev. Names travel NUL-terminated. A reply's error is a
// negative errno in (-1000, 0].
//
// We speak minor 31 and up (the oldest kernel we expect is 5.10, minor 31);
// every struct here is in its size for those minors.
#pragma once

#include <sys/ioctl.h>

#include <cstdint>
#include <string>
#include <string_view>

namespace t0fs::fuse::abi {

inline constexpr uint32_t kKernelMajor = 7;
inline constexpr uint32_t kMinMinor = 31;  // oldest minor we accept
inline constexpr uint32_t kMaxMinor = 45;  // newest minor we know
inline constexpr uint64_t kRootId = 1;     // nodeid of the root; equals t0fs kRootInode
inline constexpr uint32_t kMinReadBuffer = 8192;
inline constexpr uint32_t kNameMax = 1024;  // kernel limit on a dirent name
// Set in the unique of an INTERRUPT request (so its reply cannot be taken
// for the reply of the interrupted request).
inline constexpr uint64_t kInterruptBit = 1;

enum class Opcode : uint32_t {
  kLookup = 1,
  kForget = 2,  // no reply
  kGetattr = 3,
  kSetattr = 4,
  kReadlink = 5,
  kSymlink = 6,
  kMknod = 8,
  kMkdir = 9,
  kUnlink = 10,
  kRmdir = 11,
  kRename = 12,
  kLink = 13,
  kOpen = 14,
  kRead = 15,
  kWrite = 16,
  kStatfs = 17,
  kRelease = 18,
  kFsync = 20,
  kSetxattr = 21,
  kGetxattr = 22,
  kListxattr = 23,
  kRemovexattr = 24,
  kFlush = 25,
  kInit = 26,
  kOpendir = 27,
  kReaddir = 28,
  kReleasedir = 29,
  kFsyncdir = 30,
  kGetlk = 31,
  kSetlk = 32,
  kSetlkw = 33,
  kAccess = 34,
  kCreate = 35,
  kInterrupt = 36,  // no reply (except EAGAIN/ENOSYS)
  kBmap = 37,
  kDestroy = 38,
  kIoctl = 39,
  kPoll = 40,
  kNotifyReply = 41,  // no reply
  kBatchForget = 42,  // no reply
  kFallocate = 43,
  kReaddirplus = 44,
  kRename2 = 45,
  kLseek = 46,
  kCopyFileRange = 47,
  kSetupmapping = 48,
  kRemovemapping = 49,
  kSyncfs = 50,
  kTmpfile = 51,
  kStatx = 52,
  kCopyFileRange64 = 53,
};
inline constexpr uint32_t kMaxOpcode = 64;  // table size for per-opcode arrays

// Name for logs ("LOOKUP"); "UNKNOWN" for anything else.
std::string_view OpcodeName(uint32_t opcode);
// Requests the kernel expects no reply to.
inline bool IsNoReply(uint32_t opcode) {
  return opcode == uint32_t(Opcode::kForget) || opcode == uint32_t(Opcode::kBatchForget) ||
         opcode == uint32_t(Opcode::kInterrupt) || opcode == uint32_t(Opcode::kNotifyReply);
}

// ---- INIT flags: bits 0..31 travel in `flags`, bits 32..63 in `flags2`
// (the latter only when both sides set kInitExt). ----
namespace init {
inline constexpr uint64_t kAsyncRead = 1ull << 0;        // parallel reads of one file
inline constexpr uint64_t kPosixLocks = 1ull << 1;       // fs implements fcntl locks
inline constexpr uint64_t kFileOps = 1ull << 2;          // unused by Linux
inline constexpr uint64_t kAtomicOTrunc = 1ull << 3;     // O_TRUNC passed in OPEN
inline constexpr uint64_t kExportSupport = 1ull << 4;    // lookups of "." and ".." (NFS export)
inline constexpr uint64_t kBigWrites = 1ull << 5;        // writes larger than 4 KiB
inline constexpr uint64_t kDontMask = 1ull << 6;         // kernel does not apply umask
inline constexpr uint64_t kSpliceWrite = 1ull << 7;
inline constexpr uint64_t kSpliceMove = 1ull << 8;
inline constexpr uint64_t kSpliceRead = 1ull << 9;
inline constexpr uint64_t kFlockLocks = 1ull << 10;      // fs implements flock
inline constexpr uint64_t kHasIoctlDir = 1ull << 11;
inline constexpr uint64_t kAutoInvalData = 1ull << 12;   // drop cache when mtime/size change
inline constexpr uint64_t kDoReaddirplus = 1ull << 13;
inline constexpr uint64_t kReaddirplusAuto = 1ull << 14;
inline constexpr uint64_t kAsyncDio = 1ull << 15;        // parallel requests for one O_DIRECT I/O
inline constexpr uint64_t kWritebackCache = 1ull << 16;
inline constexpr uint64_t kNoOpenSupport = 1ull << 17;
inline constexpr uint64_t kParallelDirops = 1ull << 18;  // parallel lookup/readdir in one dir
inline constexpr uint64_t kHandleKillpriv = 1ull << 19;
inline constexpr uint64_t kPosixAcl = 1ull << 20;
inline constexpr uint64_t kAbortError = 1ull << 21;
inline constexpr uint64_t kMaxPages = 1ull << 22;        // init_out.max_pages is valid
inline constexpr uint64_t kCacheSymlinks = 1ull << 23;
inline constexpr uint64_t kNoOpendirSupport = 1ull << 24;
inline constexpr uint64_t kExplicitInvalData = 1ull << 25;
inline constexpr uint64_t kMapAlignment = 1ull << 26;
inline constexpr uint64_t kSubmounts = 1ull << 27;
inline constexpr uint64_t kHandleKillprivV2 = 1ull << 28;
inline constexpr uint64_t kSetxattrExt = 1ull << 29;
inline constexpr uint64_t kInitExt = 1ull << 30;         // flags2 present (minor >= 36)
inline constexpr uint64_t kInitReserved = 1ull << 31;
inline constexpr uint64_t kSecurityCtx = 1ull << 32;
inline constexpr uint64_t kHasInodeDax = 1ull << 33;
inline constexpr uint64_t kCreateSuppGroup = 1ull << 34;
inline constexpr uint64_t kHasExpireOnly = 1ull << 35;
inline constexpr uint64_t kDirectIoAllowMmap = 1ull << 36;
inline constexpr uint64_t kPassthrough = 1ull << 37;     // backing files (minor >= 40)
inline constexpr uint64_t kNoExportSupport = 1ull << 38;
inline constexpr uint64_t kHasResend = 1ull << 39;
inline constexpr uint64_t kAllowIdmap = 1ull << 40;
inline constexpr uint64_t kOverIoUring = 1ull << 41;
inline constexpr uint64_t kRequestTimeout = 1ull << 42;
}  // namespace init

// "ASYNC_READ|BIG_WRITES|..." for logs; unknown bits as "bit43".
std::string FormatInitFlags(uint64_t flags);

// ---- other flag words ----
// fuse_setattr_in.valid
inline constexpr uint32_t kFattrMode = 1u << 0;
inline constexpr uint32_t kFattrUid = 1u << 1;
inline constexpr uint32_t kFattrGid = 1u << 2;
inline constexpr uint32_t kFattrSize = 1u << 3;
inline constexpr uint32_t kFattrAtime = 1u << 4;
inline constexpr uint32_t kFattrMtime = 1u << 5;
inline constexpr uint32_t kFattrFh = 1u << 6;
inline constexpr uint32_t kFattrAtimeNow = 1u << 7;
inline constexpr uint32_t kFattrMtimeNow = 1u << 8;
inline constexpr uint32_t kFattrLockOwner = 1u << 9;
inline constexpr uint32_t kFattrCtime = 1u << 10;
inline constexpr uint32_t kFattrKillSuidgid = 1u << 11;
// fuse_open_out.open_flags
inline constexpr uint32_t kFopenDirectIo = 1u << 0;
inline constexpr uint32_t kFopenKeepCache = 1u << 1;
inline constexpr uint32_t kFopenNonseekable = 1u << 2;
inline constexpr uint32_t kFopenCacheDir = 1u << 3;
inline constexpr uint32_t kFopenStream = 1u << 4;
inline constexpr uint32_t kFopenNoflush = 1u << 5;
inline constexpr uint32_t kFopenParallelDirectWrites = 1u << 6;
inline constexpr uint32_t kFopenPassthrough = 1u << 7;
// fuse_write_in.write_flags
inline constexpr uint32_t kWriteCache = 1u << 0;
inline constexpr uint32_t kWriteLockOwner = 1u << 1;
inline constexpr uint32_t kWriteKillSuidgid = 1u << 2;  // with HANDLE_KILLPRIV_V2
// fuse_open_in.open_flags / fuse_create_in.open_flags
inline constexpr uint32_t kOpenKillSuidgid = 1u << 0;  // with HANDLE_KILLPRIV_V2
// fuse_getattr_in.getattr_flags
inline constexpr uint32_t kGetattrFh = 1u << 0;
// fuse_release_in.release_flags
inline constexpr uint32_t kReleaseFlush = 1u << 0;
inline constexpr uint32_t kReleaseFlockUnlock = 1u << 1;
// fuse_fsync_in.fsync_flags
inline constexpr uint32_t kFsyncFdatasync = 1u << 0;
// fuse_rename2_in.flags (renameat2)
inline constexpr uint32_t kRenameNoreplace = 1u << 0;
inline constexpr uint32_t kRenameExchange = 1u << 1;
inline constexpr uint32_t kRenameWhiteout = 1u << 2;

// ---- headers ----
struct InHeader {
  uint32_t len;  // whole request, header included
  uint32_t opcode;
  uint64_t unique;
  uint64_t nodeid;
  uint32_t uid;
  uint32_t gid;
  uint32_t pid;  // the calling thread's id in the mounter's pid namespace
  uint16_t total_extlen;  // length of trailing extensions, in 8-byte units (minor >= 37)
  uint16_t padding;
};
struct OutHeader {
  uint32_t len;
  int32_t error;  // 0 or -errno
  uint64_t unique;
};

// ---- notifications: written by the server unasked, with unique 0 and the
// code in OutHeader::error
// kIncEpoch (protocol 7.44, Linux 6.16): every cached name, positive or
// negative, is looked up again at its next use; no payload, takes no lock.
enum class NotifyCode : int32_t { kInvalInode = 2, kInvalEntry = 3, kIncEpoch = 8 };
struct NotifyInvalInodeOut {
  uint64_t ino;
  int64_t off;  // first byte of page cache to drop; negative: attributes only
  int64_t len;  // 0 or less: to the end
};
struct NotifyInvalEntryOut {  // followed by the name and a NUL
  uint64_t parent;
  uint32_t namelen;
  uint32_t flags;
};

// ---- INIT ----
struct InitIn {  // 16 bytes before minor 36; 64 from 36 on
  uint32_t major;
  uint32_t minor;
  uint32_t max_readahead;
  uint32_t flags;
  uint32_t flags2;  // valid when flags has kInitExt
  uint32_t unused[11];
};
inline constexpr size_t kInitInCompatSize = 16;
struct InitOut {
  uint32_t major;
  uint32_t minor;
  uint32_t max_readahead;
  uint32_t flags;
  uint16_t max_background;
  uint16_t congestion_threshold;
  uint32_t max_write;
  uint32_t time_gran;
  uint16_t max_pages;
  uint16_t map_alignment;
  uint32_t flags2;
  uint32_t max_stack_depth;  // passthrough: how many fs may be stacked below (minor >= 40)
  uint16_t request_timeout;  // minor >= 43
  uint16_t unused[11];
};

// ---- attributes and entries ----
struct Attr {
  uint64_t ino;
  uint64_t size;
  uint64_t blocks;  // 512-byte units
  uint64_t atime;
  uint64_t mtime;
  uint64_t ctime;
  uint32_t atimensec;
  uint32_t mtimensec;
  uint32_t ctimensec;
  uint32_t mode;
  uint32_t nlink;
  uint32_t uid;
  uint32_t gid;
  uint32_t rdev;
  uint32_t blksize;
  uint32_t flags;
};
struct EntryOut {
  uint64_t nodeid;  // 0 in a LOOKUP reply: negative entry, cached for entry_valid
  uint64_t generation;
  uint64_t entry_valid;  // seconds the name may be cached
  uint64_t attr_valid;   // seconds the attributes may be cached
  uint32_t entry_valid_nsec;
  uint32_t attr_valid_nsec;
  Attr attr;
};
struct AttrOut {
  uint64_t attr_valid;
  uint32_t attr_valid_nsec;
  uint32_t dummy;
  Attr attr;
};
struct GetattrIn {
  uint32_t getattr_flags;
  uint32_t dummy;
  uint64_t fh;
};
struct SetattrIn {
  uint32_t valid;  // kFattr* bits
  uint32_t padding;
  uint64_t fh;
  uint64_t size;
  uint64_t lock_owner;
  uint64_t atime;
  uint64_t mtime;
  uint64_t ctime;
  uint32_t atimensec;
  uint32_t mtimensec;
  uint32_t ctimensec;
  uint32_t mode;
  uint32_t unused4;
  uint32_t uid;
  uint32_t gid;
  uint32_t unused5;
};

// ---- forget ----
struct ForgetIn {
  uint64_t nlookup;
};
struct ForgetOne {
  uint64_t nodeid;
  uint64_t nlookup;
};
struct BatchForgetIn {
  uint32_t count;  // followed by `count` ForgetOne
  uint32_t dummy;
};

// ---- namespace ops (each followed by NUL-terminated names) ----
struct MknodIn {
  uint32_t mode;
  uint32_t rdev;
  uint32_t umask;
  uint32_t padding;
};
struct MkdirIn {
  uint32_t mode;  // permission bits (the kernel clears S_IFDIR)
  uint32_t umask;
};
struct RenameIn {
  uint64_t newdir;
};
struct Rename2In {
  uint64_t newdir;
  uint32_t flags;
  uint32_t padding;
};
struct LinkIn {
  uint64_t oldnodeid;
};

// ---- files ----
struct OpenIn {
  uint32_t flags;       // open(2) flags (O_CREAT/O_EXCL/O_NOCTTY stripped)
  uint32_t open_flags;  // FUSE_OPEN_KILL_SUIDGID (minor >= 39)
};
struct CreateIn {
  uint32_t flags;
  uint32_t mode;
  uint32_t umask;
  uint32_t open_flags;
};
struct OpenOut {
  uint64_t fh;
  uint32_t open_flags;  // kFopen* bits
  int32_t backing_id;   // with kFopenPassthrough (minor >= 40)
};
struct ReleaseIn {
  uint64_t fh;
  uint32_t flags;
  uint32_t release_flags;
  uint64_t lock_owner;
};
struct FlushIn {
  uint64_t fh;
  uint32_t unused;
  uint32_t padding;
  uint64_t lock_owner;
};
struct ReadIn {  // READ, READDIR, READDIRPLUS
  uint64_t fh;
  uint64_t offset;
  uint32_t size;
  uint32_t read_flags;
  uint64_t lock_owner;
  uint32_t flags;
  uint32_t padding;
};
struct WriteIn {  // followed by `size` bytes of data
  uint64_t fh;
  uint64_t offset;
  uint32_t size;
  uint32_t write_flags;
  uint64_t lock_owner;
  uint32_t flags;
  uint32_t padding;
};
struct WriteOut {
  uint32_t size;
  uint32_t padding;
};
struct FsyncIn {
  uint64_t fh;
  uint32_t fsync_flags;
  uint32_t padding;
};
struct FallocateIn {
  uint64_t fh;
  uint64_t offset;
  uint64_t length;
  uint32_t mode;
  uint32_t padding;
};
struct LseekIn {
  uint64_t fh;
  uint64_t offset;
  uint32_t whence;
  uint32_t padding;
};
struct LseekOut {
  uint64_t offset;
};
struct CopyFileRangeIn {
  uint64_t fh_in;
  uint64_t off_in;
  uint64_t nodeid_out;
  uint64_t fh_out;
  uint64_t off_out;
  uint64_t len;
  uint64_t flags;
};
struct CopyFileRangeOut {  // reply of COPY_FILE_RANGE_64 (minor >= 45)
  uint64_t bytes_copied;
};

// ---- statfs, xattr, access ----
struct Kstatfs {
  uint64_t blocks;
  uint64_t bfree;
  uint64_t bavail;
  uint64_t files;
  uint64_t ffree;
  uint32_t bsize;
  uint32_t namelen;
  uint32_t frsize;
  uint32_t padding;
  uint32_t spare[6];
};
struct StatfsOut {
  Kstatfs st;
};
struct SetxattrIn {  // 8 bytes unless kSetxattrExt was negotiated (we don't)
  uint32_t size;
  uint32_t flags;
};
struct GetxattrIn {  // GETXATTR and LISTXATTR
  uint32_t size;     // 0: the reply is GetxattrOut with the size needed
  uint32_t padding;
};
struct GetxattrOut {
  uint32_t size;
  uint32_t padding;
};
struct AccessIn {
  uint32_t mask;
  uint32_t padding;
};

// ---- misc ----
struct InterruptIn {
  uint64_t unique;
};
struct BmapIn {
  uint64_t block;
  uint32_t blocksize;
  uint32_t padding;
};
struct FileLock {
  uint64_t start;
  uint64_t end;
  uint32_t type;
  uint32_t pid;
};
struct LkIn {
  uint64_t fh;
  uint64_t owner;
  FileLock lk;
  uint32_t lk_flags;
  uint32_t padding;
};

// ---- directory entries in READDIR / READDIRPLUS replies ----
struct Dirent {
  uint64_t ino;
  uint64_t off;      // offset of the next entry (our readdir cookie)
  uint32_t namelen;
  uint32_t type;     // DT_* (mode >> 12)
  // char name[namelen], then zero padding to 8 bytes
};
struct DirentPlus {
  EntryOut entry_out;  // nodeid 0: no attributes for this entry
  Dirent dirent;
};
inline constexpr size_t DirentAlign(size_t n) { return (n + 7) & ~size_t(7); }
inline constexpr size_t DirentSize(size_t namelen) { return DirentAlign(sizeof(Dirent) + namelen); }
inline constexpr size_t DirentPlusSize(size_t namelen) {
  return DirentAlign(sizeof(DirentPlus) + namelen);
}

// ---- /dev/fuse ioctls ----
struct BackingMap {  // FUSE_DEV_IOC_BACKING_OPEN argument (passthrough)
  int32_t fd;
  uint32_t flags;
  uint64_t padding;
};
inline constexpr unsigned kDevIocMagic = 229;
// Attaches a new /dev/fuse fd to the connection of the fd passed (uint32).
inline constexpr unsigned long kDevIocClone = _IOR(kDevIocMagic, 0, uint32_t);
// Registers a backing file; returns a backing_id for OpenOut (CAP_SYS_ADMIN).
inline constexpr unsigned long kDevIocBackingOpen = _IOW(kDevIocMagic, 1, BackingMap);
// Drops a backing_id.
inline constexpr unsigned long kDevIocBackingClose = _IOW(kDevIocMagic, 2, uint32_t);

static_assert(sizeof(InHeader) == 40);
static_assert(sizeof(OutHeader) == 16);
static_assert(sizeof(NotifyInvalInodeOut) == 24);
static_assert(sizeof(NotifyInvalEntryOut) == 16);
static_assert(sizeof(InitIn) == 64);
static_assert(sizeof(InitOut) == 64);
static_assert(sizeof(Attr) == 88);
static_assert(sizeof(EntryOut) == 128);
static_assert(sizeof(AttrOut) == 104);
static_assert(sizeof(GetattrIn) == 16);
static_assert(sizeof(SetattrIn) == 88);
static_assert(sizeof(MknodIn) == 16);
static_assert(sizeof(OpenOut) == 16);
static_assert(sizeof(ReleaseIn) == 24);
static_assert(sizeof(FlushIn) == 24);
static_assert(sizeof(ReadIn) == 40);
static_assert(sizeof(WriteIn) == 40);
static_assert(sizeof(Kstatfs) == 80);
static_assert(sizeof(CopyFileRangeIn) == 56);
static_assert(sizeof(LkIn) == 48);
static_assert(sizeof(Dirent) == 24);
static_assert(sizeof(DirentPlus) == 152);
static_assert(sizeof(BackingMap) == 16);

}  // namespace t0fs::fuse::abi
