// The object tier's manifest: which files the bucket holds, by path, so that
// an operator can find and read them back with ordinary S3 tools (aws,
// s3cmd) when the cluster's metadata is not there to ask.
//
// Chunk objects are named by chunk id and version (common/object_key.h),
// which says nothing about the files they belong to. Meta therefore keeps
// `<prefix>manifest.jsonl` in the bucket, written again (one PUT, which
// replaces it whole) every object-manifest-interval when uploads finished
// or objects were deleted since the last one. JSON Lines:
//
//   {"t0fs_object_manifest":1,"cluster":ID,"prefix":P,"written":"...Z","files":N}
//   {"path":"/ckpt/step100/model.pt","inode":12,"size":4718592,
//    "chunk_size":1048576,"mtime":"...Z","complete":true,
//    "chunks":[{"index":0,"offset":0,"version":3,"current":true,
//               "key":"t0fs/ID/chunks/00000000000000a1.3"}, ...]}
//
// One line per path of a regular file whose objective is protect=object and
// of which the bucket holds at least one chunk. A file is rebuilt by writing
// each listed object at its `offset` into a file of `size` bytes (chunks not
// listed, and the ends of chunks past their object, are zeros). `complete`:
// every chunk with data has its newest version in the bucket (`current`);
// an older version is listed (not current) while it is still there. Paths
// are UTF-8 (a byte that is not is replaced by U+FFFD: the inode number
// tells such names apart). The walk reads the namespace while it changes: a
// file renamed or removed during it may be listed under its old name or be
// missing until the next manifest.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/clock.h"
#include "common/status.h"
#include "meta/store/meta_store.h"

namespace t0fs::meta {

struct ManifestCounts {
  uint64_t files = 0;     // lines of files
  uint64_t complete = 0;  // ... of which every chunk's newest version is in the bucket
  uint64_t chunks = 0;    // chunk objects listed
};

// The manifest's key under the cluster's `prefix` (empty or ending with '/').
inline std::string ObjectManifestKey(std::string_view prefix) {
  return std::string(prefix) + "manifest.jsonl";
}

// Walks the namespace of `store` from the root and returns the manifest's
// text (format above) with `counts` filled in.
Result<std::string> BuildObjectManifest(MetaStore& store, std::string_view cluster_id,
                                        std::string_view prefix, Timespec now,
                                        ManifestCounts* counts);

}  // namespace t0fs::meta
