#include "client/client_impl.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include "client/file_impl.h"
#include "common/logging.h"
#include "common/secret.h"

namespace t0fs::client {
namespace {

// The non-empty components of a path other than ".", in order.
std::vector<std::string_view> PathComponents(std::string_view path) {
  std::vector<std::string_view> parts;
  for (size_t pos = 0; pos < path.size();) {
    size_t end = path.find('/', pos);
    if (end == std::string_view::npos) end = path.size();
    std::string_view part = path.substr(pos, end - pos);
    if (!part.empty() && part != ".") parts.push_back(part);
    pos = end + 1;
  }
  return parts;
}

constexpr uint32_t kRenameExchange = 2;  // renameat2's RENAME_EXCHANGE

}  // namespace

Result<std::unique_ptr<Client>> Client::Connect(const ClientOptions& options) {
  std::string secret = options.secret;
  if (secret.empty()) {
    if (options.secret_file.empty()) {
      return Status(StatusCode::kInvalidArgument, "give the cluster secret or the path of its file");
    }
    ASSIGN_OR_RETURN(secret, LoadSecret(options.secret_file));
  }
  auto client = std::make_unique<ClientImpl>(options, std::move(secret));
  RETURN_IF_ERROR(client->Connect());
  return std::unique_ptr<Client>(std::move(client));
}

ClientImpl::ClientImpl(const ClientOptions& options, std::string secret)
    : options_(options),
      meta_(options, secret),
      data_(options, secret, meta_),
      layouts_(meta_, options.allocate_ahead),
      replicas_(options.local_bypass, meta_, data_, layouts_, stats_),
      passthrough_(options.local_bypass, meta_, layouts_, replicas_, stats_),
      open_(meta_, options.attr_cache),
      commits_(meta_, data_, replicas_, open_, passthrough_),
      prepared_(meta_, data_, options.local_bypass ? options.prepare_ahead : 0) {}

ClientImpl::~ClientImpl() { meta_.Close(); }

Status ClientImpl::Connect() {
  Status st = meta_.Connect();
  if (!st.ok()) return st.WithContext(fmt::format("connect to meta {}", options_.meta));
  meta_.SetSessionListener([this] { RenewHandles(); });
  return Status::Ok();
}

void ClientImpl::RenewHandles() {
  const size_t open = handles_.size();
  if (open == 0) return;
  LOG_WARN(
      "meta expired this client's session: opening the {} open file(s) again under the new one",
      open);
  const size_t renewed = handles_.Renew(
      meta_.session(),
      [this](InodeId ino, int flags) -> Result<HandleId> {
        ASSIGN_OR_RETURN(OpenReply reopened, meta_.Open(ino, flags));
        return reopened.handle;
      },
      [this](HandleId handle) { meta_.ReleaseLater(handle); });
  LOG_INFO("{} open file(s) registered again with meta", renewed);
}

IoCounters ClientImpl::counters() const { return stats_.Snapshot(); }

Result<ChangeBatch> ClientImpl::PollChanges(std::chrono::milliseconds wait) {
  ASSIGN_OR_RETURN(ChangeBatch batch, meta_.PollChanges(wait));
  // Our own caches follow the same changes as the kernel's.
  if (!batch.complete) {
    open_.ForgetMetaAttrs();
    known_.ForgetAll();
    return batch;
  }
  for (const NamespaceChange& c : batch.changes) {
    if (c.ino.valid()) open_.ForgetMetaAttr(c.ino);
    if (!c.name.empty()) {
      open_.ForgetMetaAttr(c.parent);
      known_.Forget(c.parent);
    }
  }
  known_.Heard();
  return batch;
}

// ---------------------------------------------------------------- namespace

Result<Attr> ClientImpl::Lookup(InodeId parent, std::string_view name) {
  if (known_.Missing(parent, name)) return Status(StatusCode::kNotFound, "no such name");
  ASSIGN_OR_RETURN(Attr attr, meta_.Lookup(parent, name));
  return open_.FromMeta(attr);
}

Result<Attr> ClientImpl::GetAttr(InodeId ino) { return open_.GetAttr(ino); }

Result<Attr> ClientImpl::SetAttr(InodeId ino, const SetAttrArgs& args) {
  if (args.mask & kSetSize) {
    std::shared_ptr<InodeState> st = open_.Find(ino);
    ASSIGN_OR_RETURN(Attr attr, commits_.Truncate(ino, st.get(), args.size));
    if ((args.mask & ~uint32_t{kSetSize}) == 0) return attr;
  }
  // The times are what was just set; the size includes our open writes.
  ASSIGN_OR_RETURN(Attr attr, meta_.SetAttr(ino, args));
  attr.size = open_.FromMeta(attr).size;
  return attr;
}

Result<Attr> ClientImpl::Mknod(InodeId parent, std::string_view name, uint32_t mode, uint32_t rdev,
                               const Caller& caller) {
  if (S_ISDIR(mode) || S_ISLNK(mode)) {
    return Status(StatusCode::kInvalidArgument, "use Mkdir or Symlink for directories and symlinks");
  }
  NewNode node = NewNode::Of(parent, name, (mode & S_IFMT) == 0 ? (mode | S_IFREG) : mode, caller);
  node.rdev = rdev;
  return MakeNode(node);
}

Result<Attr> ClientImpl::Mkdir(InodeId parent, std::string_view name, uint32_t mode, const Caller& caller) {
  return MakeNode(NewNode::Of(parent, name, S_IFDIR | (mode & 07777), caller));
}

Result<Attr> ClientImpl::Symlink(InodeId parent, std::string_view name, std::string_view target,
                                 const Caller& caller) {
  NewNode node = NewNode::Of(parent, name, S_IFLNK | 0777, caller);
  node.link_target = target;
  return MakeNode(node);
}

Result<Attr> ClientImpl::MakeNode(const NewNode& node) {
  ASSIGN_OR_RETURN(MadeNode made, KnownAfter(meta_.MakeNode(node), node.parent));
  known_.Added(node.parent, node.name);
  if (S_ISDIR(made.attr.mode) && made.created) known_.Made(made.attr.ino);
  if (made.parent) open_.NoteDirChanged(*made.parent);
  return made.attr;
}

Status ClientImpl::Unlink(InodeId parent, std::string_view name) {
  ASSIGN_OR_RETURN(std::optional<Attr> dir, KnownAfter(meta_.Unlink(parent, name), parent));
  known_.Removed(parent, name);
  open_.ForgetMetaAttrs();  // the unlinked inode's nlink and ctime changed
  if (dir) open_.NoteDirChanged(*dir);
  return Status::Ok();
}

Status ClientImpl::Rmdir(InodeId parent, std::string_view name) {
  ASSIGN_OR_RETURN(std::optional<Attr> dir, KnownAfter(meta_.Rmdir(parent, name), parent));
  known_.Removed(parent, name);
  open_.ForgetMetaAttrs();  // the removed directory's nlink changed too
  if (dir) open_.NoteDirChanged(*dir);
  return Status::Ok();
}

Status ClientImpl::Rename(InodeId old_parent, std::string_view old_name, InodeId new_parent,
                          std::string_view new_name, uint32_t flags) {
  RETURN_IF_ERROR(KnownAfter(meta_.Rename(old_parent, old_name, new_parent, new_name, flags), old_parent, new_parent));
  if ((flags & kRenameExchange) == 0) {  // an exchange keeps both names
    known_.Removed(old_parent, old_name);
    known_.Added(new_parent, new_name);
  }
  open_.ForgetMetaAttrs();  // a replaced target's nlink, the moved inode's ctime
  return Status::Ok();
}

Result<Attr> ClientImpl::Link(InodeId ino, InodeId new_parent, std::string_view new_name) {
  ASSIGN_OR_RETURN(Attr attr, KnownAfter(meta_.Link(ino, new_parent, new_name), new_parent));
  known_.Added(new_parent, new_name);
  open_.ForgetMetaAttr(new_parent);
  return open_.FromMeta(attr);
}

Result<std::string> ClientImpl::ReadLink(InodeId ino) {
  return meta_.ReadLink(ino);
}

Result<DirPage> ClientImpl::ReadDir(InodeId dir, uint64_t cookie, uint32_t max_entries, bool with_attrs) {
  ASSIGN_OR_RETURN(DirPage page, meta_.ReadDir(dir, cookie, max_entries, with_attrs));
  for (DirEntry& e : page.entries) {
    if (e.attr) e.attr = open_.WithOpenState(*e.attr);
  }
  return page;
}

Result<StatFs> ClientImpl::GetStatFs() {
  return meta_.GetStatFs();
}

Result<std::string> ClientImpl::GetXattr(InodeId ino, std::string_view name) {
  return meta_.GetXattr(ino, name);
}

Status ClientImpl::SetXattr(InodeId ino, std::string_view name, std::string_view value, uint32_t flags) {
  RETURN_IF_ERROR(meta_.SetXattr(ino, name, value, flags));
  open_.ForgetMetaAttr(ino);  // ctime
  return Status::Ok();
}

Result<std::vector<std::string>> ClientImpl::ListXattr(InodeId ino) {
  return meta_.ListXattr(ino);
}

Status ClientImpl::RemoveXattr(InodeId ino, std::string_view name) {
  RETURN_IF_ERROR(meta_.RemoveXattr(ino, name));
  open_.ForgetMetaAttr(ino);  // ctime
  return Status::Ok();
}

// ---------------------------------------------------------------- files

Result<std::unique_ptr<File>> ClientImpl::OpenWith(const OpenReply& opened, int flags) {
  const Attr& attr = opened.attr;
  std::shared_ptr<InodeState> st = open_.Acquire(attr, (flags & O_ACCMODE) != O_RDONLY);
  OpenFiles::NoteMetaAttr(*st, attr);
  if (S_ISREG(attr.mode)) {
    // The open reply carries the first chunks of the layout.
    layouts_.OnOpen(*st, opened.layout, (flags & O_TRUNC) != 0);
    if (flags & O_TRUNC) {
      std::lock_guard lock(st->mu);
      st->size = 0;
      st->committed_size = 0;
      st->local_files.clear();
      st->dirty_versions.clear();
      st->landed_writes.clear();
    }
  }
  const OpenHandles::Key handle = handles_.Add(attr.ino, flags, opened.handle, opened.session);
  return std::unique_ptr<File>(new FileImpl(*this, st, handle, flags, attr));
}

Result<std::unique_ptr<File>> ClientImpl::Open(InodeId ino, int flags) {
  // O_TRUNC of an inode the kernel serves from its chunk file here
  // (passthrough): meta must not drop that chunk, so the truncation is this
  // client's, applied to the held file (Truncate) after the open. Either way
  // after a last passthrough writer's final sync, never during it (that sync
  // would bring back the data the truncation removed).
  std::shared_ptr<InodeState> open_state = (flags & O_TRUNC) ? open_.Find(ino) : nullptr;
  std::unique_lock<std::mutex> setup;
  if (open_state) setup = std::unique_lock(open_state->passthrough_mu);
  const bool truncate_held = open_state && Passthrough::Held(*open_state) != nullptr;
  const int meta_flags = truncate_held ? (flags & ~O_TRUNC) : flags;
  ASSIGN_OR_RETURN(OpenReply opened, meta_.Open(ino, meta_flags));
  ASSIGN_OR_RETURN(std::unique_ptr<File> file, OpenWith(opened, meta_flags));
  if (truncate_held) {
    LOG_DEBUG("inode {}: O_TRUNC of a file held by passthrough: truncated by this client", ino);
    RETURN_IF_ERROR(commits_.Truncate(ino, open_state.get(), 0, /*setup_locked=*/true).status());
  }
  return file;
}

Result<std::unique_ptr<File>> ClientImpl::Create(InodeId parent, std::string_view name, uint32_t mode,
                                                 int flags, const Caller& caller, bool* created) {
  NewNode node = NewNode::Of(parent, name, S_IFREG | (mode & 07777), caller);
  node.exclusive = (flags & O_EXCL) != 0;
  // Created and opened in one round trip. A writer on a host with a data
  // node gets chunk 0 there with it: its writes go to that replica (through
  // passthrough under FUSE), so no Allocate follows.
  // With files prepared for it (ChunkPool), that chunk needs no data node
  // call either.
  const bool write = (flags & O_ACCMODE) != O_RDONLY;
  std::optional<PreparedChunk> prepared = write ? prepared_.Take() : std::nullopt;
  auto created_or = KnownAfter(meta_.CreateOpen(node, flags, /*first_chunk=*/write, prepared ? &prepared->id : nullptr),
                               parent);
  if (!created_or.ok()) {
    // Refused by meta (EEXIST, EACCES, ...): nothing happened, the id is
    // unused. Lost on the way: it may be taken, the files go.
    if (prepared && !rpc::IsTransportError(created_or.status().code())) prepared_.Return(std::move(*prepared));
    return created_or.status();
  }
  CreatedFile made = std::move(created_or).value();
  known_.Added(parent, name);
  if (made.parent) open_.NoteDirChanged(*made.parent);
  const OpenReply& opened = made.opened;
  const bool is_new = made.created;
  if (created != nullptr) *created = is_new;
  ASSIGN_OR_RETURN(std::unique_ptr<File> file, OpenWith(opened, flags & ~O_TRUNC));
  if (prepared) UsePrepared(opened, std::move(*prepared));
  if (!is_new && (flags & O_TRUNC) && write && S_ISREG(opened.attr.mode)) {
    // O_TRUNC of an existing file: this client's truncation, which keeps a
    // chunk 0 that passthrough holds here (Open).
    std::shared_ptr<InodeState> st = open_.Find(opened.attr.ino);
    std::unique_lock<std::mutex> setup;
    if (st) setup = std::unique_lock(st->passthrough_mu);
    Status truncated = commits_.Truncate(opened.attr.ino, st.get(), 0, /*setup_locked=*/st != nullptr).status();
    if (!truncated.ok()) {
      setup = {};
      (void)file->Close();
      return truncated;
    }
  }
  return file;
}

void ClientImpl::UsePrepared(const OpenReply& opened, PreparedChunk prepared) {
  auto chunk0 = std::find_if(opened.layout.begin(), opened.layout.end(),
                             [](const CachedChunk& c) { return c.info.index == 0; });
  if (chunk0 == opened.layout.end() || chunk0->info.replicas.empty() ||
      chunk0->info.replicas.front().chunk != prepared.id.chunk) {
    prepared_.Return(std::move(prepared));  // not ours (an existing file, no chunk 0, another id): still unused
    return;
  }
  // Ours. Its files serve a file whose only replica is here (the Tier 0
  // case, passthrough's): a replicated file's writes also reach the other
  // replicas, and its local one must fail over like any other when the data
  // node is down (a prepared file would hold the commit until it is back).
  // Otherwise the files are let go: the data node names or drops them.
  const ReplicaInfo& r = chunk0->info.replicas.front();
  if (chunk0->info.replicas.size() != 1 || r.node != meta_.local_node() || r.volume != prepared.id.volume ||
      r.version != 0) {
    return;
  }
  if (std::shared_ptr<InodeState> st = open_.Find(opened.attr.ino)) replicas_.UsePrepared(*st, prepared.file);
}

void ClientImpl::RecycleChunkFiles(const std::shared_ptr<InodeState>& st) {
  // Only files nothing else here can still reach: the closing File holds the
  // state's last reference (no passthrough, batch or commit of it left),
  // and the file's only reference is the state's.
  if (st.use_count() != 1) return;
  std::vector<std::shared_ptr<ChunkFile>> unused;
  {
    std::lock_guard lock(st->mu);
    for (auto it = st->local_files.begin(); it != st->local_files.end();) {
      const std::shared_ptr<ChunkFile>& f = it->second.file;
      if (!it->first.second && f && f->unnamed() && f.use_count() == 1) {
        unused.push_back(f);
        it = st->local_files.erase(it);
      } else {
        ++it;
      }
    }
  }
  for (std::shared_ptr<ChunkFile>& f : unused) {
    auto length = f->Length();
    if (length.ok() && *length == 0) prepared_.Recycle(std::move(f));
  }
}

Result<LayoutInfo> ClientImpl::GetLayout(InodeId ino) {
  ASSIGN_OR_RETURN(Attr attr, GetAttr(ino));
  LayoutInfo info;
  info.chunk_size = attr.chunk_size;
  info.size = attr.size;
  for (uint64_t first = 0;;) {
    ASSIGN_OR_RETURN(std::vector<CachedChunk> chunks, meta_.GetLayout(ino, first, 4096, /*write=*/false));
    if (chunks.empty()) break;
    for (CachedChunk& c : chunks) info.chunks.push_back(std::move(c.info));
    first = info.chunks.back().index + 1;
  }
  return info;
}

Status ClientImpl::ReleaseHandle(HandleId handle) {
  if (handle.valid()) meta_.ReleaseLater(handle);
  return Status::Ok();
}

// ---------------------------------------------------------------- paths

Result<Attr> ClientImpl::ResolvePath(std::string_view path) {
  if (path.empty() || path.front() != '/') {
    return Status(StatusCode::kInvalidArgument, fmt::format("'{}' is not an absolute path in t0fs", path));
  }
  ASSIGN_OR_RETURN(Attr cur, GetAttr(kRootInode));
  for (std::string_view part : PathComponents(path)) {
    if (!S_ISDIR(cur.mode)) return Status(StatusCode::kNotDirectory, std::string(path));
    auto next = Lookup(cur.ino, part);
    if (!next.ok()) return next.status().WithContext(std::string(path));
    cur = *next;
  }
  return cur;
}

Result<std::pair<Attr, std::string>> ClientImpl::ResolveParent(std::string_view path) {
  while (path.size() > 1 && path.back() == '/') path.remove_suffix(1);
  size_t slash = path.rfind('/');
  if (slash == std::string_view::npos || path.size() <= 1) {
    return Status(StatusCode::kInvalidArgument, fmt::format("'{}' does not name a file", path));
  }
  std::string_view parent = slash == 0 ? std::string_view("/") : path.substr(0, slash);
  ASSIGN_OR_RETURN(Attr dir, ResolvePath(parent));
  if (!S_ISDIR(dir.mode)) return Status(StatusCode::kNotDirectory, std::string(parent));
  return std::make_pair(dir, std::string(path.substr(slash + 1)));
}

Result<std::unique_ptr<File>> ClientImpl::OpenPath(std::string_view path, int flags) {
  ASSIGN_OR_RETURN(Attr attr, ResolvePath(path));
  if (S_ISDIR(attr.mode)) return Status(StatusCode::kIsDirectory, std::string(path));
  return Open(attr.ino, flags);
}

Result<std::unique_ptr<File>> ClientImpl::CreatePath(std::string_view path, uint32_t mode, int flags) {
  ASSIGN_OR_RETURN(auto parent, ResolveParent(path));
  Caller caller{static_cast<uint32_t>(::geteuid()), static_cast<uint32_t>(::getegid())};
  if ((flags & O_ACCMODE) == O_RDONLY) flags |= O_RDWR;
  return Create(parent.first.ino, parent.second, mode, flags, caller, nullptr);
}

Status ClientImpl::MakeDirs(std::string_view path, uint32_t mode) {
  if (path.empty() || path.front() != '/') {
    return Status(StatusCode::kInvalidArgument, fmt::format("'{}' is not an absolute path in t0fs", path));
  }
  Caller caller{static_cast<uint32_t>(::geteuid()), static_cast<uint32_t>(::getegid())};
  InodeId cur = kRootInode;
  for (std::string_view part : PathComponents(path)) {
    auto next = Lookup(cur, part);
    if (next.ok()) {
      if (!S_ISDIR(next->mode)) return Status(StatusCode::kNotDirectory, std::string(part));
      cur = next->ino;
      continue;
    }
    if (next.status().code() != StatusCode::kNotFound) return next.status();
    auto made = Mkdir(cur, part, mode, caller);
    if (!made.ok() && made.status().code() == StatusCode::kExists) {
      ASSIGN_OR_RETURN(Attr again, Lookup(cur, part));
      cur = again.ino;
      continue;
    }
    if (!made.ok()) return made.status();
    cur = made->ino;
  }
  return Status::Ok();
}

}  // namespace t0fs::client
