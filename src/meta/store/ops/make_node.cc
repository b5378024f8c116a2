// MakeNode: mknod, mkdir, symlink and create.
#include <fmt/format.h>
#include <fcntl.h>
#include <sys/stat.h>

#include <optional>

#include "meta/store/posix_store.h"
#include "meta/store/store_util.h"

namespace t0fs::meta {
namespace {

Status CheckNodeArgs(const MakeNodeArgs& args) {
  RETURN_IF_ERROR(internal::CheckName(args.name));
  switch (args.mode & S_IFMT) {
    case S_IFREG:
      if (args.chunk_size == 0 && !args.file_chunk_size) {
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

// The open half of a create (MakeNodeArgs::open_session) of regular file
// `made.attr`, in the transaction Mutate runs for `token`. `added`: the
// first chunk this transaction gave a new file (its whole layout: not read
// back); null for an existing file, whose layout is read.
Status OpenMade(WriteTxn& txn, const OpToken& token, const MakeNodeArgs& args, MakeNodeResult& made,
                const ChunkWithReplicas* added) {
  if (!args.open_session.valid()) return Status::Ok();
  RETURN_IF_ERROR(internal::RequireSession(txn, args.open_session, token));
  ASSIGN_OR_RETURN(made.handle, internal::AddHandle(txn, args.open_session, made.attr.ino, args.open_flags & ~O_TRUNC));
  if (!made.created) {
    ASSIGN_OR_RETURN(made.layout, internal::LoadLayoutRange(txn, made.attr.ino, 0, kOpenLayoutChunks));
  } else if (added != nullptr) {
    made.layout = {internal::LayoutOf(*added)};
  } else {
    made.layout.clear();
  }
  return Status::Ok();
}

}  // namespace

Result<MakeNodeResult> PosixStore::MakeNode(const OpToken& token, const MakeNodeArgs& args,
                                            Timespec now) {
  RETURN_IF_ERROR(CheckNodeArgs(args));
  if (args.open_session.valid() && (args.mode & S_IFMT) != S_IFREG) {
    return Status(StatusCode::kInvalidArgument, "only a regular file is opened at its create");
  }
  const uint32_t type = args.mode & S_IFMT;
  MakeNodeResult result;
  auto body = [&](WriteTxn& txn, Outcome& out) -> Status {
    ASSIGN_OR_RETURN(internal::DirAndEntry named, internal::LoadDirEntry(txn, args.parent, args.name));
    InodeRow& parent = named.dir;
    std::optional<DentryRow>& existing = named.entry;
    if (existing) {
      ASSIGN_OR_RETURN(InodeRow found, internal::LoadInode(txn, existing->ino));
      if (type == S_IFREG && !args.exclusive) {
        if (internal::IsDir(found.attr.mode)) {
          return Status(StatusCode::kIsDirectory, fmt::format("{} is a directory", args.name));
        }
        if (internal::IsReg(found.attr.mode)) {
          result.attr = found.attr;
          result.parent = parent.attr;
          result.created = false;
          out.ino = found.attr.ino;
          out.flag = false;
          RETURN_IF_ERROR(OpenMade(txn, token, args, result, nullptr));
          out.handle = result.handle;
          return Status::Ok();
        }
      }
      return Status(StatusCode::kExists, fmt::format("{} in {}", args.name, args.parent));
    }
    const bool is_dir = type == S_IFDIR;
    if (is_dir && parent.attr.nlink >= kMaxLinks) {
      return Status(StatusCode::kTooManyLinks, fmt::format("directory {}", args.parent));
    }
    const bool is_link = type == S_IFLNK;
    const bool is_dev = type == S_IFCHR || type == S_IFBLK;
    ASSIGN_OR_RETURN(uint64_t id, txn.NextId(Counter::kInode));
    InodeRow node;
    InodeAttr& a = node.attr;
    a.ino = InodeId(id);
    a.mode = type | (args.mode & 07777);
    a.uid = args.uid;
    a.gid = args.gid;
    a.size = is_link ? args.link_target.size() : 0;
    a.nlink = is_dir ? 2 : 1;
    a.rdev = is_dev ? args.rdev : 0;
    a.atime = a.mtime = a.ctime = now;
    // The objective is inherited from the parent; a directory passes on its
    // chunk size for files (0 = the cluster default), a file takes the one
    // its creator chose (policy, from that directory).
    if (type == S_IFREG) {
      a.chunk_size = args.file_chunk_size ? args.file_chunk_size(parent.attr) : args.chunk_size;
      if (a.chunk_size == 0) return Status(StatusCode::kInvalidArgument, "a regular file needs a chunk size");
    } else {
      a.chunk_size = is_dir ? parent.attr.chunk_size : 0;
    }
    a.generation = 1;
    a.replicas = parent.attr.replicas;
    a.placement = parent.attr.placement;
    a.placement_nodes = parent.attr.placement_nodes;
    a.protect = parent.attr.protect;
    if (is_link) node.target = args.link_target;
    if (is_dir) node.parent = args.parent;
    RETURN_IF_ERROR(txn.PutInode(node));
    RETURN_IF_ERROR(internal::AddEntry(txn, parent, args.name, a.ino));
    if (is_dir) parent.attr.nlink += 1;
    internal::TouchDir(parent, now);
    RETURN_IF_ERROR(txn.PutInode(parent));
    result.attr = a;
    result.parent = parent.attr;
    result.created = true;
    out.ino = a.ino;
    out.flag = true;
    std::optional<ChunkWithReplicas> added;
    if (args.open_session.valid() && args.place_first_chunk) {
      std::vector<ReplicaTarget> targets = args.place_first_chunk(a);
      if (!targets.empty() && internal::CheckTargets(txn, targets).ok()) {
        ASSIGN_OR_RETURN(added, internal::AddChunk(txn, a.ino, 0, targets, args.first_chunk_id));
      }
    } else if (args.open_session.valid() && !args.first_chunk.empty()) {
      RETURN_IF_ERROR(internal::CheckTargets(txn, args.first_chunk));
      ASSIGN_OR_RETURN(added, internal::AddChunk(txn, a.ino, 0, args.first_chunk, args.first_chunk_id));
    }
    RETURN_IF_ERROR(OpenMade(txn, token, args, result, added ? &*added : nullptr));
    out.handle = result.handle;
    return Status::Ok();
  };
  auto replay = [&](ReadTxn& txn, const Outcome& out) -> Status {
    ASSIGN_OR_RETURN(InodeRow row, internal::LoadInode(txn, out.ino));
    result.attr = std::move(row.attr);
    result.created = out.flag;
    ASSIGN_OR_RETURN(InodeRow parent, internal::LoadInode(txn, args.parent));
    result.parent = std::move(parent.attr);
    result.handle = out.handle;
    if (out.handle.valid()) {
      ASSIGN_OR_RETURN(result.layout, internal::LoadLayoutRange(txn, out.ino, 0, kOpenLayoutChunks));
    }
    return Status::Ok();
  };
  // A create's first reads: the directory and the name, its first chunk's
  // target volumes (CheckTargets). Not the chunk id it names (AddChunk):
  // read that early, PostgreSQL's serializable isolation makes concurrent
  // creates conflict twice as often (its lock covers the index page where
  // every create inserts its chunk).
  auto prefetch = [&](ReadTxn& txn) -> Status {
    RETURN_IF_ERROR(txn.PrefetchEntry(args.parent, args.name));
    if (!args.open_session.valid()) return Status::Ok();
    for (const ReplicaTarget& t : args.first_chunk) RETURN_IF_ERROR(txn.PrefetchVolume(t.volume));
    return Status::Ok();
  };
  RETURN_IF_ERROR(Mutate(token, body, replay, /*durable=*/false, prefetch));
  return result;
}

}  // namespace t0fs::meta
