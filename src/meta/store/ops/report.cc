// Counts and ListChunks: what `t0fs status` and fsck read.
#include <fmt/format.h>

#include <limits>
#include <map>

#include "ec/cells.h"
#include "meta/store/posix_store.h"
#include "meta/store/store_util.h"

namespace t0fs::meta {

Result<StoreCounts> PosixStore::Counts() {
  StoreCounts c;
  RETURN_IF_ERROR(Read([&](ReadTxn& txn) -> Status {
    ASSIGN_OR_RETURN(RowTotals t, txn.Totals());
    c.files = t.files;
    c.directories = t.directories;
    c.chunks = t.chunks;
    c.logical_bytes = t.logical_bytes;
    c.sessions = t.sessions;
    c.open_handles = t.handles;
    c.garbage_chunks = t.garbage;
    return Status::Ok();
  }));
  return c;
}

Result<std::vector<ChunkRecord>> PosixStore::ListChunks(ChunkId after, size_t max, bool* eof) {
  std::vector<ChunkRecord> out;
  bool at_end = true;
  if (max == 0) return Status(StatusCode::kInvalidArgument, "list of 0 chunks");
  RETURN_IF_ERROR(Read([&](ReadTxn& txn) -> Status {
    out.clear();
    at_end = true;
    // The next chunk ids first (one more than can fit, to detect the end):
    // chunks in a layout with replicas, and chunks with garbage rows. Then
    // each chunk's rows: a page never splits a chunk's replicas, since the
    // next page starts after the last chunk id returned.
    ASSIGN_OR_RETURN(std::vector<ChunkWithReplicas> live, txn.ScanChunks(after, max + 1));
    ASSIGN_OR_RETURN(std::vector<ChunkId> queued, txn.ListGarbageChunks(after, max + 1));
    // Both lists are cut at max + 1: the ids beyond the smaller cut are
    // not known yet, so the page ends there.
    bool truncated = false;
    uint64_t bound = std::numeric_limits<uint64_t>::max();
    if (live.size() > max) {
      truncated = true;
      bound = std::min(bound, live.back().chunk.id.value());
    }
    if (queued.size() > max) {
      truncated = true;
      bound = std::min(bound, queued.back().value());
    }
    std::map<ChunkId, const ChunkWithReplicas*> ids;
    for (const ChunkWithReplicas& c : live) {
      if ((!c.replicas.empty() || !c.chunk.ec.empty()) && c.chunk.id.value() <= bound) {
        ids.emplace(c.chunk.id, &c);
      }
    }
    for (ChunkId id : queued) {
      if (id.value() <= bound) ids.emplace(id, nullptr);
    }
    at_end = !truncated;
    size_t i = 0;
    for (const auto& [chunk, layout] : ids) {
      if (i++ == max + 1) break;
      std::vector<ChunkRecord> rows;
      if (layout != nullptr) {
        for (const ReplicaRow& r : layout->replicas) {
          if (r.state == ReplicaState::kOffloaded) continue;  // no file behind it
          rows.push_back(ChunkRecord{chunk, layout->chunk.ino, layout->chunk.index,
                                     internal::ReplicaOf(r), false});
        }
        // Its cells, under the chunk's id (pages follow chunk ids).
        auto stripe = ec::ParseStripe(layout->chunk.ec);
        for (uint32_t cell = 0; stripe.ok() && cell < stripe->cells.size(); ++cell) {
          const ec::CellPlace& place = stripe->cells[cell];
          if (place.node.value() == 0) continue;
          rows.push_back(ChunkRecord{chunk, layout->chunk.ino, layout->chunk.index,
                                     Replica{place.node, place.volume, ec::CellChunkId(chunk, cell),
                                             stripe->version, ReplicaState::kHealthy},
                                     false, cell + 1});
        }
      }
      ASSIGN_OR_RETURN(std::vector<GarbageRow> garbage, txn.ListGarbageOfChunk(chunk));
      for (const GarbageRow& g : garbage) {
        rows.push_back(ChunkRecord{chunk, g.ino, g.index,
                                   Replica{g.node, g.volume, chunk, g.version, ReplicaState::kHealthy},
                                   true});
      }
      // A chunk with more rows than `max` still goes out whole, alone.
      if (!out.empty() && out.size() + rows.size() > max) {
        at_end = false;
        return Status::Ok();
      }
      out.insert(out.end(), rows.begin(), rows.end());
      if (out.size() >= max && i < std::min(ids.size(), max + 1)) {
        at_end = false;
        return Status::Ok();
      }
    }
    return Status::Ok();
  }));
  if (eof != nullptr) *eof = at_end;
  return out;
}

}  // namespace t0fs::meta
