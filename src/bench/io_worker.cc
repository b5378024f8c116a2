// The io workload's worker threads (io_run.h): open the files of a thread's
// share, then the submit/reap loop at the queue depth (sequential or random
// offsets, the rwmixread mix, verify patterns, ramp and latency accounting),
// and the untimed post-write verify pass.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <span>
#include <vector>

#include <fmt/format.h>

#include "bench/io_run.h"
#include "bench/pattern.h"
#include "bench/permutation.h"
#include "bench/stop_signal.h"
#include "common/buffer.h"
#include "common/clock.h"
#include "common/fd.h"
#include "common/io_backend.h"

namespace t0fs::bench::internal {
namespace {

// Which blocks a worker touches, in order: sequential through its share, or
// a fresh pseudo-random permutation of its blocks on every pass.
class OffsetStream {
 public:
  OffsetStream(uint64_t blocks, bool random, uint64_t seed)
      : blocks_(blocks), random_(random), seed_(seed), perm_(blocks, seed) {}
  uint64_t BlockAt(uint64_t op) {
    uint64_t pass = op / blocks_;
    uint64_t idx = op % blocks_;
    if (!random_) return idx;
    if (pass != pass_) {
      pass_ = pass;
      perm_ = Permutation(blocks_, Mix64(seed_ + pass));
    }
    return perm_(idx);
  }

