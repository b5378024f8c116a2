// MakeNode: mknod, mkdir, symlink and create.
#include <fmt/format.h>
#include <sys/stat.h>

#include "meta/store/sqlite_store.h"
#include "meta/store/store_util.h"

namespace t0fs::meta {
namespace {

Status CheckNodeArgs(const MakeNodeArgs& args) {
  RETURN_IF_ERROR(internal::CheckName(args.name));
  switch (args.mode & S_IFMT) {
    case S_IFREG:
      if (args.chunk_size == 0) {
        return Status(StatusCode::kInvalidArgument, "a regular file needs a chunk size");
      }
      return Status::Ok();
    case S_IFLNK:
      if (args.link_target.empty()) {
        return Status(StatusCode::kNotFound, "empty symlink target");
      }
      if (args.link_target.size() > kMaxSymlinkLength) {
        return Status(StatusCode::kNameTooLong,
                      fmt::format("symlink target of {} bytes (limit {})", args.link_target.size(),
                                  kMaxSymlinkLength));
      }
      if (args.link_target.find('\0') != std::string::npos) {
        return Status(StatusCode::kInvalidArgument, "symlink target contains NUL");
      }
      return Status::Ok();
    case S_IFDIR:
    case S_IFIFO:
    case S_IFSOCK:
    case S_IFCHR:
    case S_IFBLK:
      return Status::Ok();
    default:
      return Status(StatusCode::kInvalidArgument,
                    fmt::format("file type {:o}", args.mode & S_IFMT));
  }
}

}  // namespace

Result<MakeNodeResult> SqliteStore::MakeNode(const OpToken& token, const MakeNodeArgs& args,
                                             Timespec now) {
  RETURN_IF_ERROR(CheckNodeArgs(args));
  const uint32_t type = args.mode & S_IFMT;
  MakeNodeResult result;
  auto body = [&](Outcome& out) -> Status {
    ASSIGN_OR_RETURN(InodeAttr parent, LoadDir(args.parent));
    ASSIGN_OR_RETURN(auto existing, FindDentry(args.parent, args.name));
    if (existing) {
      ASSIGN_OR_RETURN(InodeAttr attr, LoadAttr(existing->ino));
      if (type == S_IFREG && !args.exclusive) {
        if (internal::IsDir(attr.mode)) {
          return Status(StatusCode::kIsDirectory, fmt::format("{} is a directory", args.name));
        }
        if (internal::IsReg(attr.mode)) {
          result = MakeNodeResult{attr, false};
          out.ino = attr.ino;
          out.flag = false;
          return Status::Ok();
        }
      }
      return Status(StatusCode::kExists, fmt::format("{} in {}", args.name, args.parent));
    }
    const bool is_dir = type == S_IFDIR;
    if (is_dir && parent.nlink >= kMaxLinks) {
      return Status(StatusCode::kTooManyLinks, fmt::format("directory {}", args.parent));
    }
    const bool is_link = type == S_IFLNK;
    const bool is_dev = type == S_IFCHR || type == S_IFBLK;
    ASSIGN_OR_RETURN(
        auto q,
        db_.Query(
            "INSERT INTO inodes (mode, uid, gid, size, nlink, rdev, atime_s, atime_ns, mtime_s, "
            "mtime_ns, ctime_s, ctime_ns, chunk_size, generation, target, replicas, placement, "
            "placement_nodes) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1, ?, ?, ?, ?) RETURNING ino",
            type | (args.mode & 07777), args.uid, args.gid,
            is_link ? args.link_target.size() : size_t{0}, is_dir ? 2 : 1, is_dev ? args.rdev : 0u,
            now.sec, now.nsec, now.sec, now.nsec, now.sec, now.nsec,
            // The objective is inherited from the parent; a directory passes
            // on its chunk size for files (0 = the cluster default), a file
            // takes the one its creator chose (policy, from that directory).
            type == S_IFREG ? args.chunk_size : (is_dir ? parent.chunk_size : uint64_t{0}),
            is_link ? std::optional(sqlite::Blob{args.link_target}) : std::nullopt,
            parent.replicas, static_cast<uint32_t>(parent.placement),
            internal::FormatNodeList(parent.placement_nodes)));
    ASSIGN_OR_RETURN(bool row, q->Step());
    if (!row) return Status(StatusCode::kInternal, "insert inode returned no id");
    InodeId ino(q->U64(0));
    RETURN_IF_ERROR(q->Run());
    RETURN_IF_ERROR(InsertDentry(args.parent, args.name, ino));
    if (is_dir) {
      RETURN_IF_ERROR(AddNlink(args.parent, 1));
      RETURN_IF_ERROR(SetParent(ino, args.parent));
    }
    RETURN_IF_ERROR(TouchDir(args.parent, now));
    ASSIGN_OR_RETURN(InodeAttr attr, LoadAttr(ino));
    result = MakeNodeResult{attr, true};
    out.ino = ino;
    out.flag = true;
    return Status::Ok();
  };
  auto replay = [&](const Outcome& out) -> Status {
    ASSIGN_OR_RETURN(result.attr, LoadAttr(out.ino));
    result.created = out.flag;
    return Status::Ok();
  };
  RETURN_IF_ERROR(Mutate(token, body, replay));
  return result;
}

}  // namespace t0fs::meta
