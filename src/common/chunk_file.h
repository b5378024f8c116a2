// ChunkFile: one replica of a chunk on a volume, as two files:
//
//   <id>.dat  the chunk's bytes, exactly (offset in file = offset in chunk),
//             so a local client or the kernel (FUSE passthrough) can use it
//             as the file's data directly;
//   <id>.crc  a 64-byte header (magic, format, block size, chunk id, version)
//             then one 32-bit checksum per 4 KiB block.
//
// Block checksum: crc32c over the block's 4096 bytes, where bytes beyond the
// end of the .dat file count as zeros, XORed with crc32c(4096 zero bytes).
// So an all-zero block has checksum 0 and a hole in either file is
// consistent without special cases. (docs/formats/chunk.md has the grammar.)
//
// The data service and clients on the same host (the local bypass) both use
// this class on their own descriptors of the same files. Writers lock the
// checksum range they update (an in-process mutex plus an OFD byte-range lock
// on the .crc file, so two processes serialise too); readers do not lock but
// re-check a mismatching block under the lock before reporting corruption (a
// concurrent writer may have been between its data and checksum writes).
//
// Thread safety: all methods are safe for concurrent use.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <span>
#include <string>
#include <string_view>

#include "common/fd.h"
#include "common/ids.h"
#include "common/status.h"

namespace t0fs {

inline constexpr uint32_t kChunkBlockSize = 4096;
inline constexpr uint64_t kChunkHeaderSize = 64;
inline constexpr uint32_t kChunkMagic = 0x4b433054;  // "T0CK"
inline constexpr uint32_t kChunkFormat = 1;

// The header of a chunk's checksums: its .crc file's, and that of an
// object's `<key>.crc` in the object tier (data/object_sums.h). Its
// kChunkHeaderSize bytes, little-endian: magic, format and block size (u32
// at 0, 4, 8), chunk id (u64 at 16), version (u64 at kChunkVersionOffset),
// zeros; the u32 CRC32C of each block follows.
inline constexpr uint64_t kChunkVersionOffset = 24;
struct ChunkCrcHeader {
  ChunkId chunk;
  uint64_t version = 0;
};
void EncodeChunkCrcHeader(const ChunkCrcHeader& header, std::span<std::byte, kChunkHeaderSize> out);
// kCorruption when `in` is shorter than a header or not one of this format.
Result<ChunkCrcHeader> DecodeChunkCrcHeader(std::span<const std::byte> in);

class ChunkFile {
 public:
  // Takes ownership of the descriptors. `direct`: the data descriptor was
  // opened with O_DIRECT (transfers then go through aligned whole blocks).
  ChunkFile(ChunkId chunk, UniqueFd data, UniqueFd crc, bool direct);
  ChunkFile(const ChunkFile&) = delete;
  ChunkFile& operator=(const ChunkFile&) = delete;

  // Writes the header of a new chunk if the .crc file has none yet (safe
  // against a concurrent creator); validates an existing one.
  Status InitOrValidate();

  // Reads up to buf.size() bytes at `offset`; returns the bytes available
  // before the end of the data file (short at its end). Every covered block
  // is verified: kDataChecksum on a mismatch (the message names the block).
  Result<size_t> Read(uint64_t offset, std::span<std::byte> buf);
  // A read whose bytes someone else verifies (a remote client, after the
  // node sent them with sendfile): the bytes the data file holds in
  // [offset, offset + len) (short at its end), and, appended to `crcs`, the
  // stored checksum of every block they touch (VerifyBlocks' form).
  // `offset` must be block-aligned. Nothing is read from the data file, so
  // nothing is verified here; data and checksums are not read atomically
  // either (a concurrent writer): a mismatch means "read it verified".
  Result<size_t> ChecksumsFor(uint64_t offset, size_t len, std::string* crcs);
  // Writes `data` at `offset` and updates the covered checksums; records
  // `version` in the header if it is higher than the stored one.
  Status Write(uint64_t offset, std::span<const std::byte> data, uint64_t version);
  // Sets the data length; the partial last block's checksum is recomputed.
  Status Truncate(uint64_t length, uint64_t version);
  // fdatasync of both files.
  Status Sync();
  // Records `version` in the header if it is higher than the stored one.
  Status SetVersion(uint64_t version) { return RecordVersion(version); }

