// The erasure-coding half of Copier (copier.h): encodes, rebuilds from
// cells and parity checks.
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <future>

#include "common/buffer.h"
#include "common/logging.h"
#include "data/copier.h"
#include "ec/cells.h"
#include "ec/rows.h"
#include "ec/stripe_layout.h"
#include "rpc/proto/data.pb.h"

namespace t0fs::data {

Result<ec::ErasureCode> Copier::CodeOf(const pb::NodeCommand& cmd) {
  const uint64_t unit = cmd.ec().unit();
  if (unit == 0 || unit % ec::kUnitAlign != 0 || unit > kPiece) {
    return Status(StatusCode::kInvalidArgument,
                  fmt::format("erasure-code unit {} is not a multiple of {} up to {}", unit,
                              ec::kUnitAlign, kPiece));
  }
  ASSIGN_OR_RETURN(ec::ErasureCode code, ec::ErasureCode::Make(cmd.ec().k(), cmd.ec().m()));
  for (const pb::EcCell& cell : cmd.ec_cells()) {
    if (cell.cell() >= code.k() + code.m()) {
      return Status(StatusCode::kInvalidArgument,
                    fmt::format("cell {} of ec:{}+{}", cell.cell(), code.k(), code.m()));
    }
  }
  return code;
}

pb::CopyResult Copier::Encode(const pb::NodeCommand& cmd) {
  pb::CopyResult result = ResultOf(cmd);
  const ChunkId chunk(cmd.chunk());
  auto fail = [&](const Status& st) {
    result.set_ok(false);
    result.set_error(st.ToString());
    LOG_WARN("encode of chunk {} into erasure-coded cells: {}", chunk, st.ToString());
    return result;
  };
  auto code = CodeOf(cmd);
  if (!code.ok()) return fail(code.status());
  const uint32_t k = code->k(), cells = k + code->m();
  const uint64_t unit = cmd.ec().unit();
  auto stat = store_.Stat(VolumeId(cmd.volume()), chunk);
  if (!stat.ok()) return fail(stat.status());
  if (stat->version != cmd.version()) {
    return fail(Status(StatusCode::kStale, fmt::format("the replica is at version {}, not {}",
                                                       stat->version, cmd.version())));
  }
  const uint64_t length = stat->length;
  // Aims a data RPC at a cell: the chunk file of its cell id on its node.
  auto to_cell = [&](const pb::EcCell& cell, auto& req) {
    req.set_chunk(ec::CellChunkId(chunk, cell.cell()).value());
    req.set_volume(cell.volume());
    *req.mutable_cap() = cell.cap();
  };
  auto send = [&](const pb::EcCell& cell, uint64_t offset, std::span<const std::byte> piece) {
    pb::ChunkWriteReq req;
    to_cell(cell, req);
    req.set_offset(offset);
    req.set_version(cmd.version());
    return PeerChannel(cell.address())
        .Call<rpc::Method::kChunkWrite>(req, nullptr, {.payload = piece})
        .WithContext(fmt::format("cell {} to node {}", cell.cell(), cell.node()));
  };
  // Row r's pieces go to their nodes at once, one sender per cell, while
  // row r + 1 is read and encoded into the other buffer.
  AlignedBuffer row(k * unit);
  AlignedBuffer bufs[2] = {AlignedBuffer(cells * unit), AlignedBuffer(cells * unit)};
  std::vector<std::future<Status>> sending;
  auto sent = [&] {
    Status first;
    for (std::future<Status>& f : sending) {
      Status st = f.get();
      if (first.ok()) first = std::move(st);
    }
    sending.clear();
    return first;
  };
  for (uint64_t r = 0; r < ec::Rows(length, k, unit); ++r) {
    const uint64_t n = ec::RowBytes(length, k, unit, r);
    AlignedBuffer& buf = bufs[r % 2];
    Status st = ReadLocal(cmd, r * k * unit, std::span(row.data(), n));
    if (st.ok()) st = ec::EncodeRow(*code, unit, std::span(row.data(), n), buf.span());
    Status previous = sent();
    if (!st.ok() || !previous.ok()) return fail(st.ok() ? previous : st);
    for (const pb::EcCell& cell : cmd.ec_cells()) {
      const uint64_t bytes = ec::CellRowBytes(n, k, unit, cell.cell());
      if (bytes == 0) continue;
      sending.push_back(
          std::async(std::launch::async, send, std::cref(cell), r * unit,
                     std::span<const std::byte>(buf.data() + cell.cell() * unit, bytes)));
    }
  }
  if (Status last = sent(); !last.ok()) return fail(last);
  // Each cell's exact length (a cell left longer by an older version is cut;
  // a cell with no bytes gets its file), then to the drive.
  auto layout = ec::StripeLayout::Make(k, unit);
  if (!layout.ok()) return fail(layout.status());
  for (const pb::EcCell& cell : cmd.ec_cells()) {
    pb::ChunkTruncateReq cut;
    to_cell(cell, cut);
    cut.set_length(cell.cell() < k ? layout->DataCellLength(cell.cell(), length)
                                   : layout->ParityCellLength(length));
    cut.set_version(cmd.version());
    pb::ChunkSyncReq sync;
    to_cell(cell, sync);
    pb::ChunkEmptyRsp rsp;
    rpc::Channel& peer = PeerChannel(cell.address());
    Status st = peer.Call<rpc::Method::kChunkTruncate>(cut, &rsp);
    if (st.ok()) st = peer.Call<rpc::Method::kChunkSync>(sync, &rsp);
    if (!st.ok())
      return fail(st.WithContext(fmt::format("cell {} on node {}", cell.cell(), cell.node())));
  }
  result.set_ok(true);
  result.set_bytes(length);
  LOG_DEBUG("encoded chunk {} ({} bytes, version {}) into {} cell(s)", chunk, length, cmd.version(),
            cmd.ec_cells_size());
  return result;
}

Status Copier::RebuildFromCells(const pb::NodeCommand& cmd, ChunkFile& out) {
  ASSIGN_OR_RETURN(ec::ErasureCode code, CodeOf(cmd));
  const uint32_t k = code.k(), cells = k + code.m();
  const uint64_t unit = cmd.ec().unit(), length = cmd.ec().length();
  const ChunkId chunk(cmd.chunk());
  std::vector<const pb::EcCell*> source(cells, nullptr);  // by cell; null: not offered or failed
  for (const pb::EcCell& cell : cmd.ec_cells()) source[cell.cell()] = &cell;
  AlignedBuffer row(k * unit), buf(cells * unit);
  for (uint64_t r = 0; r < ec::Rows(length, k, unit); ++r) {
    const uint64_t n = ec::RowBytes(length, k, unit, r);
    // The first k cells that answer (data cells first: then nothing is
    // decoded); a cell that fails is not asked again.
    std::vector<uint32_t> missing;
    uint32_t have = 0;
    for (uint32_t i = 0; i < cells; ++i) {
      std::byte* at = buf.data() + i * unit;
      const uint64_t bytes = ec::CellRowBytes(n, k, unit, i);
      if (have == k || source[i] == nullptr) {
        missing.push_back(i);
        continue;
      }
      Status st;
      if (bytes > 0) {
        auto got = ReadCell(cmd, *source[i], r * unit, std::span(at, bytes));
        st = got.ok() && *got != bytes
                 ? Status(StatusCode::kIoError,
                          fmt::format("{} bytes where {} were due", *got, bytes))
                 : got.status();
      }
      if (!st.ok()) {
        LOG_WARN("rebuild of chunk {}: cell {} on node {}: {}; trying another cell", chunk, i,
                 source[i]->node(), st.ToString());
        source[i] = nullptr;
        missing.push_back(i);
        continue;
      }
      std::memset(at + bytes, 0, unit - bytes);
      ++have;
    }
    if (have < k) {
      return Status(StatusCode::kIoError,
                    fmt::format("only {} of the {} cells needed could be read", have, k));
    }
    RETURN_IF_ERROR(ec::DecodeRow(code, unit, buf.span(), missing, std::span(row.data(), n)));
    RETURN_IF_ERROR(out.Write(r * k * unit, std::span(row.data(), n), cmd.version()));
    bytes_ += n;
    Throttle(n);
  }
  return Status::Ok();
}

Result<size_t> Copier::ReadCell(const pb::NodeCommand& cmd, const pb::EcCell& cell, uint64_t offset,
                                std::span<std::byte> out) {
  pb::ChunkReadReq req;
  req.set_chunk(ec::CellChunkId(ChunkId(cmd.chunk()), cell.cell()).value());
  req.set_volume(cell.volume());
  req.set_offset(offset);
  req.set_length(static_cast<uint32_t>(out.size()));
  req.set_min_version(cmd.version());
  *req.mutable_cap() = cell.cap();
  pb::ChunkReadRsp rsp;
  size_t got = 0;
  RETURN_IF_ERROR(PeerChannel(cell.address())
                      .Call<rpc::Method::kChunkRead>(
                          req, &rsp, {.reply_payload = out, .reply_payload_len = &got}));
  if (rsp.version() != cmd.version()) {
    return Status(StatusCode::kStale, fmt::format("it is at version {}", rsp.version()));
  }
  return got;
}

pb::CopyResult Copier::Verify(const pb::NodeCommand& cmd) {
  pb::CopyResult result = ResultOf(cmd);
  const ChunkId chunk(cmd.chunk());
  auto fail = [&](const Status& st) {
    result.set_ok(false);
    result.set_error(st.ToString());
    LOG_WARN("parity check of chunk {}: {}", chunk, st.ToString());
    return result;
  };
  auto code = CodeOf(cmd);
  if (!code.ok()) return fail(code.status());
  const uint32_t k = code->k(), cells = k + code->m();
  const uint64_t unit = cmd.ec().unit();
  auto layout = ec::StripeLayout::Make(k, unit);
  if (!layout.ok()) return fail(layout.status());
  // The chunk's data: its replica here, or (from_cells: it has none) its
  // data cells, which are then the reference the parity cells must match.
  const bool from_cells = cmd.from_cells();
  if (!from_cells) {
    auto stat = store_.Stat(VolumeId(cmd.volume()), chunk);
    if (!stat.ok()) return fail(stat.status());
    if (stat->version != cmd.version() || stat->length != cmd.ec().length()) {
      return fail(
          Status(StatusCode::kStale,
                 fmt::format("the replica is at version {} with {} bytes, not {} with {}",
                             stat->version, stat->length, cmd.version(), cmd.ec().length())));
    }
  }
  const uint64_t length = cmd.ec().length();
  // Each listed cell: still to compare, bad or unread. A cell that is gone,
  // older or newer, or damaged on its node is bad; one that does not answer
  // is neither (its node may be down for a while).
  enum class Seen { kSame, kBad, kUnread };
  std::vector<const pb::EcCell*> listed;
  for (const pb::EcCell& cell : cmd.ec_cells()) listed.push_back(&cell);
  std::vector<Seen> seen(listed.size(), Seen::kSame);
  auto note = [&](size_t j, bool bad, const std::string& why) {
    seen[j] = bad ? Seen::kBad : Seen::kUnread;
    LOG_WARN("parity check of chunk {} version {}: cell {} on node {} {}: {}", chunk, cmd.version(),
             listed[j]->cell(), listed[j]->node(), bad ? "is bad" : "could not be read", why);
  };
  auto failed = [&](size_t j, const Status& st) {
    const StatusCode code = st.code();
    note(j,
         code == StatusCode::kDataNoChunk || code == StatusCode::kStale ||
             code == StatusCode::kDataChecksum,
         st.ToString());
  };
  AlignedBuffer row(k * unit), buf(cells * unit), theirs(unit);
  const auto row_data = [&](uint32_t i) { return row.data() + i * unit; };
  std::vector<size_t> data_cell(k, listed.size());  // from_cells: cell i's entry in `listed`
  for (size_t j = 0; j < listed.size(); ++j) {
    if (listed[j]->cell() < k) data_cell[listed[j]->cell()] = j;
  }
  if (from_cells &&
      std::find(data_cell.begin(), data_cell.end(), listed.size()) != data_cell.end()) {
    return fail(Status(StatusCode::kInvalidArgument,
                       "a check from the cells needs every data cell listed"));
  }
  // Row r's data from the data cells; false when one could not be read
  // (noted: the row, and the check, end there).
  const auto read_row_from_cells = [&](uint64_t r, uint64_t n) {
    for (uint32_t i = 0; i < k; ++i) {
      const uint64_t bytes = ec::CellRowBytes(n, k, unit, i);
      if (bytes == 0) continue;
      const size_t j = data_cell[i];
      auto got = ReadCell(cmd, *listed[j], r * unit, std::span(row_data(i), bytes));
      if (!got.ok()) {
        failed(j, got.status());
        return false;
      }
      if (*got != bytes) {
        note(j, true, fmt::format("{} bytes at {} where {} were due", *got, r * unit, bytes));
        return false;
      }
    }
    return true;
  };
  for (uint64_t r = 0; r < ec::Rows(length, k, unit); ++r) {
    const uint64_t n = ec::RowBytes(length, k, unit, r);
    if (from_cells && !read_row_from_cells(r, n)) break;
    Status st = from_cells ? Status::Ok() : ReadLocal(cmd, r * k * unit, std::span(row.data(), n));
    if (st.ok()) st = ec::EncodeRow(*code, unit, std::span(row.data(), n), buf.span());
    if (!st.ok()) return fail(st);
    for (size_t j = 0; j < listed.size(); ++j) {
      const uint32_t i = listed[j]->cell();
      const uint64_t bytes = ec::CellRowBytes(n, k, unit, i);
      if (seen[j] != Seen::kSame || bytes == 0) continue;
      if (from_cells && i < k) continue;  // read above: the reference
      auto got = ReadCell(cmd, *listed[j], r * unit, std::span(theirs.data(), bytes));
      if (!got.ok()) {
        failed(j, got.status());
      } else if (*got != bytes) {
        note(j, true, fmt::format("{} bytes at {} where {} were due", *got, r * unit, bytes));
      } else if (std::memcmp(theirs.data(), buf.data() + i * unit, bytes) != 0) {
        note(j, true,
             fmt::format("its bytes at {} differ from the code of the {}", r * unit,
                         from_cells ? "data cells'" : "replica's"));
      }
      bytes_ += bytes;
      Throttle(bytes);
    }
  }
  // Nothing past each cell's length (a cell of no bytes must exist too).
  for (size_t j = 0; j < listed.size(); ++j) {
    if (seen[j] != Seen::kSame) continue;
    const uint32_t i = listed[j]->cell();
    const uint64_t cell_length =
        i < k ? layout->DataCellLength(i, length) : layout->ParityCellLength(length);
    auto got = ReadCell(cmd, *listed[j], cell_length, std::span(theirs.data(), 1));
    if (!got.ok()) {
      failed(j, got.status());
    } else if (*got != 0) {
      note(j, true, fmt::format("it is longer than its {} bytes", cell_length));
    }
  }
  for (size_t j = 0; j < listed.size(); ++j) {
    if (seen[j] == Seen::kBad) result.add_bad_cells(listed[j]->cell());
    if (seen[j] == Seen::kUnread) result.add_unread_cells(listed[j]->cell());
  }
  result.set_ok(true);
  result.set_bytes(length);
  LOG_DEBUG("parity check of chunk {} version {}: {} cell(s), {} bad, {} unread", chunk,
            cmd.version(), listed.size(), result.bad_cells_size(), result.unread_cells_size());
  return result;
}

}  // namespace t0fs::data
