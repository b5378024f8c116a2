// Copying a metadata store from one engine to another, then proving the copy
// (`t0fs meta migrate --from URL --to URL`, issue 14): every row of every
// kind, read by the engine's scans, written into one durable transaction of
// the target, the counters raised past every id the source ever handed out,
// the cluster's named values (cluster id, creation time, capability key)
// carried over; then both stores are scanned again and compared kind by kind
// (row count and a 64-bit digest of the rows in the engine order).
//
// The target must be new: nothing but the root inode a freshly opened store
// makes (which the source's root replaces), no entries, no chunks. The
// source must not change meanwhile (stop its meta servers): the copy reads
// one snapshot, and the verification tells when the source moved on.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "meta/store/engine.h"

namespace t0fs::meta {

// The named values (GetProperty keys) a store keeps, copied as they are.
inline constexpr const char* kCopiedProperties[] = {"cluster_id", "created", "capability_key"};

struct CopyOptions {
  // Called with the number of rows copied so far: every `progress_every`
  // rows, and once when the copy is written.
  std::function<void(uint64_t rows)> progress;
  uint64_t progress_every = 10000;
};

// Rows of one kind, as copied or as found by a verification.
struct KindCount {
  std::string kind;  // "inodes", "dentries", ...
  uint64_t rows = 0;
};

struct CopyReport {
  uint64_t rows = 0;  // every row written to the target
  std::vector<KindCount> kinds;
};

// Copies `from` into the new store `to` and verifies it (VerifyCopy).
// kExists: the target is not new (nothing written). kInvalidArgument: both
// are the same engine. kCorruption: written, but the verification found a
// difference (the message names the row kinds). Other errors: the engines'.
Result<CopyReport> CopyStore(Engine& from, Engine& to, const CopyOptions& options = {});

// Scans both stores and compares every row kind; kCorruption names each
// kind that differs, with the row counts of both sides.
Status VerifyCopy(Engine& from, Engine& to);

}  // namespace t0fs::meta