 private:
  uint64_t blocks_;
  bool random_;
  uint64_t seed_;
  uint64_t pass_ = 0;
  Permutation perm_;
};

}  // namespace

void IoRun::Worker(uint32_t local_idx) {
  WorkerOutput& out = outputs_[local_idx];
  EngineOptions eopts = spec_.engine;
  eopts.depth = spec_.iodepth;
  eopts.buffer_size = spec_.block;
  auto engine = MakeEngine(eopts);
  std::vector<int> handles(plan_.files.size(), -1);
  Status st = engine.ok() ? Status::Ok() : engine.status();
  if (st.ok()) {
    OpenMode mode;
    mode.read = HasReads(spec_.rw) || spec_.verify;
    mode.write = HasWrites(spec_.rw);
    mode.create = HasWrites(spec_.rw);
    mode.direct = spec_.direct;
    for (const Segment& seg : plan_.shares[GlobalThread(local_idx)].segments) {
      if (handles[seg.file] >= 0) continue;
      auto h = (*engine)->Open(plan_.files[seg.file].path, mode);
      if (!h.ok()) {
        st = h.status();
        break;
      }
      handles[seg.file] = *h;
    }
  }
  if (!st.ok()) Fail(st);
  gate_.Ready();
  gate_.WaitGo();
  if (!abort_.load()) {
    st = DoWork(local_idx, **engine, handles, out);
    if (!st.ok()) Fail(st);
  }
  if (engine.ok()) {
    for (int h : handles) {
      if (h < 0) continue;
      Status closed = (*engine)->Close(h);
      if (!closed.ok()) Fail(closed);
    }
  }
}

Status IoRun::DoWork(uint32_t local_idx, Engine& engine, const std::vector<int>& handles,
                     WorkerOutput& out) {
  const uint32_t global = GlobalThread(local_idx);
  const Share& share = plan_.shares[global];
  const uint64_t bs = spec_.block;
  const uint64_t blocks = share.length / bs;
  const bool random = IsRandom(spec_.rw);
  const uint32_t depth = engine.depth();
  const bool time_based = end_ns_ > 0;
  LiveCounters& live = live_[local_idx];
  OffsetStream offsets(blocks, random, Mix64(spec_.seed ^ (uint64_t{global} << 32)));
  Rng mix_rng(Mix64(spec_.seed + global));

  struct SlotState {
    uint64_t submit_ns = 0;
    uint32_t file = 0;
    uint64_t offset = 0;
    IoDir dir = IoDir::kRead;
  };
  std::vector<SlotState> slots(depth);
  std::vector<uint32_t> free_slots;
  for (uint32_t slot = depth; slot-- > 0;) {
    free_slots.push_back(slot);
    if (!spec_.verify) FillRandom(engine.Buffer(slot), spec_.seed ^ (global * 1000003ULL + slot));
  }
  std::vector<Completion> done(depth);
  uint64_t op = 0;
  uint64_t write_counter = 0;
  uint32_t inflight = 0;
  bool stop = false;
  Status status;

  while (true) {
    uint64_t now = MonoNanos();
    if (!stop) {
      if (abort_.load(std::memory_order_relaxed) || StopRequested()) stop = true;
      else if (time_based ? now >= end_ns_ : op >= blocks) stop = true;
    }
    while (!stop && !free_slots.empty()) {
      uint32_t slot = free_slots.back();
      free_slots.pop_back();
      Location loc = Locate(share, offsets.BlockAt(op) * bs);
      ++op;
      IoDir dir = spec_.rw == RwMode::kRandRW
                      ? (mix_rng.Below(100) < spec_.rwmixread ? IoDir::kRead : IoDir::kWrite)
                  : HasReads(spec_.rw) ? IoDir::kRead
                                       : IoDir::kWrite;
      std::span<std::byte> buf = engine.Buffer(slot).first(bs);
      if (dir == IoDir::kWrite) {
        if (spec_.verify) {
          FillPattern(buf, spec_.seed, plan_.files[loc.file].id, loc.file_offset);
        } else {
          Scramble(buf, loc.file_offset, ++write_counter);
        }
      }
      slots[slot] = {MonoNanos(), loc.file, loc.file_offset, dir};
      Status sub = engine.Submit(slot, handles[loc.file], dir, loc.file_offset, bs);
      if (!sub.ok()) {
        status = sub;
        stop = true;
        free_slots.push_back(slot);
        break;
      }
      ++inflight;
      if (!time_based && op >= blocks) stop = true;
    }
    if (inflight == 0) break;
    auto reaped = engine.Reap(done, 1);
    if (!reaped.ok()) {
      status = reaped.status();
      break;  // the engine is broken; in-flight requests are abandoned
    }
    uint64_t done_ns = MonoNanos();
    for (size_t idx = 0; idx < *reaped; ++idx) {
      const Completion& c = done[idx];
      SlotState& s = slots[c.slot];
      free_slots.push_back(c.slot);
      --inflight;
      const PlannedFile& file = plan_.files[s.file];
      if (c.result < 0) {
        if (status.ok()) {
          status = Status::FromErrno(static_cast<int>(-c.result),
                                     fmt::format("{} {} at offset {}",
                                                 s.dir == IoDir::kRead ? "read" : "write",
                                                 file.path, s.offset));
        }
        stop = true;
        continue;
      }
      if (static_cast<uint64_t>(c.result) != bs) {
        if (status.ok()) {
          status = Status(StatusCode::kIoError,
                          s.dir == IoDir::kRead
                              ? fmt::format("short read of {} at offset {} ({} of {} bytes): the "
                                            "file is smaller than the dataset; remove it or match "
                                            "--size",
                                            file.path, s.offset, c.result, bs)
                              : fmt::format("short write to {} at offset {} ({} of {} bytes)",
                                            file.path, s.offset, c.result, bs));
        }
        stop = true;
        continue;
      }
      if (s.dir == IoDir::kRead && spec_.verify) {
        auto bad = CheckPattern(engine.Buffer(c.slot).first(bs), spec_.seed, file.id, s.offset);
        if (bad) {
          if (out.verify_errors++ == 0 && status.ok()) {
            status = Status(StatusCode::kCorruption,
                            fmt::format("verify failed: {} differs at offset {} (block at {})",
                                        file.path, *bad, s.offset));
          }
          stop = true;
        }
      }
      live.any_bytes.store(live.any_bytes.load(std::memory_order_relaxed) + bs,
                           std::memory_order_relaxed);
      live.any_ops.store(live.any_ops.load(std::memory_order_relaxed) + 1,
                         std::memory_order_relaxed);
      if (s.submit_ns < measure_ns_) continue;  // ramp: not counted
      uint64_t lat = done_ns - s.submit_ns;
      if (s.dir == IoDir::kRead) {
        out.read_lat.Record(lat);
        live.read_bytes.store(live.read_bytes.load(std::memory_order_relaxed) + bs,
                              std::memory_order_relaxed);
        live.read_ops.store(live.read_ops.load(std::memory_order_relaxed) + 1,
                            std::memory_order_relaxed);
      } else {
        out.write_lat.Record(lat);
        live.write_bytes.store(live.write_bytes.load(std::memory_order_relaxed) + bs,
                               std::memory_order_relaxed);
        live.write_ops.store(live.write_ops.load(std::memory_order_relaxed) + 1,
                             std::memory_order_relaxed);
      }
    }
  }
  out.issued_blocks = op;
  if (status.ok() && spec_.end_fsync && HasWrites(spec_.rw) && !StopRequested()) {
    for (int h : handles) {
      if (h < 0) continue;
      Status synced = engine.Fsync(h);
      if (!synced.ok()) {
        status = synced.WithContext("fsync");
        break;
      }
    }
  }
  out.finish_ns = MonoNanos();
  if (status.ok()) SnapshotFirstDone(out.finish_ns);
  return status;
}

void IoRun::VerifyWorker(uint32_t local_idx, WorkerOutput& out) {
  const uint32_t global = GlobalThread(local_idx);
  const Share& share = plan_.shares[global];
  const uint64_t bs = spec_.block;
  const uint64_t blocks = share.length / bs;
  OffsetStream offsets(blocks, IsRandom(spec_.rw), Mix64(spec_.seed ^ (uint64_t{global} << 32)));
  uint64_t count = std::min(out.issued_blocks, blocks);
  std::vector<UniqueFd> fds(plan_.files.size());
  AlignedBuffer buf(AlignUp(bs, kPageSize));
  for (uint64_t op = 0; op < count && !StopRequested(); ++op) {
    Location loc = Locate(share, offsets.BlockAt(op) * bs);
    const PlannedFile& file = plan_.files[loc.file];
    if (!fds[loc.file].valid()) {
      int fd = ::open(file.path.c_str(), O_RDONLY | O_CLOEXEC);
      if (fd < 0) {
        Fail(Status::FromErrno(errno, "verify: open " + file.path));
        return;
      }
      fds[loc.file] = UniqueFd(fd);
    }
    auto got = PreadFull(fds[loc.file].get(), buf.data(), bs, loc.file_offset);
    if (!got.ok() || *got != bs) {
      Fail(got.ok() ? Status(StatusCode::kIoError, "verify: short read of " + file.path)
                    : got.status().WithContext("verify"));
      return;
    }
    auto bad = CheckPattern({buf.data(), bs}, spec_.seed, file.id, loc.file_offset);
    if (bad) {
      if (out.verify_errors++ == 0) {
        Fail(Status(StatusCode::kCorruption,
                    fmt::format("verify failed: {} differs at offset {} (block at {})", file.path,
                                *bad, loc.file_offset)));
      }
    }
  }
}

}  // namespace t0fs::bench::internal