  // ---- data written behind the checksums (FUSE passthrough) ----
  // A local client that hands the data file to the kernel for writing marks
  // the checksums pending first: until they are rebuilt, a block that does
  // not match its checksum is returned as it is (unverified) instead of
  // failing, on every path. The writer holds HoldWriter() for as long as the
  // kernel may write, so that RebuildIfAbandoned (the scrubber) can tell a
  // live writer from one that died. docs/formats/chunk.md.
  Status MarkChecksumsPending();
  Result<bool> ChecksumsPending();
  // Recomputes every block's checksum from the data file; clears the pending
  // mark if `clear_pending`.
  Status RebuildChecksums(bool clear_pending);
  Status ClearChecksumsPending();
  // A shared OFD lock on the header's writer byte (needs a read-write .crc
  // descriptor); released by ReleaseWriter or when the descriptor closes.
  Status HoldWriter();
  void ReleaseWriter();
  // Whether this object holds the writer byte (HoldWriter, not released).
  bool holds_writer() const { return holds_writer_.load(); }
  // Whether some descriptor other than this one holds the writer byte.
  Result<bool> WriterAlive();
  // The data node holds a shared OFD lock on the keeper byte of the unnamed
  // files it made while it keeps them (HoldKeeper, on its own descriptor):
  // a client with prepared files asks KeeperAlive before using them — a
  // data node that restarted forgot them, and another writer of that chunk
  // would make other files.
  Status HoldKeeper();
  Result<bool> KeeperAlive();
  // Pending and no writer holds the byte: rebuilds, clears, returns true.
  Result<bool> RebuildIfAbandoned();
  // Re-reads every block and reports the first mismatch (scrubbing, fsck).
  Status VerifyAll();

  Result<uint64_t> Length() const;
  // The highest version recorded (cached; refreshed by ReadHeader()).
  uint64_t version() const { return version_.load(); }
  Status ReadHeader();
  ChunkId chunk() const { return chunk_; }
  // A local client's files of a new chunk that have no names yet (a lazy
  // OpenLocal): named through the data service before a version is committed.
  bool unnamed() const { return unnamed_.load(); }
  void set_unnamed(bool unnamed) { unnamed_.store(unnamed); }
  int data_fd() const { return data_.get(); }
  int crc_fd() const { return crc_.get(); }

 private:
  // Whether another open file description holds a lock on the checksum
  // file's `byte` (WriterAlive, KeeperAlive).
  Result<bool> HeldElsewhere(uint64_t byte);
  // Reads blocks [first, first+count) of checksums into out.
  Status ReadCrcs(uint64_t first_block, size_t count, uint32_t* out);
  // Verifies data `bytes` (n valid bytes, the rest of each block counts as
  // zeros) starting at block `first_block` against stored checksums. Returns
  // the index of the first bad block relative to first_block, or -1.
  Result<int64_t> FindBadBlock(const std::byte* bytes, size_t n, uint64_t first_block, size_t blocks);
  Result<size_t> ReadUnverified(uint64_t offset, std::byte* buf, size_t len);
  // Reads without leaving pages cached that were not (the checksum rebuild).
  Result<size_t> ReadSparingCache(uint64_t offset, std::byte* buf, size_t len);
  Status WriteLocked(uint64_t offset, std::span<const std::byte> data);
  Status RecordVersion(uint64_t version);
  // Serialises writers in this process and (OFD lock) across processes.
  class RangeLock;

  ChunkId chunk_;
  UniqueFd data_;
  UniqueFd crc_;
  bool direct_;
  std::atomic<uint64_t> version_{0};
  std::atomic<bool> unnamed_{false};
  std::atomic<bool> holds_writer_{false};
  std::mutex header_mu_;  // guards header updates in this process; taken before the header OFD lock
};

// Path of a chunk's files inside a volume directory: chunks/<xx>/<id16>.{dat,crc}.
std::string ChunkDataPath(const std::string& volume_dir, ChunkId chunk);
std::string ChunkCrcPath(const std::string& volume_dir, ChunkId chunk);

// crc32c of a 4 KiB block with `n` valid bytes (rest zero), in the stored form.
uint32_t BlockChecksum(const std::byte* block, size_t n);

// Checks `bytes`, read from a block-aligned offset (bytes past their end
// count as zeros), against `crcs`: one u32 little-endian stored checksum per
// block they touch (ChunkFile::ChecksumsFor). Returns the index of the first
// bad block, or -1; a `crcs` of another length than the blocks touched is
// bad at block 0.
int64_t VerifyBlocks(std::span<const std::byte> bytes, std::string_view crcs);

}  // namespace t0fs
