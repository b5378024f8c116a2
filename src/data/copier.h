// Copier: executes meta's copy commands (repair, re-replication, drain):
// pulls a chunk from a peer data service that holds a healthy replica and
// installs it here. Data flows node to node, never through meta or a client.
//
// Each copy reads the source in pieces at the committed version (the source
// refuses if it is older), writes a temporary chunk (checksums recomputed
// here, the source having verified its own on read), and moves it into
// place. Copies are throttled to `rate` bytes/s in total so that repair does
// not starve client I/O.
//
// The object tier (protect=object): an upload command sends a replica of
// this node to an S3 object (one PUT, or a multipart upload in parts for a
// large chunk), read at the commanded version and checksum-verified; a copy
// command with an object key is a recall: the same as a copy from a peer
// but read from the object with ranged GETs. Both share the workers and the
// bandwidth budget.
//
// Erasure coding (protect=ec:K+M; docs/formats/ec.md): an encode command
// reads a replica of this node at the commanded version row by row (k
// units of the code at a time), computes the row's m parity cells and
// writes each listed cell's bytes to the cell's node as a chunk of its own
// (id ec::CellChunkId; a row's cells at once, the next row read and encoded
// meanwhile), then cuts each cell to its length and syncs it; a
// copy command with cells is a rebuild: each row is read from the first k
// listed cells that answer at exactly the commanded version (data cells
// first, so a healthy set decodes nothing), the missing data cells are
// computed, and the chunk is written here like any copy. A verify command
// (the parity check meta orders now and then) encodes a replica of this
// node as an encode would and compares each listed cell with it, row by
// row: a cell that differs (bytes, length or version) or is gone is
// reported bad, one that cannot be reached is reported unread. Cells are
// checksummed on their own nodes like any chunk; only this finds a cell
// whose checksums agree with bytes that are not the code of the data.
//
// Thread safety: safe for concurrent use; `threads` workers run copies.
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "data/chunk_store.h"
#include "data/object_read_ahead.h"
#include "ec/erasure_code.h"
#include "rpc/channel.h"
#include "rpc/proto/meta.pb.h"
#include "s3/s3.h"

namespace t0fs::data {

// The shared bandwidth budget of the copy workers: each piece reserves its
// share (`bytes` at `rate` bytes/s) after the reservations before it and
// returns when it may go on. Time already spent since the last reservation
// counts — the work is not paid twice — but at most one share of it: an idle
// copier does not save up a burst. Pure: the caller keeps `until`.
std::chrono::steady_clock::time_point ReserveBandwidth(std::chrono::steady_clock::time_point& until,
                                                       std::chrono::steady_clock::time_point now,
                                                       size_t bytes, uint64_t rate);

class Copier {
 public:
  Copier(ChunkStore& store, rpc::ClientOptions peer_options, uint32_t threads, uint64_t rate_bytes_per_sec);
  ~Copier();
  // Copy (from a peer, the object tier or erasure-coded cells), upload and
  // encode commands.
  void Enqueue(const pb::NodeCommand& cmd);
  // Where the object tier is (from meta's registration answer): opens a
  // client, reading the credentials file. A failure is kept and reported by
  // every upload and recall until a later call succeeds.
  void SetObjectTier(const pb::ObjectTier& tier);
  // Finished copies since the last call.
  std::vector<pb::CopyResult> TakeResults();
  // Ids of copies queued or running.
  std::vector<uint64_t> Active();
  uint64_t bytes_total() const { return bytes_.load(); }
  // Reads out.size() bytes at `offset` of the object of `chunk` at `version`
  // in the object tier (a ranged GET; returns the bytes that arrived, short
  // at the object's end), for a client whose replicas do not answer
  // (ObjectRead). Not throttled: a reader waits for it.
  // Sequential readers are read ahead (object_read_ahead.h).
  Result<size_t> ReadObject(ChunkId chunk, uint64_t version, uint64_t offset,
                            std::span<std::byte> out);
  const ObjectReadAhead& read_ahead() const { return read_ahead_; }

 private:
  static constexpr size_t kPiece = 4u << 20;  // bytes per read of a copy
  static constexpr size_t kRecallInFlight = 4;  // ranged GETs at once in a recall

  // A result for `cmd`, its outcome still to set.
  static pb::CopyResult ResultOf(const pb::NodeCommand& cmd);
  void Worker();
  pb::CopyResult Copy(const pb::NodeCommand& cmd);
  pb::CopyResult Upload(const pb::NodeCommand& cmd);
  pb::CopyResult Encode(const pb::NodeCommand& cmd);
  pb::CopyResult Verify(const pb::NodeCommand& cmd);
  // The rows of a rebuild (copy with ec_cells), written to `out`.
  Status RebuildFromCells(const pb::NodeCommand& cmd, ChunkFile& out);
  // Reads out.size() bytes at `offset` of one of the command's cells, at
  // exactly the command's version; returns the bytes read (short at its end).
  Result<size_t> ReadCell(const pb::NodeCommand& cmd, const pb::EcCell& cell, uint64_t offset,
                          std::span<std::byte> out);
  // The code of an encode, rebuild or verify command, its unit and cell
  // indices checked.
  static Result<ec::ErasureCode> CodeOf(const pb::NodeCommand& cmd);
  // Reads buf.size() bytes at `offset` of the command's replica on this
  // node at exactly its version (checksums verified by the store; a write
  // meanwhile fails it), counted and throttled.
  Status ReadLocal(const pb::NodeCommand& cmd, uint64_t offset, std::span<std::byte> buf);
  // The object tier's client, or why there is none.
  Result<std::shared_ptr<s3::Client>> ObjectClient();
  rpc::Channel& PeerChannel(const std::string& address);
  void Throttle(size_t bytes);

  ChunkStore& store_;
  const rpc::ClientOptions peer_options_;
  const uint64_t rate_;
  std::atomic<uint64_t> bytes_{0};
  ObjectReadAhead read_ahead_;

  std::mutex mu_;  // guards everything below
  std::condition_variable cv_;
  std::deque<pb::NodeCommand> queue_;
  std::vector<uint64_t> running_;
  std::vector<pb::CopyResult> results_;
  std::unordered_map<std::string, std::unique_ptr<rpc::Channel>> peers_;
  std::chrono::steady_clock::time_point throttle_until_{};
  std::string object_config_;           // the serialized pb::ObjectTier in use
  std::string object_prefix_;           // of its keys (common/object_key.h)
  std::shared_ptr<s3::Client> object_;  // null: see object_status_
  Status object_status_{StatusCode::kNotSupported,
                        "this cluster has no object tier (meta runs without --object-endpoint)"};
  bool stopping_ = false;
  std::vector<std::thread> workers_;
};

}  // namespace t0fs::data
