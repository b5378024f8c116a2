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

Timespec TsFromWire(const pb::Timespec& ts) { return Timespec{ts.sec(), ts.nsec()}; }

void TsToWire(const Timespec& ts, pb::Timespec* out) {
  out->set_sec(ts.sec);
  out->set_nsec(ts.nsec);
}

ChunkInfo ChunkFromWire(const pb::ChunkLayout& in, NodeId local) {
  ChunkInfo out;
  out.index = in.index();
  for (const pb::Replica& r : in.replicas()) {
    out.replicas.push_back(ReplicaInfo{NodeId(r.node()), VolumeId(r.volume()), ChunkId(r.chunk()),
                                       r.version(), NodeId(r.node()) == local && local.valid()});
  }
  return out;
}

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

// Chunks fetched per GetLayout when a read reaches an unknown index.
constexpr uint64_t kLayoutFetch = 256;

}  // namespace

Attr AttrFromWire(const pb::Attr& in) {
  Attr a;
  a.ino = InodeId(in.ino());
  a.mode = in.mode();
  a.uid = in.uid();
  a.gid = in.gid();
  a.size = in.size();
  a.nlink = in.nlink();
  a.rdev = in.rdev();
  a.atime = TsFromWire(in.atime());
  a.mtime = TsFromWire(in.mtime());
  a.ctime = TsFromWire(in.ctime());
  a.chunk_size = in.chunk_size();
  a.generation = in.generation();
  return a;
}

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
    : options_(options), meta_(options, secret), data_(options, secret, meta_) {}

ClientImpl::~ClientImpl() { meta_.Close(); }

Status ClientImpl::Connect() {
  Status st = meta_.Connect();
  if (!st.ok()) return st.WithContext(fmt::format("connect to meta {}", options_.meta));
  meta_.SetSessionListener([] {
    LOG_WARN("the meta session was replaced: files open at that time lost their open-handle "
             "registration (an unlinked open file may be freed early)");
  });
  return Status::Ok();
}

IoCounters ClientImpl::counters() const {
  IoCounters c;
  c.local_read_bytes = counters_.local_read_bytes;
  c.local_write_bytes = counters_.local_write_bytes;
  c.remote_read_bytes = counters_.remote_read_bytes;
  c.remote_write_bytes = counters_.remote_write_bytes;
  c.local_reads = counters_.local_reads;
  c.remote_reads = counters_.remote_reads;
  c.checksum_errors = counters_.checksum_errors;
  return c;
}

bool ClientImpl::IsLocal(const ReplicaInfo& r) const {
  return options_.local_bypass && r.node.valid() && r.node == meta_.local_node();
}

// ---------------------------------------------------------------- namespace

Result<Attr> ClientImpl::Lookup(InodeId parent, std::string_view name) {
  pb::LookupReq req;
  req.set_parent(parent.value());
  req.set_name(std::string(name));
  pb::AttrRsp rsp;
  RETURN_IF_ERROR(meta_.Call(rpc::Method::kLookup, req, &rsp));
  return AttrFromWire(rsp.attr());
}

Result<Attr> ClientImpl::GetAttr(InodeId ino) {
  pb::GetAttrReq req;
  req.set_ino(ino.value());
  pb::AttrRsp rsp;
  RETURN_IF_ERROR(meta_.Call(rpc::Method::kGetAttr, req, &rsp));
  Attr attr = AttrFromWire(rsp.attr());
  // Our own uncommitted writes are part of what this client sees.
  std::shared_ptr<InodeState> st;
  {
    std::lock_guard lock(inodes_mu_);
    auto it = inodes_.find(ino);
    if (it != inodes_.end()) st = it->second.lock();
  }
  if (st) {
    std::lock_guard lock(st->mu);
    attr.size = std::max(attr.size, st->size);
    if (st->write_generation != st->committed_generation) {
      attr.mtime = st->last_write;
      attr.ctime = st->last_write;
    }
  }
  return attr;
}

