#include "data/object_sums.h"

#include <fmt/format.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <memory>

#include "common/chunk_file.h"
#include "common/logging.h"

namespace t0fs::data {
namespace {

void PutU32(std::string& out, size_t at, uint32_t v) {
  for (int i = 0; i < 4; ++i) out[at + i] = static_cast<char>((v >> (8 * i)) & 0xff);
}
uint64_t GetLe(std::string_view in, size_t at, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i)
    v |= static_cast<uint64_t>(static_cast<uint8_t>(in[at + i])) << (8 * i);
  return v;
}

}  // namespace

void ObjectSums::Add(std::span<const std::byte> bytes) {
  for (size_t at = 0; at < bytes.size(); at += kChunkBlockSize) {
    const size_t n = std::min<size_t>(kChunkBlockSize, bytes.size() - at);
    sums_.push_back(BlockChecksum(bytes.data() + at, n));
  }
}

std::string ObjectSums::Encode(ChunkId chunk, uint64_t version) const {
  std::string out(kSumsHeaderSize + 4 * sums_.size(), '\0');
  EncodeChunkCrcHeader(ChunkCrcHeader{chunk, version},
                       std::span<std::byte, kChunkHeaderSize>(
                           reinterpret_cast<std::byte*>(out.data()), kChunkHeaderSize));
  for (size_t i = 0; i < sums_.size(); ++i) PutU32(out, SumOffset(i), sums_[i]);
  return out;
}

uint64_t SumOffset(uint64_t block) {
  return kSumsHeaderSize + 4 * block;
}

namespace {
// An object without checksums is said once per process (then at most once
// an hour), not at every read.
void SayUnverified(std::string_view key) {
  static std::atomic<int64_t> next_ms{0};
  const int64_t now = std::chrono::duration_cast<std::chrono::milliseconds>(
                          std::chrono::steady_clock::now().time_since_epoch())
                          .count();
  int64_t due = next_ms.load();
  if (now < due || !next_ms.compare_exchange_strong(due, now + 3600 * 1000)) return;
  LOG_WARN(
      "object tier: {} has no checksums object (uploaded before t0fs wrote them): read unverified",
      key);
}
}  // namespace

Result<std::optional<std::string>> FetchObjectSums(s3::Client& s3, std::string_view key,
                                                   ChunkId chunk, uint64_t version) {
  auto sums = s3.GetObject(ObjectSumsKey(key));
  if (sums.status().code() == StatusCode::kNotFound) {
    SayUnverified(key);
    return std::optional<std::string>();
  }
  if (!sums.ok()) return sums.status().WithContext("checksums of the object");
  Status header = CheckSumsHeader(*sums, chunk, version);
  if (!header.ok())
    return Status(StatusCode::kDataChecksum,
                  fmt::format("{}: {}", ObjectSumsKey(key), header.message()));
  return std::optional<std::string>(std::move(sums).value());
}

std::string_view SumsFrom(std::string_view sums, uint64_t first_block) {
  const uint64_t at = SumOffset(first_block);
  return at >= sums.size() ? std::string_view() : sums.substr(at);
}

Result<size_t> ReadObjectVerified(s3::Client& s3, std::string_view key, ChunkId chunk,
                                  uint64_t version, uint64_t offset, std::span<std::byte> out) {
  const uint64_t first = offset / kChunkBlockSize;
  const uint64_t start = first * kChunkBlockSize;
  const uint64_t end =
      (offset + out.size() + kChunkBlockSize - 1) / kChunkBlockSize * kChunkBlockSize;
  // Not zeroed: the GET fills what is used.
  std::unique_ptr<std::byte[]> blocks(new std::byte[end - start]);
  ASSIGN_OR_RETURN(size_t got, s3.GetObject(key, start, std::span(blocks.get(), end - start)));
  const uint64_t skip = offset - start;
  if (got <= skip) return size_t{0};  // at or past the object's end
  std::string sums(4 * ((got + kChunkBlockSize - 1) / kChunkBlockSize), '\0');
  auto n = s3.GetObject(ObjectSumsKey(key), SumOffset(first),
                        std::span(reinterpret_cast<std::byte*>(sums.data()), sums.size()));
  if (n.status().code() == StatusCode::kNotFound) {
    SayUnverified(key);
  } else if (!n.ok()) {
    return n.status().WithContext("checksums of the object");
  } else {
    sums.resize(*n);
    RETURN_IF_ERROR(VerifyObjectBlocks(
        first, std::span<const std::byte>(blocks.get(), got), sums,
        fmt::format("the object tier's copy of chunk {} version {}", chunk, version)));
  }
  const size_t len = std::min<size_t>(got - skip, out.size());
  std::memcpy(out.data(), blocks.get() + skip, len);
  return len;
}

Status CheckSumsHeader(std::string_view header, ChunkId chunk, uint64_t version) {
  auto decoded = DecodeChunkCrcHeader(
      std::span<const std::byte>(reinterpret_cast<const std::byte*>(header.data()), header.size()));
  if (!decoded.ok()) {
    return Status(StatusCode::kCorruption,
                  fmt::format("not a t0fs checksum object ({})", decoded.status().message()));
  }
  if (decoded->chunk != chunk || decoded->version != version) {
    return Status(StatusCode::kCorruption,
                  fmt::format("checksums of chunk {} version {}, not of chunk {} version {}",
                              decoded->chunk, decoded->version, chunk, version));
  }
  return Status::Ok();
}

Status VerifyObjectBlocks(uint64_t first_block, std::span<const std::byte> bytes,
                          std::string_view sums, std::string_view what) {
  for (size_t i = 0; i * kChunkBlockSize < bytes.size(); ++i) {
    const size_t at = i * kChunkBlockSize;
    const size_t n = std::min<size_t>(kChunkBlockSize, bytes.size() - at);
    const uint32_t want =
        4 * i + 4 <= sums.size() ? static_cast<uint32_t>(GetLe(sums, 4 * i, 4)) : 0;
    if (BlockChecksum(bytes.data() + at, n) != want) {
      return Status(StatusCode::kDataChecksum,
                    fmt::format("{}: block at offset {} does not match its checksum", what,
                                (first_block + i) * kChunkBlockSize));
    }
  }
  return Status::Ok();
}

}  // namespace t0fs::data
