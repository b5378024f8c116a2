// `t0fs bench ec`: the CPU cost of erasure coding (protect=ec:K+M) on this
// machine, without a cluster: the codec a data node encodes cells with and a
// client decodes a degraded read with (ec/erasure_code.h, ISA-L), row by
// row as they use it (ec/rows.h).
//
// Phases, each over `size` bytes of chunk data in rows of K units (random
// bytes, in a ring of buffers larger than the CPU caches), `threads` threads
// sharing the rows:
//   encode     EncodeRow: the K data units copied into the row's cells and
//              the M parity units computed (what a protect=ec encode does)
//   rebuild-1  DecodeRow with data cell 0 missing (a degraded read with one
//              node down)
//   rebuild-M  DecodeRow with M data cells missing (the most the code
//              survives; only when M <= K)
// Every rebuilt row is compared with the row that was encoded: a mismatch
// fails the run (verify errors). Bandwidth is chunk bytes per second.
#pragma once

#include <cstdint>

#include "bench/result.h"
#include "common/status.h"

namespace t0fs::bench {

struct EcSpec {
  uint32_t k = 4;
  uint32_t m = 2;
  uint64_t unit = uint64_t{1} << 20;
  uint64_t size = uint64_t{1} << 30;  // chunk bytes per phase
  uint32_t threads = 1;
  bool progress = false;
};

Status ValidateEcSpec(const EcSpec& spec);
Result<RunResult> RunEc(const EcSpec& spec);

}  // namespace t0fs::bench
