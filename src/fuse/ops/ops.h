// The op handlers: one function per FUSE opcode, one file per op
// (src/fuse/ops/<op>.cc), dispatched by FuseOps.
//
// Contract of every handler: decode the arguments with ArgReader (a short or
// malformed argument is EINVAL), call the Client or a File, map a Status to
// errno with Reply::Fail (the one ToErrno mapping), and answer exactly once —
// except the no-reply ops (FORGET, BATCH_FORGET, NOTIFY_REPLY), which call
// Reply::NoReply. No lock is held across a Client call.
#pragma once

#include "fuse/ops/op_context.h"
#include "fuse/protocol/abi.h"
#include "fuse/protocol/reply.h"
#include "fuse/protocol/request.h"

namespace t0fs::fuse {

// Open flags every regular file gets (OPEN, CREATE). No FOPEN_KEEP_CACHE:
// the kernel drops the file's cached pages at each open, which is what
// close-to-open consistency needs. PARALLEL_DIRECT_WRITES lets O_DIRECT
// writers of one file run in parallel (Client and File are thread-safe).
inline constexpr uint32_t kFileOpenFlags = abi::kFopenParallelDirectWrites;
// A read-only open adds FOPEN_NOFLUSH: its close(2) sends no FLUSH. A
// reader has nothing to commit (its handle wrote nothing; the kernel keeps
// fcntl/flock locks itself, we negotiate no writeback cache), so the FLUSH
// was a round trip through the mount at every close of a file opened for
// reading — one of the two a small-file read (open, close) waited for.
// RELEASE still comes, in the background.
inline constexpr uint32_t kReadOnlyOpenFlags = kFileOpenFlags | abi::kFopenNoflush;

// File capabilities: not stored, always absent (getxattr.cc).
inline constexpr std::string_view kCapabilityXattr = "security.capability";
// Read-only, on the mount's root: how this mount serves files
// ("passthrough=on backing_files=2 opens_passthrough=… …"); `t0fs status`
// shows it for the mounts of its host (getxattr.cc).
inline constexpr std::string_view kMountStateXattr = "user.t0fs.mount";

using OpHandler = void (*)(OpContext& ctx, Request& req, Reply& reply);

// ---- names and attributes ----
void OpLookup(OpContext& ctx, Request& req, Reply& reply);
void OpForget(OpContext& ctx, Request& req, Reply& reply);
void OpBatchForget(OpContext& ctx, Request& req, Reply& reply);
void OpGetattr(OpContext& ctx, Request& req, Reply& reply);
void OpSetattr(OpContext& ctx, Request& req, Reply& reply);
void OpReadlink(OpContext& ctx, Request& req, Reply& reply);
void OpSymlink(OpContext& ctx, Request& req, Reply& reply);
void OpMknod(OpContext& ctx, Request& req, Reply& reply);
void OpMkdir(OpContext& ctx, Request& req, Reply& reply);
void OpUnlink(OpContext& ctx, Request& req, Reply& reply);
void OpRmdir(OpContext& ctx, Request& req, Reply& reply);
void OpRename(OpContext& ctx, Request& req, Reply& reply);
void OpRename2(OpContext& ctx, Request& req, Reply& reply);
void OpLink(OpContext& ctx, Request& req, Reply& reply);
void OpStatfs(OpContext& ctx, Request& req, Reply& reply);
void OpAccess(OpContext& ctx, Request& req, Reply& reply);
// ---- xattrs ----
void OpSetxattr(OpContext& ctx, Request& req, Reply& reply);
void OpGetxattr(OpContext& ctx, Request& req, Reply& reply);
void OpListxattr(OpContext& ctx, Request& req, Reply& reply);
void OpRemovexattr(OpContext& ctx, Request& req, Reply& reply);
// ---- files ----
void OpOpen(OpContext& ctx, Request& req, Reply& reply);
void OpCreate(OpContext& ctx, Request& req, Reply& reply);
void OpRead(OpContext& ctx, Request& req, Reply& reply);
void OpWrite(OpContext& ctx, Request& req, Reply& reply);
void OpFlush(OpContext& ctx, Request& req, Reply& reply);
void OpRelease(OpContext& ctx, Request& req, Reply& reply);
void OpFsync(OpContext& ctx, Request& req, Reply& reply);
void OpFallocate(OpContext& ctx, Request& req, Reply& reply);
void OpLseek(OpContext& ctx, Request& req, Reply& reply);
void OpCopyFileRange(OpContext& ctx, Request& req, Reply& reply);  // also COPY_FILE_RANGE_64
void OpLock(OpContext& ctx, Request& req, Reply& reply);           // GETLK, SETLK, SETLKW
void OpIoctl(OpContext& ctx, Request& req, Reply& reply);
void OpPoll(OpContext& ctx, Request& req, Reply& reply);
void OpBmap(OpContext& ctx, Request& req, Reply& reply);
// ---- directories ----
void OpOpendir(OpContext& ctx, Request& req, Reply& reply);
void OpReaddir(OpContext& ctx, Request& req, Reply& reply);
void OpReaddirplus(OpContext& ctx, Request& req, Reply& reply);
void OpReleasedir(OpContext& ctx, Request& req, Reply& reply);
void OpFsyncdir(OpContext& ctx, Request& req, Reply& reply);
// ---- connection ----
void OpDestroy(OpContext& ctx, Request& req, Reply& reply);
// Everything we do not implement: ENOSYS, which makes the kernel remember
// and stop asking (or fall back) for most of them; see docs/fuse.md.
void OpUnsupported(OpContext& ctx, Request& req, Reply& reply);

// Clears setuid and setgid of the file with `attr` as the VFS does for a
// caller without CAP_FSETID whose group is `caller_gid` (when the kernel asks:
// HANDLE_KILLPRIV_V2 flags on WRITE/SETATTR/OPEN/CREATE, or a passthrough
// writer's open); a no-op without such bits (kill_setid.cc).
Status DropSetIdBits(OpContext& ctx, const client::Attr& attr, uint32_t caller_gid);

// Registers a newly opened File as a handle and decides whether the kernel
// serves it by passthrough (PassthroughTable): the OpenOut for OPEN and
// CREATE (open.cc). `flags` are open(2)'s; `uid`, `gid` the caller's.
// Fails when the open can neither join the inode's passthrough nor be cached.
Result<abi::OpenOut> AddOpenFile(OpContext& ctx, const Reply& reply, std::unique_ptr<client::File> file, int flags,
                                 uint32_t uid, uint32_t gid);

// Shared by READDIR and READDIRPLUS (readdir.cc).
void ListDirectory(OpContext& ctx, Request& req, Reply& reply, bool plus);

}  // namespace t0fs::fuse