Result<Attr> ClientImpl::SetAttr(InodeId ino, const SetAttrArgs& args) {
  if (args.mask & kSetSize) {
    std::shared_ptr<InodeState> st;
    {
      std::lock_guard lock(inodes_mu_);
      auto it = inodes_.find(ino);
      if (it != inodes_.end()) st = it->second.lock();
    }
    ASSIGN_OR_RETURN(Attr attr, Truncate(ino, st.get(), args.size));
    if ((args.mask & ~uint32_t{kSetSize}) == 0) return attr;
  }
  pb::SetAttrReq req;
  req.set_ino(ino.value());
  req.set_valid(args.mask & ~uint32_t{kSetSize});
  req.set_mode(args.mode);
  req.set_uid(args.uid);
  req.set_gid(args.gid);
  TsToWire(args.atime, req.mutable_atime());
  TsToWire(args.mtime, req.mutable_mtime());
  TsToWire(args.ctime, req.mutable_ctime());
  pb::AttrRsp rsp;
  RETURN_IF_ERROR(meta_.Mutate(rpc::Method::kSetAttr, req, &rsp));
  return AttrFromWire(rsp.attr());
}

Result<Attr> ClientImpl::MakeNode(pb::MakeNodeReq& req) {
  pb::MakeNodeRsp rsp;
  RETURN_IF_ERROR(meta_.Mutate(rpc::Method::kMakeNode, req, &rsp));
  return AttrFromWire(rsp.attr());
}

Result<Attr> ClientImpl::Mknod(InodeId parent, std::string_view name, uint32_t mode, uint32_t rdev,
                               const Caller& caller) {
  if (S_ISDIR(mode) || S_ISLNK(mode)) {
    return Status(StatusCode::kInvalidArgument, "use Mkdir or Symlink for directories and symlinks");
  }
  pb::MakeNodeReq req;
  req.set_parent(parent.value());
  req.set_name(std::string(name));
  req.set_mode((mode & S_IFMT) == 0 ? (mode | S_IFREG) : mode);
  req.set_uid(caller.uid);
  req.set_gid(caller.gid);
  req.set_rdev(rdev);
  req.set_exclusive(true);
  return MakeNode(req);
}

Result<Attr> ClientImpl::Mkdir(InodeId parent, std::string_view name, uint32_t mode, const Caller& caller) {
  pb::MakeNodeReq req;
  req.set_parent(parent.value());
  req.set_name(std::string(name));
  req.set_mode(S_IFDIR | (mode & 07777));
  req.set_uid(caller.uid);
  req.set_gid(caller.gid);
  req.set_exclusive(true);
  return MakeNode(req);
}

Result<Attr> ClientImpl::Symlink(InodeId parent, std::string_view name, std::string_view target,
                                 const Caller& caller) {
  pb::MakeNodeReq req;
  req.set_parent(parent.value());
  req.set_name(std::string(name));
  req.set_mode(S_IFLNK | 0777);
  req.set_uid(caller.uid);
  req.set_gid(caller.gid);
  req.set_exclusive(true);
  req.set_link_target(std::string(target));
  return MakeNode(req);
}

Status ClientImpl::Unlink(InodeId parent, std::string_view name) {
  pb::RemoveReq req;
  req.set_parent(parent.value());
  req.set_name(std::string(name));
  pb::Empty rsp;
  return meta_.Mutate(rpc::Method::kUnlink, req, &rsp);
}

Status ClientImpl::Rmdir(InodeId parent, std::string_view name) {
  pb::RemoveReq req;
  req.set_parent(parent.value());
  req.set_name(std::string(name));
  pb::Empty rsp;
  return meta_.Mutate(rpc::Method::kRmdir, req, &rsp);
}

Status ClientImpl::Rename(InodeId old_parent, std::string_view old_name, InodeId new_parent,
                          std::string_view new_name, uint32_t flags) {
  pb::RenameReq req;
  req.set_old_parent(old_parent.value());
  req.set_old_name(std::string(old_name));
  req.set_new_parent(new_parent.value());
  req.set_new_name(std::string(new_name));
  req.set_flags(flags);
  pb::Empty rsp;
  return meta_.Mutate(rpc::Method::kRename, req, &rsp);
}

Result<Attr> ClientImpl::Link(InodeId ino, InodeId new_parent, std::string_view new_name) {
  pb::LinkReq req;
  req.set_ino(ino.value());
  req.set_new_parent(new_parent.value());
  req.set_new_name(std::string(new_name));
  pb::AttrRsp rsp;
  RETURN_IF_ERROR(meta_.Mutate(rpc::Method::kLink, req, &rsp));
  return AttrFromWire(rsp.attr());
}

