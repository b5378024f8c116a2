// Open and Release: the open handles that keep unlinked inodes alive.
#include <fcntl.h>
#include <fmt/format.h>

#include <algorithm>

#include "meta/store/posix_store.h"
#include "meta/store/store_util.h"

namespace t0fs::meta {

Result<OpenResult> PosixStore::Open(const OpToken& token, SessionId session, InodeId ino,
                                    uint32_t flags, Timespec now) {
  OpenResult result;
  auto body = [&](WriteTxn& txn, Outcome& out) -> Status {
    RETURN_IF_ERROR(internal::RequireSession(txn, session, token));
    ASSIGN_OR_RETURN(InodeRow row, internal::LoadInode(txn, ino));
    const uint32_t access = flags & O_ACCMODE;
    const bool writes = access == O_WRONLY || access == O_RDWR;
    if (internal::IsDir(row.attr.mode) && writes) {
      return Status(StatusCode::kIsDirectory, fmt::format("open directory {} for writing", ino));
    }
    if ((flags & O_TRUNC) != 0 && writes && internal::IsReg(row.attr.mode)) {
      RETURN_IF_ERROR(internal::Truncate(txn, row, 0, now));
      RETURN_IF_ERROR(txn.PutInode(row));
    } else if (internal::IsReg(row.attr.mode) && internal::AtimeDue(row.attr, flags, now)) {
      row.attr.atime = now;
      RETURN_IF_ERROR(txn.PutInode(row));
    }
    ASSIGN_OR_RETURN(result.handle, internal::AddHandle(txn, session, ino, flags));
    result.attr = row.attr;
    if (internal::IsReg(row.attr.mode)) {
      ASSIGN_OR_RETURN(result.layout, internal::LoadLayoutRange(txn, ino, 0, kOpenLayoutChunks));
    }
    out.ino = ino;
    out.handle = result.handle;
    return Status::Ok();
  };
  auto replay = [&](ReadTxn& txn, const Outcome& out) -> Status {
    result.handle = out.handle;
    ASSIGN_OR_RETURN(InodeRow row, internal::LoadInode(txn, out.ino));
    result.attr = std::move(row.attr);
    if (internal::IsReg(result.attr.mode)) {
      ASSIGN_OR_RETURN(result.layout, internal::LoadLayoutRange(txn, out.ino, 0, kOpenLayoutChunks));
    }
    return Status::Ok();
  };
  RETURN_IF_ERROR(Mutate(token, body, replay));
  return result;
}

namespace {

// Closes open handle `found`: the inode loses it, and is freed when it was
// the last of an unlinked inode.
Status DropHandle(WriteTxn& txn, const HandleRow& found) {
  RETURN_IF_ERROR(txn.DeleteHandle(found.id));
  // The last writer is gone: chunks allocated ahead past the end of the
  // file and never written leave the layout. A reader's close leaves the
  // writers as they were (the last one's close did this), and reads
  // nothing more unless the inode may be gone.
  if (internal::OpensForWrite(found.flags)) {
    ASSIGN_OR_RETURN(std::vector<HandleRow> others, txn.ListHandlesOf(found.ino));
    const bool writers = std::any_of(others.begin(), others.end(), [](const HandleRow& h) {
      return internal::OpensForWrite(h.flags);
    });
    if (!writers) RETURN_IF_ERROR(internal::DropUnwrittenTail(txn, found.ino));
  }
  return internal::FreeIfOrphan(txn, found.ino);
}

}  // namespace

Status PosixStore::Release(const OpToken& token, HandleId handle) {
  return Mutate(
      token,
      [&](WriteTxn& txn, Outcome&) -> Status {
        ASSIGN_OR_RETURN(std::optional<HandleRow> found, txn.GetHandle(handle));
        if (!found) return Status(StatusCode::kBadHandle, fmt::format("handle {}", handle));
        return DropHandle(txn, *found);
      },
      nullptr, /*durable=*/false, [&](ReadTxn& txn) { return txn.PrefetchRelease(handle); });
}

Status PosixStore::ReleaseMany(const OpToken& token, const std::vector<HandleId>& handles) {
  // What the releases read, kReleasesReadAhead handles at a time (the
  // first group with the replay slot): a batch reads in one round trip per
  // group, not three or four per handle.
  constexpr size_t kReleasesReadAhead = 32;
  auto read_ahead = [&](ReadTxn& txn, size_t from) -> Status {
    for (size_t i = from; i < std::min(handles.size(), from + kReleasesReadAhead); ++i) {
      RETURN_IF_ERROR(txn.PrefetchRelease(handles[i]));
    }
    return Status::Ok();
  };
  return Mutate(
      token,
      [&](WriteTxn& txn, Outcome&) -> Status {
        for (size_t i = 0; i < handles.size(); ++i) {
          if (i > 0 && i % kReleasesReadAhead == 0) RETURN_IF_ERROR(read_ahead(txn, i));
          ASSIGN_OR_RETURN(std::optional<HandleRow> found, txn.GetHandle(handles[i]));
          if (found) RETURN_IF_ERROR(DropHandle(txn, *found));
        }
        return Status::Ok();
      },
      nullptr, /*durable=*/false, [&](ReadTxn& txn) { return read_ahead(txn, 0); });
}

}  // namespace t0fs::meta
