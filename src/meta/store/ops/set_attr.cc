// SetAttr: chmod, chown, truncate, utimens.
#include <fmt/format.h>
#include <sys/stat.h>

#include "meta/store/posix_store.h"
#include "meta/store/store_util.h"

namespace t0fs::meta {

Result<InodeAttr> PosixStore::SetAttr(const OpToken& token, const SetAttrArgs& args,
                                      Timespec now) {
  InodeAttr result;
  auto body = [&](WriteTxn& txn, Outcome& out) -> Status {
    ASSIGN_OR_RETURN(InodeRow row, internal::LoadInode(txn, args.ino));
    InodeAttr& attr = row.attr;
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
      RETURN_IF_ERROR(internal::Truncate(txn, row, args.size, now, args.keep_chunks));
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
    RETURN_IF_ERROR(txn.PutInode(row));
    result = attr;
    return Status::Ok();
  };
  auto replay = [&](ReadTxn& txn, const Outcome& out) -> Status {
    ASSIGN_OR_RETURN(InodeRow row, internal::LoadInode(txn, out.ino));
    result = std::move(row.attr);
    return Status::Ok();
  };
  RETURN_IF_ERROR(Mutate(token, body, replay));
  return result;
}

}  // namespace t0fs::meta