Result<std::string> ClientImpl::ReadLink(InodeId ino) {
  pb::GetAttrReq req;
  req.set_ino(ino.value());
  pb::ReadLinkRsp rsp;
  RETURN_IF_ERROR(meta_.Call(rpc::Method::kReadLink, req, &rsp));
  return rsp.target();
}

Result<DirPage> ClientImpl::ReadDir(InodeId dir, uint64_t cookie, uint32_t max_entries, bool with_attrs) {
  pb::ReadDirReq req;
  req.set_ino(dir.value());
  req.set_cookie(cookie);
  req.set_max_entries(max_entries);
  req.set_with_attrs(with_attrs);
  pb::ReadDirRsp rsp;
  RETURN_IF_ERROR(meta_.Call(rpc::Method::kReadDir, req, &rsp));
  DirPage page;
  page.eof = rsp.eof();
  for (const pb::DirEntry& e : rsp.entries()) {
    DirEntry out{e.name(), InodeId(e.ino()), e.mode(), e.cookie(), std::nullopt};
    if (e.has_attr()) out.attr = AttrFromWire(e.attr());
    page.entries.push_back(std::move(out));
  }
  return page;
}

Result<StatFs> ClientImpl::GetStatFs() {
  pb::Empty req;
  pb::StatFsRsp rsp;
  RETURN_IF_ERROR(meta_.Call(rpc::Method::kStatFs, req, &rsp));
  StatFs out;
  out.total_bytes = rsp.total_bytes();
  out.free_bytes = rsp.free_bytes();
  out.files = rsp.files();
  out.block_size = static_cast<uint32_t>(rsp.block_size() == 0 ? 4096 : rsp.block_size());
  out.max_name = rsp.max_name() == 0 ? 255 : rsp.max_name();
  return out;
}

Result<std::string> ClientImpl::GetXattr(InodeId ino, std::string_view name) {
  pb::XattrReq req;
  req.set_ino(ino.value());
  req.set_name(std::string(name));
  pb::XattrRsp rsp;
  RETURN_IF_ERROR(meta_.Call(rpc::Method::kGetXattr, req, &rsp));
  return rsp.value();
}

Status ClientImpl::SetXattr(InodeId ino, std::string_view name, std::string_view value, uint32_t flags) {
  pb::XattrReq req;
  req.set_ino(ino.value());
  req.set_name(std::string(name));
  req.set_value(std::string(value));
  req.set_flags(flags);
  pb::Empty rsp;
  return meta_.Mutate(rpc::Method::kSetXattr, req, &rsp);
}

Result<std::vector<std::string>> ClientImpl::ListXattr(InodeId ino) {
  pb::XattrReq req;
  req.set_ino(ino.value());
  pb::XattrRsp rsp;
  RETURN_IF_ERROR(meta_.Call(rpc::Method::kListXattr, req, &rsp));
  return std::vector<std::string>(rsp.names().begin(), rsp.names().end());
}

Status ClientImpl::RemoveXattr(InodeId ino, std::string_view name) {
  pb::XattrReq req;
  req.set_ino(ino.value());
  req.set_name(std::string(name));
  pb::Empty rsp;
  return meta_.Mutate(rpc::Method::kRemoveXattr, req, &rsp);
}

// ---------------------------------------------------------------- files

std::shared_ptr<InodeState> ClientImpl::StateFor(const Attr& attr) {
  std::lock_guard lock(inodes_mu_);
  auto& slot = inodes_[attr.ino];
  std::shared_ptr<InodeState> st = slot.lock();
  if (!st) {
    st = std::make_shared<InodeState>();
    st->ino = attr.ino;
    st->chunk_size = attr.chunk_size;
    st->size = attr.size;
    st->committed_size = attr.size;
    slot = st;
  } else {
    std::lock_guard state_lock(st->mu);
    st->size = std::max(st->size, attr.size);
    st->committed_size = std::max(st->committed_size, attr.size);
  }
  st->open_files++;
  return st;
}

