#include "bench/mlperf/sample_reader.h"

#include <fmt/format.h>
#include <sys/stat.h>
#include <time.h>

#include <algorithm>
#include <cerrno>
#include <vector>

#include "bench/stop_signal.h"
#include "common/buffer.h"
#include "common/clock.h"

namespace t0fs::bench::mlperf {

void PreciseSleep(double seconds) {
  if (seconds <= 0) return;
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  auto ns = static_cast<int64_t>(seconds * 1e9);
  timespec deadline{now.tv_sec + static_cast<time_t>(ns / 1000000000),
                    now.tv_nsec + static_cast<long>(ns % 1000000000)};
  if (deadline.tv_nsec >= 1000000000) {
    deadline.tv_nsec -= 1000000000;
    ++deadline.tv_sec;
  }
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &deadline, nullptr) == EINTR) {
  }
}

Result<uint64_t> SampleReader::ReadWhole(const std::string& path, const DataSink& sink) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return Status::FromErrno(errno, "stat " + path);
  OpenMode mode;
  mode.direct = options_.direct;
  ASSIGN_OR_RETURN(int handle, engine_.Open(path, mode));
  uint64_t length = static_cast<uint64_t>(st.st_size);
  Result<uint64_t> got = ReadRange(handle, path, 0, length, sink);
  Status closed = engine_.Close(handle);
  if (!got.ok()) return got;
  if (!closed.ok()) return closed.WithContext("close " + path);
  SleepUnlessStopped(options_.delay_per_file_s);
  return got;
}

Result<uint64_t> SampleReader::ReadRange(int handle, const std::string& path, uint64_t offset,
                                         uint64_t length, const DataSink& sink) {
  const uint64_t xfer = std::min<uint64_t>(options_.transfer, engine_.Buffer(0).size());
  const uint64_t chunks = (length + xfer - 1) / xfer;
  const uint32_t depth = std::max<uint32_t>(1, engine_.depth());
  struct Slot {
    uint64_t chunk = 0;
    int64_t result = 0;
    bool done = false;
  };
  std::vector<Slot> slots(depth);
  uint64_t next_submit = 0, next_deliver = 0, total = 0;
  uint32_t in_flight = 0;
  auto submit = [&](uint32_t slot) -> Status {
    uint64_t chunk = next_submit++;
    uint64_t off = chunk * xfer;
    uint64_t len = std::min(xfer, length - off);
    if (options_.direct) len = AlignUp(len, kPageSize);
    slots[slot] = {chunk, 0, false};
    ++in_flight;
    return engine_.Submit(slot, handle, IoDir::kRead, offset + off, len);
  };
  for (uint32_t slot = 0; slot < depth && next_submit < chunks; ++slot) {
    RETURN_IF_ERROR(submit(slot));
  }
  std::vector<Completion> done(depth);
  while (next_deliver < chunks) {
    if (StopRequested()) {
      // Requests in flight own their buffers: wait for them, then stop.
      while (in_flight > 0) {
        auto got = engine_.Reap(done, 1);
        if (!got.ok()) break;
        in_flight -= static_cast<uint32_t>(*got);
      }
      return Status(StatusCode::kInterrupted, "read " + path + ": stopped");
    }
    ASSIGN_OR_RETURN(size_t got, engine_.Reap(done, 1));
    for (size_t idx = 0; idx < got; ++idx) {
      Slot& s = slots[done[idx].slot];
      s.result = done[idx].result;
      s.done = true;
      --in_flight;
      if (s.result < 0) {
        return Status::FromErrno(static_cast<int>(-s.result),
                                 fmt::format("read {} at offset {}", path, s.chunk * xfer));
      }
    }
    // Deliver in file order; a delivered slot takes the next chunk.
    bool progressed = true;
    while (progressed && next_deliver < chunks) {
      progressed = false;
      for (uint32_t slot = 0; slot < depth; ++slot) {
        Slot& s = slots[slot];
        if (!s.done || s.chunk != next_deliver) continue;
        uint64_t want = std::min(xfer, length - s.chunk * xfer);
        uint64_t have = std::min<uint64_t>(static_cast<uint64_t>(s.result), want);
        if (have < want) {
          return Status(StatusCode::kIoError,
                        fmt::format("short read of {} at offset {} ({} of {} bytes): file changed?",
                                    path, s.chunk * xfer, have, want));
        }
        if (sink) RETURN_IF_ERROR(sink(engine_.Buffer(slot).data(), have));
        total += have;
        s.done = false;
        ++next_deliver;
        progressed = true;
        if (next_submit < chunks) RETURN_IF_ERROR(submit(slot));
      }
    }
    if (got == 0 && in_flight == 0 && next_deliver < chunks) {
      return Status(StatusCode::kInternal, "read: lost a request");
    }
  }
  return total;
}

