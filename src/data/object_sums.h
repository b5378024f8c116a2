// Block checksums of a chunk's copy in the object tier (protect=object).
//
// Next to each chunk object `<key>` the uploading node puts `<key>.crc`:
// the same layout as a chunk's .crc file (docs/formats/chunk.md): a 64-byte
// header (magic "T0CK", format 1, block size 4096, the chunk id and the
// version) and one u32 per 4 KiB block, computed from the very bytes sent.
// Recalls and reads through the tier check what they GET against it, so a
// damaged or replaced object fails as a checksum error (EIO) instead of
// handing out wrong bytes, or being copied back into a chunk file that
// would then carry fresh, matching checksums. Objects uploaded without one
// are read unverified (and logged).
//
// Thread safety: ObjectSums is a value; the functions are pure.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/chunk_file.h"
#include "common/ids.h"
#include "common/object_key.h"
#include "common/status.h"
#include "s3/s3.h"

namespace t0fs::data {

// Checksums of an object built from its bytes, fed in order.
class ObjectSums {
 public:
  // Adds the object's next bytes: pieces are whole blocks except the last.
  void Add(std::span<const std::byte> bytes);
  // The `.crc` object: header + one checksum per block added.
  std::string Encode(ChunkId chunk, uint64_t version) const;

 private:
  std::vector<uint32_t> sums_;
};

// Byte offset in the `.crc` object of block `block`'s checksum.
uint64_t SumOffset(uint64_t block);
inline constexpr uint64_t kSumsHeaderSize = kChunkHeaderSize;

// Checks the header of a `.crc` object against the chunk and version it
// must describe.
Status CheckSumsHeader(std::string_view header, ChunkId chunk, uint64_t version);

// Checks `bytes` (the object's bytes from block `first_block` on: whole
// blocks, the last one may be short at the object's end) against
// `sums` — the little-endian u32 checksums of blocks first_block,
// first_block + 1, ... as stored; blocks past its end must be all zero.
// kDataChecksum naming the first bad block's offset otherwise.
Status VerifyObjectBlocks(uint64_t first_block, std::span<const std::byte> bytes,
                          std::string_view sums, std::string_view what);

// The `.crc` object of `key` (the object of `chunk` at `version`), its
// header checked; nullopt when the object has none (uploaded before
// checksums were: logged, once per process).
Result<std::optional<std::string>> FetchObjectSums(s3::Client& s3, std::string_view key,
                                                   ChunkId chunk, uint64_t version);
// The checksums of blocks `first_block` on, within a whole `.crc` object.
std::string_view SumsFrom(std::string_view sums, uint64_t first_block);
// Reads out.size() bytes at `offset` of the object `key` (of `chunk` at
// `version`) with one ranged GET of the whole blocks around them and one of
// their checksums, and checks them; returns the bytes read (short at the
// object's end). An object without checksums is read unverified.
Result<size_t> ReadObjectVerified(s3::Client& s3, std::string_view key, ChunkId chunk,
                                  uint64_t version, uint64_t offset, std::span<std::byte> out);

}  // namespace t0fs::data
