// Our ABI structs against the system's <linux/fuse.h> (only in this test):
// same size and same field offsets for everything both define.
#include <linux/fuse.h>

#include <cstddef>

#include <gtest/gtest.h>

#include "fuse/protocol/abi.h"

namespace t0fs::fuse {
namespace {

#define SAME_SIZE(ours, theirs) static_assert(sizeof(abi::ours) == sizeof(theirs), #ours)
#define SAME_FIELD(ours, theirs, a, b) \
  static_assert(offsetof(abi::ours, a) == offsetof(theirs, b), #ours "." #a)

SAME_SIZE(InHeader, fuse_in_header);
SAME_FIELD(InHeader, fuse_in_header, unique, unique);
SAME_FIELD(InHeader, fuse_in_header, nodeid, nodeid);
SAME_FIELD(InHeader, fuse_in_header, pid, pid);
SAME_FIELD(InHeader, fuse_in_header, total_extlen, total_extlen);
SAME_SIZE(OutHeader, fuse_out_header);
SAME_SIZE(InitIn, fuse_init_in);
SAME_FIELD(InitIn, fuse_init_in, flags2, flags2);
SAME_SIZE(InitOut, fuse_init_out);
SAME_FIELD(InitOut, fuse_init_out, max_write, max_write);
SAME_FIELD(InitOut, fuse_init_out, max_pages, max_pages);
SAME_FIELD(InitOut, fuse_init_out, flags2, flags2);
SAME_SIZE(Attr, fuse_attr);
SAME_FIELD(Attr, fuse_attr, mode, mode);
SAME_FIELD(Attr, fuse_attr, blksize, blksize);
SAME_SIZE(EntryOut, fuse_entry_out);
SAME_FIELD(EntryOut, fuse_entry_out, attr, attr);
SAME_SIZE(AttrOut, fuse_attr_out);
SAME_SIZE(GetattrIn, fuse_getattr_in);
SAME_SIZE(SetattrIn, fuse_setattr_in);
SAME_FIELD(SetattrIn, fuse_setattr_in, size, size);
SAME_FIELD(SetattrIn, fuse_setattr_in, mode, mode);
SAME_FIELD(SetattrIn, fuse_setattr_in, gid, gid);
SAME_SIZE(ForgetIn, fuse_forget_in);
SAME_SIZE(ForgetOne, fuse_forget_one);
SAME_SIZE(BatchForgetIn, fuse_batch_forget_in);
SAME_SIZE(MknodIn, fuse_mknod_in);
SAME_SIZE(MkdirIn, fuse_mkdir_in);
SAME_SIZE(RenameIn, fuse_rename_in);
SAME_SIZE(Rename2In, fuse_rename2_in);
SAME_SIZE(LinkIn, fuse_link_in);
SAME_SIZE(OpenIn, fuse_open_in);
SAME_SIZE(CreateIn, fuse_create_in);
SAME_SIZE(OpenOut, fuse_open_out);
SAME_SIZE(ReleaseIn, fuse_release_in);
SAME_SIZE(FlushIn, fuse_flush_in);
SAME_SIZE(ReadIn, fuse_read_in);
SAME_FIELD(ReadIn, fuse_read_in, size, size);
SAME_SIZE(WriteIn, fuse_write_in);
SAME_SIZE(WriteOut, fuse_write_out);
SAME_SIZE(FsyncIn, fuse_fsync_in);
SAME_SIZE(FallocateIn, fuse_fallocate_in);
SAME_SIZE(LseekIn, fuse_lseek_in);
SAME_SIZE(LseekOut, fuse_lseek_out);
SAME_SIZE(CopyFileRangeIn, fuse_copy_file_range_in);
SAME_SIZE(Kstatfs, fuse_kstatfs);
SAME_SIZE(StatfsOut, fuse_statfs_out);
SAME_SIZE(GetxattrIn, fuse_getxattr_in);
SAME_SIZE(GetxattrOut, fuse_getxattr_out);
SAME_SIZE(AccessIn, fuse_access_in);
SAME_SIZE(InterruptIn, fuse_interrupt_in);
SAME_SIZE(BmapIn, fuse_bmap_in);
SAME_SIZE(LkIn, fuse_lk_in);
SAME_SIZE(Dirent, fuse_dirent);
SAME_SIZE(DirentPlus, fuse_direntplus);
static_assert(sizeof(abi::SetxattrIn) == FUSE_COMPAT_SETXATTR_IN_SIZE);

TEST(Abi, ConstantsMatchTheKernelHeader) {
  EXPECT_EQ(abi::kKernelMajor, uint32_t(FUSE_KERNEL_VERSION));
  EXPECT_EQ(uint32_t(abi::Opcode::kReaddirplus), uint32_t(FUSE_READDIRPLUS));
  EXPECT_EQ(uint32_t(abi::Opcode::kRename2), uint32_t(FUSE_RENAME2));
  EXPECT_EQ(uint32_t(abi::Opcode::kCopyFileRange), uint32_t(FUSE_COPY_FILE_RANGE));
  EXPECT_EQ(uint32_t(abi::Opcode::kSyncfs), uint32_t(FUSE_SYNCFS));
  EXPECT_EQ(uint32_t(abi::Opcode::kTmpfile), uint32_t(FUSE_TMPFILE));
  EXPECT_EQ(abi::init::kAsyncRead, uint64_t(FUSE_ASYNC_READ));
  EXPECT_EQ(abi::init::kMaxPages, uint64_t(FUSE_MAX_PAGES));
  EXPECT_EQ(abi::init::kInitExt, uint64_t(FUSE_INIT_EXT));
  EXPECT_EQ(abi::init::kSecurityCtx, uint64_t(FUSE_SECURITY_CTX));
  EXPECT_EQ(abi::init::kHasInodeDax, uint64_t(FUSE_HAS_INODE_DAX));
  EXPECT_EQ(abi::kFopenParallelDirectWrites, uint32_t(FOPEN_PARALLEL_DIRECT_WRITES));
  EXPECT_EQ(abi::kDevIocClone, (unsigned long)FUSE_DEV_IOC_CLONE);
  EXPECT_EQ(abi::kFattrKillSuidgid, uint32_t(FATTR_KILL_SUIDGID));
  // Newer than this header (7.38): from the protocol changelog.
  EXPECT_EQ(abi::init::kPassthrough, uint64_t(1) << 37);
  EXPECT_EQ(abi::kFopenPassthrough, 1u << 7);
}

TEST(Abi, NamesForLogs) {
  EXPECT_EQ(abi::OpcodeName(1), "LOOKUP");
  EXPECT_EQ(abi::OpcodeName(53), "COPY_FILE_RANGE_64");
  EXPECT_EQ(abi::OpcodeName(7), "UNKNOWN");
  EXPECT_EQ(abi::OpcodeName(99999), "UNKNOWN");
  EXPECT_EQ(abi::FormatInitFlags(abi::init::kAsyncRead | abi::init::kPassthrough),
            "ASYNC_READ|PASSTHROUGH");
  EXPECT_EQ(abi::FormatInitFlags(uint64_t(1) << 60), "bit60");
  EXPECT_EQ(abi::FormatInitFlags(0), "none");
}

TEST(Abi, DirentSizesArePaddedTo8) {
  EXPECT_EQ(abi::DirentSize(1), 32u);
  EXPECT_EQ(abi::DirentSize(8), 32u);
  EXPECT_EQ(abi::DirentSize(9), 40u);
  EXPECT_EQ(abi::DirentPlusSize(1), 160u);
}

}  // namespace
}  // namespace t0fs::fuse
