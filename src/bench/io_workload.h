// The io workload (`t0fs bench io`, and the engine of `ai`): fio/elbencho
// style block I/O on a dataset of files, with worker threads (and MPI ranks),
// a queue depth per thread, size- or time-based runs with a ramp, and
// elbencho's first-done / last-done accounting.
//
// The spec and its checks are in io_spec.h, the merge over ranks in
// rank_merge.h (both included here); the run itself in io_workload.cc (the
// driver) and io_worker.cc (the per-thread I/O loop), which share io_run.h.
#pragma once

#include "bench/comm.h"
#include "bench/io_spec.h"
#include "bench/rank_merge.h"
#include "bench/result.h"

namespace t0fs::bench {

// Runs one measurement. Every rank calls it; rank 0's result holds the
// merged figures of all ranks. Files the run created are removed unless
// spec.keep, on success, on failure and when stopped (StopRequested(): the
// workers stop between I/Os and the result holds what ran, marked
// stopped_early).
Result<RunResult> RunIo(const IoSpec& spec, Comm& comm);

}  // namespace t0fs::bench
