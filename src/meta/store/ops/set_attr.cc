// SetAttr: chmod, chown, truncate, utimens.
#include <fmt/format.h>
#include <sys/stat.h>

#include "meta/store/sqlite_store.h"
#include "meta/store/store_util.h"

namespace t0fs::meta {

Result<InodeAttr> SqliteStore::SetAttr(const OpToken& token, const SetAttrArgs& args,
                                       Timespec now) {
  InodeAttr result;
  auto body = [&](Outcome& out) -> Status {
    ASSIGN_OR_RETURN(InodeAttr attr, LoadAttr(args.ino));
    out.ino = attr.ino;
    const uint32_t mask = args.mask;
    if (mask == 0) {
      result = attr;
      return Status::Ok();
    }
    if ((mask & kSetSize) != 0) {
      if (internal::IsDir(attr.mode)) {
        return Status(StatusCode::kIsDirectory, fmt::format("truncate directory {}", attr.ino));
      }
      if (!internal::IsReg(attr.mode)) {
        return Status(StatusCode::kInvalidArgument, fmt::format("truncate non-file {}", attr.ino));
      }
      RETURN_IF_ERROR(Truncate(attr, args.size, now, args.keep_chunks));
      attr.mtime = now;
    }
    if ((mask & kSetMode) != 0) attr.mode = (attr.mode & S_IFMT) | (args.mode & 07777);
    if ((mask & kSetUid) != 0) attr.uid = args.uid;
    if ((mask & kSetGid) != 0) attr.gid = args.gid;
    if ((mask & kSetAtime) != 0) attr.atime = args.atime;
    if ((mask & kSetAtimeNow) != 0) attr.atime = now;
    if ((mask & kSetMtime) != 0) attr.mtime = args.mtime;
    if ((mask & kSetMtimeNow) != 0) attr.mtime = now;
    // Every attribute change sets ctime, unless the caller states one.
    attr.ctime = (mask & kSetCtime) != 0 ? args.ctime : now;
    RETURN_IF_ERROR(db_.Run(
        "UPDATE inodes SET mode = ?, uid = ?, gid = ?, atime_s = ?, atime_ns = ?, mtime_s = ?, "
        "mtime_ns = ?, ctime_s = ?, ctime_ns = ? WHERE ino = ?",
        attr.mode, attr.uid, attr.gid, attr.atime.sec, attr.atime.nsec, attr.mtime.sec,
        attr.mtime.nsec, attr.ctime.sec, attr.ctime.nsec, attr.ino));
    ASSIGN_OR_RETURN(result, LoadAttr(attr.ino));
    return Status::Ok();
  };
  auto replay = [&](const Outcome& out) -> Status {
    ASSIGN_OR_RETURN(result, LoadAttr(out.ino));
    return Status::Ok();
  };
  RETURN_IF_ERROR(Mutate(token, body, replay));
  return result;
}

}  // namespace t0fs::meta
