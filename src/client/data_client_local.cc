// DataClient's calls to the data service on this host that hand out chunk
// files (data_client.h): OpenLocal, PrepareLocal (with reuse) and AdoptLocal.
#include <fcntl.h>
#include <fmt/format.h>

#include <algorithm>

#include "client/data_client.h"
#include "rpc/convert.h"
#include "rpc/proto/data.pb.h"

namespace t0fs::client {

Result<std::shared_ptr<ChunkFile>> DataClient::OpenLocal(const ReplicaInfo& r,
                                                         const Capability& cap, bool create,
                                                         bool writable, bool direct, bool retry, bool lazy) {
  if (!retry && !create) RETURN_IF_ERROR(NotSuspect(r.node));
  ASSIGN_OR_RETURN(rpc::Channel * ch, LocalChannel());
  pb::OpenLocalReq req;
  req.set_chunk(r.chunk.value());
  req.set_volume(r.volume.value());
  req.set_create(create);
  req.set_writable(writable);
  req.set_direct(direct);
  req.set_lazy(lazy);
  req.set_base_version(r.version);
  rpc::ToWire(cap, req.mutable_cap());
  std::vector<UniqueFd> fds;
  pb::OpenLocalRsp rsp;
  Status opened = Attempt(
      ch, [&] { return fmt::format("open local chunk {}", r.chunk); }, retry,
      [&] {
        fds.clear();
        return ch->Call<rpc::Method::kOpenLocal>(req, &rsp, {.reply_fds = &fds});
      });
  if (rpc::IsTransportError(opened.code())) Unreachable(r.node);
  RETURN_IF_ERROR(opened);
  Reachable(r.node);
  if (fds.size() != 2) {
    return Status(StatusCode::kRpcMalformed,
                  fmt::format("open local chunk {}: expected 2 descriptors", r.chunk));
  }
  auto file = std::make_shared<ChunkFile>(r.chunk, std::move(fds[0]), std::move(fds[1]), direct);
  file->set_unnamed(rsp.unnamed());
  RETURN_IF_ERROR(file->ReadHeader());
  return file;
}

Result<std::vector<std::shared_ptr<ChunkFile>>> DataClient::PrepareLocal(
    std::span<const PreparedChunkId> chunks, std::span<const std::shared_ptr<ChunkFile>> reuse) {
  if (chunks.empty()) return std::vector<std::shared_ptr<ChunkFile>>{};
  reuse = reuse.first(std::min(reuse.size(), chunks.size()));
  ASSIGN_OR_RETURN(rpc::Channel * ch, LocalChannel());
  pb::PrepareLocalReq req;
  req.set_volume(chunks.front().volume.value());
  for (const PreparedChunkId& c : chunks) {
    req.add_chunks(c.chunk.value());
    rpc::ToWire(c.cap, req.add_caps());
  }
  std::vector<int> reuse_fds;
  for (const std::shared_ptr<ChunkFile>& f : reuse) {
    req.add_reuse(f->chunk().value());
    reuse_fds.push_back(f->data_fd());
    reuse_fds.push_back(f->crc_fd());
  }
  std::vector<UniqueFd> fds;
  pb::PrepareLocalRsp rsp;
  RETURN_IF_ERROR(
      ch->Call<rpc::Method::kPrepareLocal>(req, &rsp, {.reply_fds = &fds, .fds = reuse_fds}));
  // An older node answers no `reused` and sends files for every chunk.
  const bool knows_reuse = static_cast<size_t>(rsp.reused_size()) == chunks.size();
  const size_t reused =
      knows_reuse ? static_cast<size_t>(std::count(rsp.reused().begin(), rsp.reused().end(), true))
                  : 0;
  if (fds.size() != 2 * (chunks.size() - reused) ||
      static_cast<size_t>(rsp.unnamed_size()) != chunks.size()) {
    return Status(StatusCode::kRpcMalformed,
                  fmt::format("prepare {} local chunks: {} descriptors in the reply", chunks.size(), fds.size()));
  }
  std::vector<std::shared_ptr<ChunkFile>> files;
  size_t next_fd = 0;
  for (size_t i = 0; i < chunks.size(); ++i) {
    const int at = static_cast<int>(i);
    std::shared_ptr<ChunkFile> file;
    if (knows_reuse && rsp.reused(at)) {
      if (i >= reuse.size()) {
        return Status(
            StatusCode::kRpcMalformed,
            fmt::format("prepare local chunks: chunk {} reused nothing", chunks[i].chunk));
      }
      // The same files (our open file descriptions) under the new id.
      UniqueFd data(::fcntl(reuse[i]->data_fd(), F_DUPFD_CLOEXEC, 0));
      UniqueFd crc(data.valid() ? ::fcntl(reuse[i]->crc_fd(), F_DUPFD_CLOEXEC, 0) : -1);
      if (!crc.valid()) {
        return Status::FromErrno(errno,
                                 fmt::format("reuse the files of chunk {}", reuse[i]->chunk()));
      }
      file = std::make_shared<ChunkFile>(chunks[i].chunk, std::move(data), std::move(crc), false);
      RETURN_IF_ERROR(file->ReadHeader());
    } else {
      // A new chunk: its header is version 0, nothing to read.
      file = std::make_shared<ChunkFile>(chunks[i].chunk, std::move(fds[next_fd]),
                                         std::move(fds[next_fd + 1]), false);
      next_fd += 2;
    }
    file->set_unnamed(rsp.unnamed(at));
    files.push_back(std::move(file));
  }
  return files;
}

Status DataClient::AdoptLocal(const ReplicaInfo& r, const Capability& cap, ChunkFile& file) {
  ASSIGN_OR_RETURN(rpc::Channel * ch, LocalChannel());
  pb::AdoptLocalReq req;
  req.set_chunk(r.chunk.value());
  req.set_volume(r.volume.value());
  rpc::ToWire(cap, req.mutable_cap());
  const int fds[2] = {file.data_fd(), file.crc_fd()};
  // Retried: the files live on in our descriptors while the service restarts.
  RETURN_IF_ERROR(Attempt(
      ch, [&] { return fmt::format("name local chunk {}", r.chunk); }, /*retry=*/true,
      [&] { return ch->Call<rpc::Method::kAdoptLocal>(req, nullptr, {.fds = fds}); }));
  file.set_unnamed(false);
  return Status::Ok();
}

}  // namespace t0fs::client