void ClientImpl::Forget(const std::shared_ptr<InodeState>& st) {
  std::lock_guard lock(inodes_mu_);
  if (--st->open_files == 0) inodes_.erase(st->ino);
}

void ClientImpl::MergeLayout(InodeState& st, const pb::Layout& layout, uint64_t first, uint64_t count) {
  NodeId local = meta_.local_node();
  std::lock_guard lock(st.mu);
  for (const pb::ChunkLayout& c : layout.chunks()) {
    ChunkInfo info = ChunkFromWire(c, local);
    // Keep the version this client already wrote with: meta's is older only
    // until our commit.
    st.layout[info.index] = std::move(info);
  }
  if (first <= st.layout_known_below) st.layout_known_below = std::max(st.layout_known_below, first + count);
}

Result<std::unique_ptr<File>> ClientImpl::OpenWith(const pb::OpenRsp& rsp, int flags) {
  Attr attr = AttrFromWire(rsp.attr());
  std::shared_ptr<InodeState> st = StateFor(attr);
  if (S_ISREG(attr.mode)) {
    // The open reply carries the first chunks of the layout.
    uint64_t covered = std::max<uint64_t>(rsp.layout().chunks_size() > 0
                                              ? rsp.layout().chunks(rsp.layout().chunks_size() - 1).index() + 1
                                              : 0,
                                          1024);
    MergeLayout(*st, rsp.layout(), 0, covered);
    if (flags & O_TRUNC) {
      std::lock_guard lock(st->mu);
      st->size = 0;
      st->committed_size = 0;
      st->layout.clear();
      st->local_files.clear();
      st->dirty_versions.clear();
    }
  }
  return std::unique_ptr<File>(new FileImpl(*this, st, HandleId(rsp.handle()), flags, attr));
}

Result<std::unique_ptr<File>> ClientImpl::Open(InodeId ino, int flags) {
  pb::OpenReq req;
  req.set_session(meta_.session().value());
  req.set_ino(ino.value());
  req.set_flags(static_cast<uint32_t>(flags));
  pb::OpenRsp rsp;
  RETURN_IF_ERROR(meta_.Mutate(rpc::Method::kOpen, req, &rsp));
  return OpenWith(rsp, flags);
}

Result<std::unique_ptr<File>> ClientImpl::Create(InodeId parent, std::string_view name, uint32_t mode,
                                                 int flags, const Caller& caller, bool* created) {
  pb::MakeNodeReq req;
  req.set_parent(parent.value());
  req.set_name(std::string(name));
  req.set_mode(S_IFREG | (mode & 07777));
  req.set_uid(caller.uid);
  req.set_gid(caller.gid);
  req.set_exclusive((flags & O_EXCL) != 0);
  pb::MakeNodeRsp made;
  RETURN_IF_ERROR(meta_.Mutate(rpc::Method::kMakeNode, req, &made));
  if (created != nullptr) *created = made.created();
  // A new file is empty: O_TRUNC would only cost a transaction.
  int open_flags = made.created() ? (flags & ~O_TRUNC) : flags;
  return Open(InodeId(made.attr().ino()), open_flags);
}

Result<LayoutInfo> ClientImpl::GetLayout(InodeId ino) {
  ASSIGN_OR_RETURN(Attr attr, GetAttr(ino));
  LayoutInfo info;
  info.chunk_size = attr.chunk_size;
  info.size = attr.size;
  NodeId local = meta_.local_node();
  for (uint64_t first = 0;;) {
    pb::GetLayoutReq req;
    req.set_ino(ino.value());
    req.set_first_index(first);
    req.set_count(4096);
    pb::LayoutRsp rsp;
    RETURN_IF_ERROR(meta_.Call(rpc::Method::kGetLayout, req, &rsp));
    for (const pb::ChunkLayout& c : rsp.layout().chunks()) info.chunks.push_back(ChunkFromWire(c, local));
    if (rsp.layout().chunks_size() == 0) break;
    first = rsp.layout().chunks(rsp.layout().chunks_size() - 1).index() + 1;
  }
  return info;
}

