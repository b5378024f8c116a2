// Policy: the configuration rules of the meta service, written once and kept
// out of the store. The store enforces POSIX invariants only; what a new file
// gets by default and which objectives are acceptable are decided here, by
// the service, before the store is called.
//
//  - The chunk size of a new file: its directory's, else the cluster default
//    for the directory's placement.
//  - The acceptable range of an objective (replicas, chunk size) and of the
//    chunk-size settings.
//
// Pure functions, no state; unit-tested in policy_test.cc.
#pragma once

#include <cstdint>

#include "common/status.h"
#include "meta/meta_config.h"
#include "meta/store/meta_store.h"

namespace t0fs::meta {

inline constexpr uint32_t kMaxReplicas = 16;
// Chunk sizes are whole pages: chunk files are read and written with
// O_DIRECT-capable, 4 KiB-aligned I/O and checksummed per 4 KiB block.
inline constexpr uint64_t kChunkSizeAlign = 4096;
inline constexpr uint32_t kMaxProtectWithinS = 30 * 24 * 3600;
inline constexpr uint32_t kMaxDropAfterS = 3650u * 24 * 3600;  // keep-local=drop after=
inline constexpr uint32_t kMaxKeepNewest = 100000;             // keep-newest=N

// The chunk size of a regular file created in directory `dir`: the chunk size
// the directory's objective sets, else the cluster default for its placement
// — `local_chunk_size` under placement=local when it is set (one chunk file
// per file: FUSE-passthrough eligible), `chunk_size` otherwise.
uint64_t NewFileChunkSize(const InodeAttr& dir, const MetaConfig& config);

// An objective a client may set: 1..kMaxReplicas replicas, a chunk size of 0
// (the cluster default) or a positive multiple of kChunkSizeAlign, no
// protection, protect=replicas:N with replicas < N <= kMaxReplicas,
// protect=object or protect=ec:K+M, within at most kMaxProtectWithinS;
// keep-local=drop|pressure only with object or ec (with replicas the
// writer's copy is one of the copies), after= (at most kMaxDropAfterS) only
// with keep-local=drop, keep-newest (at most kMaxKeepNewest) only with
// keep-local=drop|pressure. kInvalidArgument with the rule
// otherwise. (Whether the named nodes
// exist, and whether the cluster has an object tier, are the caller's
// checks: they need the node list and the configuration.)
Status ValidateObjective(const Objective& objective);

// The chunk-size settings of the service: `chunk-size` a positive multiple of
// kChunkSizeAlign, `local-chunk-size` a multiple of it (0 = chunk-size).
Status ValidateChunkSizes(const MetaConfig& config);

// The tiering settings: 0 <= tier-low-watermark < tier-high-watermark <= 100.
Status ValidateTiering(const MetaConfig& config);

}  // namespace t0fs::meta
