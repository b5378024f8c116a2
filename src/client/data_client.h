// DataClient: libt0fs's access to chunk replicas.
//
// Remote replicas: chunk RPCs over TCP to the node's advertised address
// (node addresses come from meta and are refreshed when a node is unknown).
// Local replicas: descriptors of the chunk files obtained once from the
// local data service over its unix socket (fd passing) and then used
// directly, with the same checksum rules (common/chunk_file.h).
//
// Every call retries transport errors (a data service restarting) until the
// retry timeout; chunk reads and writes are idempotent.
//
// Thread safety: safe for concurrent use.
#pragma once

#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <unordered_map>

#include "client/meta_client.h"
#include "common/chunk_file.h"
#include "rpc/channel.h"
#include "t0fs/client.h"

namespace t0fs::client {

class DataClient {
 public:
  DataClient(const ClientOptions& options, std::string secret, MetaClient& meta);

  // Reads from a remote replica into buf; returns the bytes the chunk file
  // holds there (short at its end). A replica never written (version 0)
  // whose file does not exist reads as empty.
  Result<size_t> Read(const ReplicaInfo& r, uint64_t offset, std::span<std::byte> buf);
  Status Write(const ReplicaInfo& r, uint64_t offset, std::span<const std::byte> data, uint64_t version);
  Status Truncate(const ReplicaInfo& r, uint64_t length, uint64_t version);
  Status Sync(const ReplicaInfo& r);
  // Opens the local replica's files through the local data service.
  // kDataNoChunk when `create` is false and the chunk has no file yet.
  Result<std::shared_ptr<ChunkFile>> OpenLocal(const ReplicaInfo& r, bool create, bool writable,
                                               bool direct);

 private:
  Result<rpc::Channel*> ChannelFor(NodeId node);
  Result<rpc::Channel*> LocalChannel();
  Status Retry(const std::string& what, const std::function<Status()>& attempt);

  const ClientOptions options_;
  const std::string secret_;
  MetaClient& meta_;
  rpc::ClientOptions channel_options_;
  std::mutex mu_;  // guards channels_, local_
  std::unordered_map<NodeId, std::unique_ptr<rpc::Channel>> channels_;
  std::unique_ptr<rpc::Channel> local_;
  std::string local_path_;
};

}  // namespace t0fs::client