Result<std::optional<ChunkInfo>> ClientImpl::ChunkFor(InodeState& st, uint64_t index) {
  {
    std::lock_guard lock(st.mu);
    auto it = st.layout.find(index);
    if (it != st.layout.end()) return std::optional<ChunkInfo>(it->second);
    if (index < st.layout_known_below) return std::optional<ChunkInfo>();
  }
  pb::GetLayoutReq req;
  req.set_ino(st.ino.value());
  req.set_first_index(index);
  req.set_count(kLayoutFetch);
  pb::LayoutRsp rsp;
  RETURN_IF_ERROR(meta_.Call(rpc::Method::kGetLayout, req, &rsp));
  MergeLayout(st, rsp.layout(), index, kLayoutFetch);
  std::lock_guard lock(st.mu);
  auto it = st.layout.find(index);
  if (it != st.layout.end()) return std::optional<ChunkInfo>(it->second);
  return std::optional<ChunkInfo>();
}

Result<ChunkInfo> ClientImpl::AllocateChunk(InodeState& st, uint64_t index, bool streaming) {
  {
    std::lock_guard lock(st.mu);
    auto it = st.layout.find(index);
    if (it != st.layout.end()) return it->second;
  }
  pb::AllocateReq req;
  req.set_ino(st.ino.value());
  req.set_writer_node(meta_.local_node().value());
  {
    // A writer that runs off the end of a chunk is streaming: allocate the
    // next few chunks in the same call. A small write allocates only its own.
    std::lock_guard lock(st.mu);
    uint64_t count = streaming ? std::max<uint32_t>(1, options_.allocate_ahead) : 1;
    for (uint64_t ahead = 0; ahead < count; ++ahead) {
      if (ahead == 0 || st.layout.count(index + ahead) == 0) req.add_indices(index + ahead);
    }
  }
  pb::LayoutRsp rsp;
  RETURN_IF_ERROR(meta_.Mutate(rpc::Method::kAllocate, req, &rsp));
  NodeId local = meta_.local_node();
  std::lock_guard lock(st.mu);
  for (const pb::ChunkLayout& c : rsp.layout().chunks()) {
    ChunkInfo info = ChunkFromWire(c, local);
    st.layout.emplace(info.index, std::move(info));  // keep what we had (and its versions)
  }
  auto it = st.layout.find(index);
  if (it == st.layout.end() || it->second.replicas.empty()) {
    return Status(StatusCode::kInternal, fmt::format("meta did not allocate chunk {} of inode {}", index, st.ino));
  }
  return it->second;
}

Result<std::shared_ptr<ChunkFile>> ClientImpl::LocalFile(InodeState& st, const ReplicaInfo& r, bool for_write,
                                                         bool direct) {
  auto key = std::make_pair(r.chunk.value(), direct);
  {
    std::lock_guard lock(st.mu);
    auto it = st.local_files.find(key);
    if (it != st.local_files.end() && (it->second.writable || !for_write) && (it->second.file || !for_write)) {
      return it->second.file;  // may be null: a known hole
    }
  }
  auto opened = data_.OpenLocal(r, /*create=*/for_write, /*writable=*/for_write, direct);
  std::shared_ptr<ChunkFile> file;
  if (opened.ok()) {
    file = std::move(opened).value();
  } else if (opened.status().code() != StatusCode::kDataNoChunk || for_write) {
    return opened.status();
  }
  std::lock_guard lock(st.mu);
  st.local_files[key] = InodeState::LocalFile{file, for_write};
  return file;
}

Result<size_t> ClientImpl::ReadPiece(InodeState& st, const ChunkInfo& chunk, uint64_t offset_in_chunk,
                                     std::span<std::byte> buf, bool direct) {
  if (chunk.replicas.empty()) return size_t{0};
  const ReplicaInfo* chosen = &chunk.replicas.front();
  for (const ReplicaInfo& r : chunk.replicas) {
    if (IsLocal(r)) {
      chosen = &r;
      break;
    }
  }
  Result<size_t> n = size_t{0};
  if (IsLocal(*chosen)) {
    ASSIGN_OR_RETURN(std::shared_ptr<ChunkFile> file, LocalFile(st, *chosen, false, direct));
    if (!file) return size_t{0};  // no local file yet: a hole
    n = file->Read(offset_in_chunk, buf);
    if (n.ok()) {
      counters_.local_reads++;
      counters_.local_read_bytes += *n;
    }
  } else {
    n = data_.Read(*chosen, offset_in_chunk, buf);
    if (n.ok()) {
      counters_.remote_reads++;
      counters_.remote_read_bytes += *n;
    }
  }
  if (!n.ok() && n.status().code() == StatusCode::kDataChecksum) {
    counters_.checksum_errors++;
    LOG_ERROR("inode {} chunk {} on node {}: {}", st.ino, chosen->chunk, chosen->node, n.status().ToString());
  }
  return n;
}

