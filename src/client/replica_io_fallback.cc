// The reads of ReplicaIo (replica_io.h) when no replica answers: decoded
// from a chunk's erasure-coded cells (degraded reads, protect=ec), or read
// from its copy in the object tier through a data node (protect=object).
#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "client/replica_io.h"
#include "common/buffer.h"
#include "common/logging.h"
#include "ec/cells.h"
#include "ec/erasure_code.h"
#include "ec/rows.h"
#include "ec/stripe_record.h"
#include "rpc/channel.h"

namespace t0fs::client {

Result<size_t> ReplicaIo::ObjectRead(const CachedChunk& chunk, uint64_t offset,
                                     std::span<std::byte> buf) {
  const ChunkInfo& info = chunk.info;
  if (info.replicas.empty())
    return Status(StatusCode::kIoError, "no chunk id to read from the object tier");
  // This client's node first (no network between it and us), then the
  // ones that did not just fail.
  std::vector<NodeId> readers = info.object_readers;
  std::stable_sort(readers.begin(), readers.end(), [&](NodeId a, NodeId b) {
    auto rank = [&](NodeId n) { return n == meta_.local_node() ? 0 : data_.Suspect(n) ? 2 : 1; };
    return rank(a) < rank(b);
  });
  Status last;
  for (NodeId via : readers) {
    Result<size_t> n = data_.ReadObject(via, info.replicas.front().chunk, info.object_version,
                                        chunk.cap, offset, buf);
    if (n.ok()) {
      data_.Reachable(via);
      stats_.object_reads++;
      return n;
    }
    last = n.status();
    if (last.code() == StatusCode::kDataCapabilityExpired) return last;
    if (rpc::IsTransportError(last.code())) data_.Unreachable(via);
  }
  return last;
}

Result<size_t> ReplicaIo::DegradedRead(const CachedChunk& chunk, uint64_t offset,
                                       std::span<std::byte> buf) {
  const ChunkInfo& info = chunk.info;
  ASSIGN_OR_RETURN(ec::EcStripe stripe, ec::ParseStripe(info.ec));
  const uint64_t committed = CommittedVersion(info);
  if (stripe.empty() || info.replicas.empty() || stripe.version != committed) {
    return Status(StatusCode::kIoError,
                  fmt::format("no erasure-coded cells of version {} to read from (cells at "
                              "version {})",
                              committed, stripe.version));
  }
  ASSIGN_OR_RETURN(ec::ErasureCode code, ec::ErasureCode::Make(stripe.k, stripe.m));
  const ChunkId chunk_id = info.replicas.front().chunk;
  const uint32_t k = stripe.k, cells = k + stripe.m;
  const uint64_t unit = stripe.unit, row_len = k * unit;
  if (offset >= stripe.length || buf.empty()) return size_t{0};
  const uint64_t len = std::min<uint64_t>(buf.size(), stripe.length - offset);
  // Cells in the order they are tried: data cells first (nothing to
  // decode when they answer), a node that just failed last.
  std::vector<uint32_t> order(cells);
  for (uint32_t i = 0; i < cells; ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    return data_.Suspect(stripe.cells[a].node) < data_.Suspect(stripe.cells[b].node);
  });
  std::vector<bool> failed(cells);
  for (uint32_t i = 0; i < cells; ++i) failed[i] = stripe.cells[i].node.value() == 0;
  // A row's cells, each at i·unit (reused by this thread's next reads: a
  // fresh buffer of megabytes is page faults on every read).
  thread_local AlignedBuffer cell_buf;
  cell_buf.Reserve(cells * unit);
  std::string why;  // the first cell that failed
  // Reads columns [a, a + w) of cell i's row r into its slot of cell_buf
  // (zero past the cell's bytes); false when the cell does not answer.
  auto read_cell = [&](uint32_t i, uint64_t r, uint64_t n, uint64_t a, uint64_t w) -> Result<bool> {
    std::byte* at = cell_buf.data() + i * unit;
    const uint64_t stored = ec::CellRowBytes(n, k, unit, i);
    const uint64_t bytes = stored > a ? std::min(w, stored - a) : 0;
    if (bytes > 0) {
      const ec::CellPlace& place = stripe.cells[i];
      ReplicaInfo cell{place.node,     place.volume, ec::CellChunkId(chunk_id, i),
                       stripe.version, false,        ReplicaState::kHealthy};
      uint64_t version = 0;
      Result<size_t> read =
          data_.Read(cell, chunk.cap, r * unit + a, std::span(at, bytes), /*retry=*/false,
                     /*direct=*/false, &version);
      if (!read.ok() || *read != bytes || version != stripe.version) {
        if (!read.ok() && rpc::IsTransportError(read.status().code()))
          data_.Unreachable(place.node);
        // An expired read right fails every cell alike: the caller renews it.
        if (read.status().code() == StatusCode::kDataCapabilityExpired) return read.status();
        if (why.empty()) {
          why = !read.ok()
                    ? read.status().ToString()
                    : fmt::format("cell {} answered {} bytes at version {}", i, *read, version);
        }
        failed[i] = true;
        return false;
      }
    }
    std::memset(at + bytes, 0, w - bytes);
    return true;
  };
  // Row r (n bytes) decoded whole from the first K cells that answer (data
  // cells first), and kept for the next reads of it.
  auto decode_row = [&](uint64_t r, uint64_t n) -> Result<std::shared_ptr<const AlignedBuffer>> {
    std::vector<bool> have(cells, false);
    uint32_t got = 0;
    for (uint32_t i : order) {
      if (got == k) break;
      if (failed[i]) continue;
      ASSIGN_OR_RETURN(bool ok, read_cell(i, r, n, 0, unit));
      if (ok) {
        have[i] = true;
        ++got;
      }
    }
    if (got < k) {
      return Status(
          StatusCode::kIoError,
          fmt::format("chunk {}: only {} of the {} erasure-coded cells needed answered ({})",
                      chunk_id, got, k, why.empty() ? "no other cell" : why));
    }
    std::vector<uint32_t> missing;
    for (uint32_t i = 0; i < cells; ++i) {
      if (!have[i]) missing.push_back(i);
    }
    std::shared_ptr<AlignedBuffer> row = rows_.Allocate(n);
    RETURN_IF_ERROR(ec::DecodeRow(code, unit, std::span(cell_buf.data(), cells * unit), missing,
                                  std::span(row->data(), n)));
    stats_.degraded_rows++;
    return std::shared_ptr<const AlignedBuffer>(std::move(row));
  };
  uint64_t done = 0;
  for (uint64_t r = offset / row_len; done < len; ++r) {
    const uint64_t n = ec::RowBytes(stripe.length, k, unit, r);
    // The row's bytes [lo, hi) are wanted.
    const uint64_t lo = offset + done - r * row_len;
    const uint64_t hi = std::min(n, lo + (len - done));
    // A row decoded a moment ago: a sequential reader's previous request
    // decoded the row this one continues.
    std::shared_ptr<const AlignedBuffer> row = rows_.Find(chunk_id, stripe.version, r);
    // While every data cell of the row answers, the wanted columns of the
    // wanted data cells are read as they are: nothing to decode.
    bool lost = false;
    for (uint32_t j = 0; j < k && !row; ++j)
      lost = lost || failed[j] || data_.Suspect(stripe.cells[j].node);
    if (!row && !lost) {
      const uint32_t first = static_cast<uint32_t>(lo / unit),
                     last = static_cast<uint32_t>((hi - 1) / unit);
      const uint64_t a = first == last ? lo % unit : 0;
      const uint64_t w = first == last ? hi - first * unit - a : unit;
      bool whole = true;
      for (uint32_t j = first; j <= last && whole; ++j) {
        ASSIGN_OR_RETURN(bool ok, read_cell(j, r, n, a, w));
        whole = ok;
      }
      if (whole) {
        for (uint32_t j = first; j <= last; ++j) {
          // Unit j of the row holds the row's bytes [j·unit, (j+1)·unit).
          const uint64_t from = std::max<uint64_t>(lo, j * unit),
                         to = std::min<uint64_t>(hi, (j + 1) * unit);
          std::memcpy(buf.data() + done, cell_buf.data() + j * unit + (from - j * unit - a),
                      to - from);
          done += to - from;
        }
        if (n < row_len) break;  // the chunk's last row
        continue;
      }
    }
    // A data cell of the row is lost: the whole row is decoded once, and
    // the reads that follow (or wait for it meanwhile) take it from memory.
    if (!row) row = rows_.FindOrClaim(chunk_id, stripe.version, r);
    if (!row) {
      auto decoded = decode_row(r, n);
      if (!decoded.ok()) {
        rows_.Release(chunk_id, stripe.version, r);
        return decoded.status();
      }
      row = std::move(decoded).value();
      rows_.Put(chunk_id, stripe.version, r, row);
    } else {
      stats_.degraded_row_hits++;
    }
    std::memcpy(buf.data() + done, row->data() + lo, hi - lo);
    done += hi - lo;
    if (n < row_len) break;  // the chunk's last row
  }
  stats_.degraded_reads++;
  stats_.remote_reads++;
  stats_.remote_read_bytes += done;
  return static_cast<size_t>(done);
}

}  // namespace t0fs::client
