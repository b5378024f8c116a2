// Namespace operations: thin conversions between the wire and the store,
// which implements the POSIX semantics (src/meta/store/ops/).
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>

#include <array>
#include <span>

#include "meta/meta_service.h"
#include "meta/policy.h"
#include "rpc/convert.h"
#include "rpc/proto/meta.pb.h"

namespace t0fs::meta {

using rpc::Call;
using rpc::Method;
using rpc::FromWire;
using rpc::Handle;
using rpc::ToWire;


void MetaService::AddNamespaceHandlers(HandlerList& h) {
  h.push_back(Handle<Method::kLookup>(
      [this](const pb::LookupReq& req, pb::AttrRsp& rsp, Call&) -> Status {
        ASSIGN_OR_RETURN(InodeAttr attr, store_->Lookup(InodeId(req.parent()), req.name()));
        ToWire(attr, rsp.mutable_attr());
        return Status::Ok();
      }));

  h.push_back(Handle<Method::kGetAttr>(
      [this](const pb::GetAttrReq& req, pb::AttrRsp& rsp, Call&) -> Status {
        ASSIGN_OR_RETURN(InodeAttr attr, store_->GetAttr(InodeId(req.ino())));
        ToWire(attr, rsp.mutable_attr());
        return Status::Ok();
      }));

  h.push_back(Handle<Method::kSetAttr>(
      [this](const pb::SetAttrReq& req, pb::AttrRsp& rsp, Call&) -> Status {
        SetAttrArgs args;
        args.ino = InodeId(req.ino());
        args.mask = req.valid();
        args.mode = req.mode();
        args.uid = req.uid();
        args.gid = req.gid();
        args.size = req.size();
        args.keep_chunks = req.keep_chunks();
        args.atime = FromWire(req.atime());
        args.mtime = FromWire(req.mtime());
        args.ctime = FromWire(req.ctime());
        const OpToken token = FromWire<OpToken>(req.token());
        ASSIGN_OR_RETURN(InodeAttr attr, store_->SetAttr(token, args, WallNow()));
        ToWire(attr, rsp.mutable_attr());
        changes_.Add(token.session, {InodeChange(args.ino)});
        return Status::Ok();
      }));

  h.push_back(Handle<Method::kMakeNode>(
      [this](const pb::MakeNodeReq& req, pb::MakeNodeRsp& rsp, Call&) -> Status {
        MakeNodeArgs args;
        args.parent = InodeId(req.parent());
        args.name = req.name();
        args.mode = req.mode();
        args.uid = req.uid();
        args.gid = req.gid();
        args.rdev = req.rdev();
        args.exclusive = req.exclusive();
        args.link_target = req.link_target();
        if ((args.mode & S_IFMT) == S_IFREG) {
          // Policy: the directory's objective picks the chunk size, decided
          // in the create's transaction.
          args.file_chunk_size = [this](const InodeAttr& dir) { return NewFileChunkSize(dir, config_); };
          args.open_session = SessionId(req.open_session());
          args.open_flags = req.open_flags();
          // Chunk 0 on the writer's node, placed from the new file's
          // objective (its directory's). No place now (no usable node, full
          // volumes): the writer's own Allocate reports why.
          auto nodes = args.open_session.valid() && req.first_chunk()
                           ? CachedNodes()
                           : Status(StatusCode::kNotFound, "no chunk 0 asked for");
          if (nodes.ok()) {
            args.first_chunk_id = ReservedChunk(req);
            args.place_first_chunk = [nodes = *nodes, choices = ChoicesOf(**nodes), writer = NodeId(req.writer_node()),
                                      volume = VolumeId(req.first_chunk_volume())](const InodeAttr& file) {
              auto targets = PlaceOn(choices, file, writer, volume);
              return targets.ok() ? std::move(targets).value() : std::vector<ReplicaTarget>{};
            };
          }
        }
        const OpToken token = FromWire<OpToken>(req.token());
        ASSIGN_OR_RETURN(MakeNodeResult made, store_->MakeNode(token, args, WallNow()));
        changes_.Add(token.session, {NameChange(args.parent, args.name), InodeChange(args.parent)});
        ToWire(made.attr, rsp.mutable_attr());
        rsp.set_created(made.created);
        ToWire(made.parent, rsp.mutable_parent());
        if (made.handle.valid()) {
          rsp.set_handle(made.handle.value());
          const bool write = (req.open_flags() & O_ACCMODE) != O_RDONLY;
          LayoutToWire(made.attr.ino, made.attr.chunk_size, made.layout, write ? kCapRead | kCapWrite : kCapRead,
                       rsp.mutable_layout());
        }
        return Status::Ok();
      }));

  h.push_back(Handle<Method::kUnlink>(
      [this](const pb::RemoveReq& req, pb::RemoveRsp& rsp, Call&) -> Status {
        InodeAttr dir;
        InodeId unlinked;
        const OpToken token = FromWire<OpToken>(req.token());
        RETURN_IF_ERROR(
            store_->Unlink(token, InodeId(req.parent()), req.name(), WallNow(), &dir, &unlinked));
        const InodeId parent(req.parent());
        std::array<ChangeFeed::Change, 3> feed = {NameChange(parent, req.name()),
                                                  InodeChange(parent)};
        // The inode too (not known on a replay): the link count of its other
        // names, which another client's kernel keeps for the cache time.
        size_t count = 2;
        if (unlinked.valid()) feed[count++] = InodeChange(unlinked);
        changes_.Add(token.session, std::span(feed).first(count));
        if (dir.ino.valid()) ToWire(dir, rsp.mutable_parent());
        return Status::Ok();
      }));

  h.push_back(Handle<Method::kRmdir>(
      [this](const pb::RemoveReq& req, pb::RemoveRsp& rsp, Call&) -> Status {
        InodeAttr dir;
        const OpToken token = FromWire<OpToken>(req.token());
        RETURN_IF_ERROR(store_->Rmdir(token, InodeId(req.parent()), req.name(), WallNow(), &dir));
        const InodeId parent(req.parent());
        changes_.Add(token.session, {NameChange(parent, req.name()), InodeChange(parent)});
        if (dir.ino.valid()) ToWire(dir, rsp.mutable_parent());
        return Status::Ok();
      }));

  h.push_back(Handle<Method::kRename>(
      [this](const pb::RenameReq& req, pb::Empty&, Call&) -> Status {
        const OpToken token = FromWire<OpToken>(req.token());
        const InodeId from(req.old_parent()), to(req.new_parent());
        std::vector<InodeId> changed;
        RETURN_IF_ERROR(store_->Rename(token, from, req.old_name(), to, req.new_name(), req.flags(),
                                       WallNow(), &changed));
        // The moved inode (its ctime) and the replaced one (its link count).
        std::array<ChangeFeed::Change, 6> feed = {NameChange(from, req.old_name()),
                                                  NameChange(to, req.new_name()), InodeChange(from),
                                                  InodeChange(to)};
        size_t count = 4;
        for (InodeId ino : changed) {
          if (count == feed.size()) break;
          feed[count++] = InodeChange(ino);
        }
        changes_.Add(token.session, std::span(feed).first(count));
        return Status::Ok();
      }));

  h.push_back(Handle<Method::kLink>(
      [this](const pb::LinkReq& req, pb::AttrRsp& rsp, Call&) -> Status {
        const OpToken token = FromWire<OpToken>(req.token());
        const InodeId dir(req.new_parent());
        ASSIGN_OR_RETURN(InodeAttr attr, store_->Link(token, InodeId(req.ino()), dir, req.new_name(), WallNow()));
        changes_.Add(token.session, {NameChange(dir, req.new_name()), InodeChange(dir), InodeChange(attr.ino)});
        ToWire(attr, rsp.mutable_attr());
        return Status::Ok();
      }));

  h.push_back(Handle<Method::kReadLink>(
      [this](const pb::GetAttrReq& req, pb::ReadLinkRsp& rsp, Call&) -> Status {
        ASSIGN_OR_RETURN(std::string target, store_->ReadLink(InodeId(req.ino())));
        rsp.set_target(std::move(target));
        return Status::Ok();
      }));

  h.push_back(Handle<Method::kReadDir>(
      [this](const pb::ReadDirReq& req, pb::ReadDirRsp& rsp, Call&) -> Status {
        size_t max = req.max_entries() == 0 || req.max_entries() > 4096 ? 4096 : req.max_entries();
        bool eof = false;
        ASSIGN_OR_RETURN(auto entries, store_->ReadDir(InodeId(req.ino()), req.cookie(), max,
                                                       req.with_attrs(), &eof));
        for (const DirEntry& e : entries) {
          auto* out = rsp.add_entries();
          out->set_name(e.name);
          out->set_ino(e.ino.value());
          out->set_mode(e.mode);
          out->set_cookie(e.cookie);
          if (e.attr) ToWire(*e.attr, out->mutable_attr());
        }
        rsp.set_eof(eof);
        return Status::Ok();
      }));

  h.push_back(Handle<Method::kStatFs>(
      [this](const pb::Empty&, pb::StatFsRsp& rsp, Call&) -> Status {
        ASSIGN_OR_RETURN(auto nodes, ListNodes());
        uint64_t total = 0, free = 0;
        for (const NodeRecord& node : nodes) {
          if (!IsUp(node.node)) continue;  // its space is not usable now
          for (const VolumeRecord& v : node.volumes) {
            total += v.total_bytes;
            free += v.free_bytes;
          }
        }
        ASSIGN_OR_RETURN(StoreCounts counts, store_->Counts());
        rsp.set_total_bytes(total);
        rsp.set_free_bytes(free);
        rsp.set_used_bytes(total - free);
        rsp.set_files(counts.files + counts.directories);
        rsp.set_block_size(4096);
        rsp.set_max_name(static_cast<uint32_t>(kMaxNameLength));
        return Status::Ok();
      }));

  h.push_back(Handle<Method::kGetXattr>(
      [this](const pb::XattrReq& req, pb::XattrRsp& rsp, Call&) -> Status {
        ASSIGN_OR_RETURN(std::string value, store_->GetXattr(InodeId(req.ino()), req.name()));
        rsp.set_value(std::move(value));
        return Status::Ok();
      }));

  h.push_back(Handle<Method::kSetXattr>(
      [this](const pb::XattrReq& req, pb::Empty&, Call&) -> Status {
        const OpToken token = FromWire<OpToken>(req.token());
        RETURN_IF_ERROR(store_->SetXattr(token, InodeId(req.ino()), req.name(), req.value(), req.flags(), WallNow()));
        changes_.Add(token.session, {InodeChange(InodeId(req.ino()))});  // its ctime
        return Status::Ok();
      }));

  h.push_back(Handle<Method::kListXattr>(
      [this](const pb::XattrReq& req, pb::XattrRsp& rsp, Call&) -> Status {
        ASSIGN_OR_RETURN(auto names, store_->ListXattr(InodeId(req.ino())));
        for (auto& name : names) rsp.add_names(std::move(name));
        return Status::Ok();
      }));

  h.push_back(Handle<Method::kRemoveXattr>(
      [this](const pb::XattrReq& req, pb::Empty&, Call&) -> Status {
        const OpToken token = FromWire<OpToken>(req.token());
        RETURN_IF_ERROR(store_->RemoveXattr(token, InodeId(req.ino()), req.name(), WallNow()));
        changes_.Add(token.session, {InodeChange(InodeId(req.ino()))});
        return Status::Ok();
      }));
}

}  // namespace t0fs::meta