Status ClientImpl::WritePiece(InodeState& st, const ChunkInfo& chunk, uint64_t offset_in_chunk,
                              std::span<const std::byte> data, uint64_t version, bool direct) {
  for (const ReplicaInfo& r : chunk.replicas) {
    if (IsLocal(r)) {
      ASSIGN_OR_RETURN(std::shared_ptr<ChunkFile> file, LocalFile(st, r, true, direct));
      RETURN_IF_ERROR(file->Write(offset_in_chunk, data, version));
      counters_.local_write_bytes += data.size();
    } else {
      RETURN_IF_ERROR(data_.Write(r, offset_in_chunk, data, version));
      counters_.remote_write_bytes += data.size();
    }
  }
  std::lock_guard lock(st.mu);
  st.unsynced.emplace(chunk.replicas.front().chunk, chunk.replicas);
  return Status::Ok();
}

Status ClientImpl::SyncReplicas(InodeState& st) {
  std::unordered_map<ChunkId, std::vector<ReplicaInfo>> unsynced;
  {
    std::lock_guard lock(st.mu);
    unsynced.swap(st.unsynced);
  }
  for (auto& [chunk, replicas] : unsynced) {
    for (const ReplicaInfo& r : replicas) {
      Status st_sync = Status::Ok();
      if (IsLocal(r)) {
        for (bool direct : {false, true}) {
          std::shared_ptr<ChunkFile> file;
          {
            std::lock_guard lock(st.mu);
            auto it = st.local_files.find(std::make_pair(r.chunk.value(), direct));
            if (it != st.local_files.end()) file = it->second.file;
          }
          if (file) st_sync = file->Sync();
          if (!st_sync.ok()) break;
        }
      } else {
        st_sync = data_.Sync(r);
      }
      if (!st_sync.ok()) {
        std::lock_guard lock(st.mu);
        st.unsynced.emplace(chunk, replicas);  // fsync again next time
        return st_sync;
      }
    }
  }
  return Status::Ok();
}

Status ClientImpl::Commit(InodeState& st, HandleId handle, bool durable) {
  pb::CommitReq req;
  uint64_t generation;
  std::vector<std::pair<ChunkId, uint64_t>> versions;
  {
    std::lock_guard lock(st.mu);
    bool dirty = st.write_generation != st.committed_generation || !st.dirty_versions.empty();
    if (!dirty && !(durable && st.needs_durable)) return Status::Ok();
    generation = st.write_generation;
    req.set_ino(st.ino.value());
    req.set_handle(handle.value());
    req.set_size(st.size);
    if (st.write_generation != st.committed_generation) {
      req.set_set_mtime(true);
      TsToWire(st.last_write, req.mutable_mtime());
    }
    for (auto& [chunk, version] : st.dirty_versions) {
      auto* w = req.add_written();
      w->set_chunk(chunk.value());
      w->set_version(version);
      versions.emplace_back(chunk, version);
    }
  }
  req.set_durable(durable);
  pb::AttrRsp rsp;
  RETURN_IF_ERROR(meta_.Mutate(rpc::Method::kCommit, req, &rsp));
  std::lock_guard lock(st.mu);
  st.committed_size = rsp.attr().size();
  st.size = std::max(st.size, st.committed_size);
  if (st.write_generation == generation) st.committed_generation = generation;
  st.needs_durable = !durable;
  for (auto& [chunk, version] : versions) {
    auto it = st.dirty_versions.find(chunk);
    if (it != st.dirty_versions.end() && it->second == version) st.dirty_versions.erase(it);
    // Later writes of this session build on the committed version.
    for (auto& [index, info] : st.layout) {
      for (ReplicaInfo& r : info.replicas) {
        if (r.chunk == chunk) r.version = std::max(r.version, version);
      }
    }
  }
  return Status::Ok();
}

