// ChunkPool: files of new chunks prepared on this host's data node ahead of
// the creates that will use them, so that a create needs meta only.
//
// A writer that creates a file gets chunk 0 on its own node (local first);
// without the pool it then asks the data node for that chunk's files (a lazy
// OpenLocal: unnamed files, data/chunk_store.h) — one more round trip, and
// the data node's CPU, on every create. The pool does that in batches: it
// reserves chunk ids from meta (ReserveChunks), has the data node prepare
// their unnamed files in one call (PrepareLocal), and hands one id to each
// create (MakeNodeReq.first_chunk_id), whose chunk 0 then takes it. Because
// the data node knows the ids, another writer of the chunk (another client,
// an O_DIRECT open) finds and names the same files, as with a lazy open.
//
// A prepared file holds its writer byte (ChunkFile::HoldWriter) from the
// moment it arrives, so the data node keeps it while this client lives; a
// file that outlives its use (the create found an existing file, meta placed
// the chunk elsewhere) is simply closed: unnamed and unheld, the data node
// lets it go. Ids never used are gaps in the id space, nothing more.
//
// Refills run on a thread of the pool's own (started by the first Take),
// asked for when a Take leaves less than a batch (so up to two batches are
// held, and a refill has a batch's creates to finish in): a create waits
// for a refill only when the pool is empty (the first create, or creates
// faster than refills), never holding the lock across one. (A refill inside the
// Take that found the pool empty made every batch's last creates, and every
// thread queued behind them, wait for a meta and a data node round trip and
// the creation of a batch of files: a fifth of all creates took 5–20 ms.)
//
// A new file closed empty (most of an untar's directories' siblings, every
// `touch`, a metadata benchmark's files) leaves its prepared files unused:
// the client hands them back (Recycle) and the next refill asks the data
// node to give them to one of the new ids (PrepareLocal with `reuse`),
// which it does only if they are still unnamed, empty and were handed to
// nobody else (data/chunk_store.h Reuse). A create and removal of an empty
// file then costs the node's file system nothing at all: on ext4 without a
// journal each new inode scanned past the recently freed ones, most of the
// data node's CPU in a create storm. (The old id stays meta's, freed as
// before: the data node only forgets it.)
//
// A data node that restarted forgot the unnamed files it prepared (another
// writer of such a chunk would make other files, and the commits would then
// clash): Take asks the files' keeper lock (ChunkFile::KeeperAlive) and,
// when the data node no longer holds it, empties the pool and waits for a
// fresh batch.
//
// Off (Take returns nothing) without a local node or when asked for 0; a
// failed refill (an older meta or data node, no volume with room) turns it
// off for kRetryAfter and the creates go on without it.
// Thread safety: safe for concurrent use.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include "client/data_client.h"
#include "client/meta_client.h"
#include "common/chunk_file.h"

namespace t0fs::client {

struct PreparedChunk {
  PreparedChunkId id;               // the id, its volume, meta's capability for it (a create names it with that)
  std::shared_ptr<ChunkFile> file;  // unnamed (or, after a data node's restart, named) files, writer byte held
  std::chrono::steady_clock::time_point prepared_at;
};

class ChunkPool {
 public:
  // `batch`: chunks prepared per refill (at most kMaxBatch); 0 = off.
  ChunkPool(MetaClient& meta, DataClient& data, uint32_t batch);
  ~ChunkPool();  // waits for a refill under way
  ChunkPool(const ChunkPool&) = delete;
  ChunkPool& operator=(const ChunkPool&) = delete;

  static constexpr uint32_t kMaxBatch = 32;  // two descriptors each in one reply (rpc::kMaxFrameFds)
  static constexpr std::chrono::seconds kRetryAfter{30};
  // A data node that restarts forgets the unnamed files it prepared: a
  // create using one still works (the commit names it from our
  // descriptors), but another writer of that new chunk would make other
  // files, and the commit then fails. Prepared chunks are therefore used
  // for this long only (a busy creator uses a batch in well under that).
  static constexpr std::chrono::seconds kMaxAge{60};

  // A prepared chunk for a create; waits for a refill when the pool is
  // empty; nullopt when off. Chunks older than kMaxAge or whose capability
  // is about to expire (meta would not take their ids) are dropped.
  std::optional<PreparedChunk> Take();
  // Gives back one the create did not use (its id is still unused).
  void Return(PreparedChunk chunk);
  // The files of a chunk a create used and its file was closed empty, no
  // longer used by this client (the inode's last close): offered to the
  // node for a new id at the next refill (at most kMaxRecycled wait).
  void Recycle(std::shared_ptr<ChunkFile> file);
  static constexpr size_t kMaxRecycled = 2 * kMaxBatch;

 private:
  // Take; `retry`: once more when the data node no longer keeps the files.
  std::optional<PreparedChunk> Take(bool retry);
  // Asks the refill thread for a batch (starting it the first time).
  void WantRefillLocked();
  void RunRefills();
  // One batch: reserved at meta, files prepared by the data node, held.
  Result<std::vector<PreparedChunk>> Prepare();
  void DropExpiredLocked();

  MetaClient& meta_;
  DataClient& data_;
  const uint32_t batch_;
  std::mutex mu_;                      // guards the fields below; never held across a refill
  std::condition_variable ready_cv_;   // ready_ grew, or a refill ended
  std::condition_variable refill_cv_;  // a refill is wanted, or stop_
  std::deque<PreparedChunk> ready_;
  struct Recycled {
    std::shared_ptr<ChunkFile> file;
    std::chrono::steady_clock::time_point since;
  };
  std::deque<Recycled> recycled_;  // newest last
  std::chrono::steady_clock::time_point off_until_{};
  bool want_refill_ = false;  // asked of the refill thread, not begun
  bool refilling_ = false;    // a refill is under way
  uint64_t refills_ended_ = 0;
  bool stop_ = false;
  std::thread refiller_;
};

}  // namespace t0fs::client