Result<uint64_t> SampleReader::ReadFiles(std::span<const std::string> paths,
                                         const FileDone& on_done) {
  const uint64_t xfer = std::min<uint64_t>(options_.transfer, engine_.Buffer(0).size());
  const uint32_t depth = std::max<uint32_t>(1, engine_.depth());
  struct File {
    int handle = -1;
    uint64_t size = 0;
    uint64_t next_offset = 0;  // of the next request to submit
    uint64_t in_flight = 0;
    uint64_t start_ns = 0;
  };
  std::vector<File> files(paths.size());
  struct Slot {
    size_t file_idx = 0;
    uint64_t offset = 0;
    uint64_t want = 0;
  };
  std::vector<Slot> slots(depth);
  std::vector<uint32_t> free_slots;
  for (uint32_t slot = depth; slot > 0; --slot) free_slots.push_back(slot - 1);
  size_t next_file = 0;  // the first file not fully submitted
  size_t files_done = 0;
  uint64_t total = 0;
  uint32_t in_flight = 0;
  std::vector<Completion> reaped(depth);

  // Returning early: requests in flight own their buffers, so wait for
  // them, then close the files still open (their errors are secondary).
  auto drain = [&] {
    while (in_flight > 0) {
      auto got = engine_.Reap(reaped, 1);
      if (!got.ok() || *got == 0) break;
      in_flight -= static_cast<uint32_t>(*got);
    }
    for (File& f : files) {
      if (f.handle >= 0) (void)engine_.Close(f.handle);
      f.handle = -1;
    }
  };
  auto finish = [&](size_t file_idx) -> Status {
    File& f = files[file_idx];
    Status closed = engine_.Close(f.handle);
    f.handle = -1;
    if (!closed.ok()) return closed.WithContext("close " + paths[file_idx]);
    ++files_done;
    total += f.size;
    if (on_done) on_done(file_idx, f.size, MonoNanos() - f.start_ns);
    return Status::Ok();
  };
  // Opens the next file (stat for its size); an empty one is done at once.
  auto open_next = [&]() -> Status {
    File& f = files[next_file];
    const std::string& path = paths[next_file];
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) return Status::FromErrno(errno, "stat " + path);
    OpenMode mode;
    mode.direct = options_.direct;
    f.start_ns = MonoNanos();
    ASSIGN_OR_RETURN(f.handle, engine_.Open(path, mode));
    f.size = static_cast<uint64_t>(st.st_size);
    if (f.size == 0) {
      RETURN_IF_ERROR(finish(next_file));
      ++next_file;
    }
    return Status::Ok();
  };
  auto fill = [&]() -> Status {
    while (!free_slots.empty() && next_file < files.size()) {
      if (files[next_file].handle < 0) {
        RETURN_IF_ERROR(open_next());
        continue;
      }
      File& f = files[next_file];
      uint32_t slot = free_slots.back();
      free_slots.pop_back();
      uint64_t want = std::min(xfer, f.size - f.next_offset);
      uint64_t len = options_.direct ? AlignUp(want, kPageSize) : want;
      slots[slot] = {next_file, f.next_offset, want};
      RETURN_IF_ERROR(engine_.Submit(slot, f.handle, IoDir::kRead, f.next_offset, len));
      ++in_flight;
      ++f.in_flight;
      f.next_offset += want;
      if (f.next_offset == f.size) ++next_file;
    }
    return Status::Ok();
  };

  while (files_done < files.size()) {
    if (StopRequested()) {
      drain();
      return Status(StatusCode::kInterrupted, "read: stopped");
    }
    if (Status filled = fill(); !filled.ok()) {  // an open or a submit failed
      drain();
      return filled;
    }
    if (in_flight == 0) {
      if (files_done < files.size()) return Status(StatusCode::kInternal, "read: lost a request");
      break;
    }
    ASSIGN_OR_RETURN(size_t got, engine_.Reap(reaped, 1));
    for (size_t idx = 0; idx < got; ++idx) {
      const Slot& s = slots[reaped[idx].slot];
      const int64_t result = reaped[idx].result;
      --in_flight;
      free_slots.push_back(reaped[idx].slot);
      const std::string& path = paths[s.file_idx];
      if (result < 0 || static_cast<uint64_t>(result) < s.want) {
        drain();
        if (result < 0) {
          return Status::FromErrno(static_cast<int>(-result),
                                   fmt::format("read {} at offset {}", path, s.offset));
        }
        return Status(StatusCode::kIoError,
                      fmt::format("short read of {} at offset {} ({} of {} bytes): file changed?",
                                  path, s.offset, result, s.want));
      }
      File& f = files[s.file_idx];
      if (--f.in_flight == 0 && f.next_offset == f.size) {
        if (Status st = finish(s.file_idx); !st.ok()) {
          drain();
          return st;
        }
      }
    }
  }
  SleepUnlessStopped(options_.delay_per_file_s * static_cast<double>(files.size()));
  return total;
}

}  // namespace t0fs::bench::mlperf