Result<Attr> ClientImpl::Truncate(InodeId ino, InodeState* st, uint64_t size) {
  // Our pending writes first, so that meta's size includes them.
  if (st != nullptr) RETURN_IF_ERROR(Commit(*st, HandleId(), false));
  ASSIGN_OR_RETURN(Attr before, GetAttr(ino));
  if (!S_ISREG(before.mode)) {
    return Status(S_ISDIR(before.mode) ? StatusCode::kIsDirectory : StatusCode::kInvalidArgument,
                  "truncate needs a regular file");
  }
  const uint64_t cs = before.chunk_size;
  const uint64_t boundary = std::min(before.size, size);
  pb::CommitReq versions;  // the boundary chunk's new version, recorded after the truncation
  if (cs > 0 && boundary % cs != 0) {
    // The chunk that keeps a prefix loses its tail on every replica first;
    // chunks wholly past the boundary are dropped by meta below.
    uint64_t index = boundary / cs;
    pb::GetLayoutReq req;
    req.set_ino(ino.value());
    req.set_first_index(index);
    req.set_count(1);
    pb::LayoutRsp rsp;
    RETURN_IF_ERROR(meta_.Call(rpc::Method::kGetLayout, req, &rsp));
    NodeId local = meta_.local_node();
    for (const pb::ChunkLayout& c : rsp.layout().chunks()) {
      if (c.index() != index) continue;
      ChunkInfo chunk = ChunkFromWire(c, local);
      for (const ReplicaInfo& r : chunk.replicas) {
        uint64_t version = r.version + 1;
        if (IsLocal(r)) {
          auto file = data_.OpenLocal(r, /*create=*/false, /*writable=*/true, false);
          if (file.ok()) {
            RETURN_IF_ERROR((*file)->Truncate(boundary % cs, version));
          } else if (file.status().code() != StatusCode::kDataNoChunk) {
            return file.status();
          }
        } else {
          RETURN_IF_ERROR(data_.Truncate(r, boundary % cs, version));
        }
        auto* w = versions.add_written();
        w->set_chunk(r.chunk.value());
        w->set_version(version);
      }
    }
  }
  pb::SetAttrReq req;
  req.set_ino(ino.value());
  req.set_valid(kSetSize);
  req.set_size(size);
  pb::AttrRsp rsp;
  RETURN_IF_ERROR(meta_.Mutate(rpc::Method::kSetAttr, req, &rsp));
  if (versions.written_size() > 0) {
    versions.set_ino(ino.value());
    versions.set_size(0);  // sizes only grow through Commit: this records versions only
    pb::AttrRsp ignored;
    RETURN_IF_ERROR(meta_.Mutate(rpc::Method::kCommit, versions, &ignored));
  }
  if (st != nullptr) {
    std::lock_guard lock(st->mu);
    st->size = size;
    st->committed_size = size;
    uint64_t first_dropped = cs == 0 ? 0 : (boundary + cs - 1) / cs;
    for (auto it = st->layout.lower_bound(first_dropped); it != st->layout.end();) {
      for (const ReplicaInfo& r : it->second.replicas) {
        st->dirty_versions.erase(r.chunk);
        st->unsynced.erase(r.chunk);
        st->local_files.erase(std::make_pair(r.chunk.value(), false));
        st->local_files.erase(std::make_pair(r.chunk.value(), true));
      }
      it = st->layout.erase(it);
    }
    // The boundary chunk's version moved: later writes must carry a newer one.
    for (const pb::ChunkVersion& w : versions.written()) {
      for (auto& [index, info] : st->layout) {
        for (ReplicaInfo& r : info.replicas) {
          if (r.chunk.value() == w.chunk()) r.version = std::max(r.version, w.version());
        }
      }
      st->dirty_versions.erase(ChunkId(w.chunk()));
    }
  }
  return AttrFromWire(rsp.attr());
}

Status ClientImpl::ReleaseHandle(HandleId handle) {
  pb::ReleaseReq req;
  req.set_handle(handle.value());
  pb::Empty rsp;
  return meta_.Mutate(rpc::Method::kRelease, req, &rsp);
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
