#include "bench/ec_workload.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <optional>
#include <random>
#include <thread>
#include <vector>

#include "bench/progress.h"
#include "bench/stop_signal.h"
#include "bench/sysstat.h"
#include "common/buffer.h"
#include "common/clock.h"
#include "ec/erasure_code.h"
#include "ec/rows.h"

namespace t0fs::bench {
namespace {

// Rows of data the phases cycle through: past the caches of the machine,
// not more than the run processes.
constexpr uint64_t kRingBytes = uint64_t{128} << 20;

struct Ring {
  uint64_t rows = 0;
  uint64_t row_bytes = 0;
  uint64_t cells_bytes = 0;
  AlignedBuffer data;   // rows × row_bytes: the chunk bytes
  AlignedBuffer cells;  // rows × cells_bytes: their cells, made by the encode phase
};

enum class Kind { kEncode, kRebuild };

// One phase: `total_rows` rows, spread over the threads, each row of the
// ring in turn.
Result<PhaseResult> RunPhase(const EcSpec& spec, const ec::ErasureCode& code, Ring& ring, Kind kind,
                             const std::vector<uint32_t>& missing, const std::string& name) {
  const uint64_t total_rows = std::max<uint64_t>(1, spec.size / ring.row_bytes);
  std::atomic<uint64_t> next{0}, done_rows{0}, verify_errors{0};
  struct Worker {
    Histogram lat;
    Status status;
    uint64_t end_ns = 0;
    uint64_t rows = 0;
  };
  std::vector<Worker> workers(spec.threads);
  const CpuSample begin = SampleCpu();
  const uint64_t begin_ns = MonoNanos();
  std::atomic<uint64_t> first_ns{0}, first_rows{0};
  std::optional<Progress> line;
  line.emplace(spec.progress, name, [&] {
    ProgressSnapshot s;
    s.ops = done_rows.load(std::memory_order_relaxed);
    s.bytes = s.ops * ring.row_bytes;
    s.fraction = static_cast<double>(s.ops) / static_cast<double>(total_rows);
    return s;
  });
  auto work = [&](Worker& w) {
    AlignedBuffer scratch(ring.cells_bytes);  // a rebuild's cells (the ring's stay intact)
    AlignedBuffer out(ring.row_bytes);
    for (uint64_t row = next.fetch_add(1); row < total_rows && !StopRequested();
         row = next.fetch_add(1)) {
      const uint64_t slot = row % ring.rows;
      std::span<std::byte> data(ring.data.data() + slot * ring.row_bytes, ring.row_bytes);
      std::span<std::byte> cells(ring.cells.data() + slot * ring.cells_bytes, ring.cells_bytes);
      const uint64_t t0 = MonoNanos();
      if (kind == Kind::kEncode) {
        w.status = ec::EncodeRow(code, spec.unit, data, cells);
      } else {
        std::memcpy(scratch.data(), cells.data(), ring.cells_bytes);
        for (uint32_t i : missing) std::memset(scratch.data() + i * spec.unit, 0, spec.unit);
        w.status = ec::DecodeRow(code, spec.unit, scratch.span(), missing, out.span());
        if (w.status.ok() && std::memcmp(out.data(), data.data(), ring.row_bytes) != 0)
          verify_errors++;
      }
      if (!w.status.ok()) return;
      w.lat.Record(MonoNanos() - t0);
      ++w.rows;
      done_rows.fetch_add(1, std::memory_order_relaxed);
    }
    w.end_ns = MonoNanos();
    uint64_t expected = 0;
    if (first_ns.compare_exchange_strong(expected, w.end_ns)) first_rows = done_rows.load();
  };
  std::vector<std::thread> pool;
  for (Worker& w : workers) pool.emplace_back(work, std::ref(w));
  for (auto& t : pool) t.join();
  line->Stop();
  const CpuSample end = SampleCpu();
  PhaseResult p;
  p.name = name;
  p.workers = spec.threads;
  uint64_t last_ns = begin_ns;
  for (Worker& w : workers) {
    if (!w.status.ok()) return w.status;
    p.latency.Merge(w.lat);
    p.last_done.ops += w.rows;
    last_ns = std::max(last_ns, w.end_ns);
  }
  p.last_done.bytes = p.last_done.ops * ring.row_bytes;
  p.last_done.elapsed_s = static_cast<double>(last_ns - begin_ns) / 1e9;
  p.first_done.ops = first_rows.load();
  p.first_done.bytes = p.first_done.ops * ring.row_bytes;
  p.first_done.elapsed_s = static_cast<double>(first_ns.load() - begin_ns) / 1e9;
  p.verify_errors = verify_errors.load();
  p.cpu = CpuBetween(begin, end);
  p.peak_rss = PeakRssBytes();
  p.extra = {{"k", spec.k}, {"m", spec.m}, {"unit", spec.unit}, {"missing", missing}};
  p.ComputeFigures();
  if (p.verify_errors > 0) {
    return Status(
        StatusCode::kCorruption,
        fmt::format("{}: {} row(s) rebuilt differ from the rows encoded", name, p.verify_errors));
  }
  return p;
}

}  // namespace

Status ValidateEcSpec(const EcSpec& spec) {
  RETURN_IF_ERROR(ec::ErasureCode::Make(spec.k, spec.m).status());
  if (spec.unit == 0 || spec.unit % 64 != 0 || spec.unit > (uint64_t{64} << 20)) {
    return Status(
        StatusCode::kInvalidArgument,
        fmt::format("--unit must be a multiple of 64 bytes up to 64 MiB, not {}", spec.unit));
  }
  if (spec.size < spec.k * spec.unit) {
    return Status(StatusCode::kInvalidArgument,
                  fmt::format("--size {} is less than one row (K x unit = {} bytes)", spec.size,
                              spec.k * spec.unit));
  }
  if (spec.threads == 0)
    return Status(StatusCode::kInvalidArgument, "--threads must be at least 1");
  return Status::Ok();
}

Result<RunResult> RunEc(const EcSpec& spec) {
  RETURN_IF_ERROR(ValidateEcSpec(spec));
  ASSIGN_OR_RETURN(ec::ErasureCode code, ec::ErasureCode::Make(spec.k, spec.m));
  Ring ring;
  ring.row_bytes = spec.k * spec.unit;
  ring.cells_bytes = (spec.k + spec.m) * spec.unit;
  ring.rows = std::clamp<uint64_t>(std::min(kRingBytes, spec.size) / ring.row_bytes, 1, 1024);
  ring.data = AlignedBuffer(ring.rows * ring.row_bytes);
  ring.cells = AlignedBuffer(ring.rows * ring.cells_bytes);
  std::mt19937_64 rng(0x7430665f6563ULL);
  for (uint64_t at = 0; at + 8 <= ring.data.size(); at += 8) {
    const uint64_t v = rng();
    std::memcpy(ring.data.data() + at, &v, 8);
  }
  std::memset(ring.cells.data(), 0, ring.cells.size());  // its page faults are not the encode's
  RunResult run;
  ASSIGN_OR_RETURN(PhaseResult encode, RunPhase(spec, code, ring, Kind::kEncode, {}, "encode"));
  run.phases.push_back(std::move(encode));
  // The encode phase may have stopped early or covered fewer rows than the
  // ring: encode the whole ring once more before rebuilding from it.
  for (uint64_t slot = 0; slot < ring.rows; ++slot) {
    RETURN_IF_ERROR(ec::EncodeRow(
        code, spec.unit, std::span(ring.data.data() + slot * ring.row_bytes, ring.row_bytes),
        std::span(ring.cells.data() + slot * ring.cells_bytes, ring.cells_bytes)));
  }
  if (StopRequested()) {
    run.stopped_early = true;
    return run;
  }
  ASSIGN_OR_RETURN(PhaseResult one, RunPhase(spec, code, ring, Kind::kRebuild, {0}, "rebuild-1"));
  run.phases.push_back(std::move(one));
  if (spec.m > 1 && spec.m <= spec.k && !StopRequested()) {
    std::vector<uint32_t> missing;
    for (uint32_t i = 0; i < spec.m; ++i) missing.push_back(i);
    ASSIGN_OR_RETURN(PhaseResult many, RunPhase(spec, code, ring, Kind::kRebuild, missing,
                                                fmt::format("rebuild-{}", spec.m)));
    run.phases.push_back(std::move(many));
  }
  run.stopped_early = StopRequested();
  return run;
}

}  // namespace t0fs::bench
