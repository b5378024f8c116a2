#include "bench/mlperf/cache_drop.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "common/clock.h"

namespace t0fs::bench::mlperf {

Result<CacheDropMode> ParseCacheDropMode(const std::string& text) {
  if (text == "auto") return CacheDropMode::kAuto;
  if (text == "both") return CacheDropMode::kBoth;
  if (text == "sysctl" || text == "drop_caches") return CacheDropMode::kSysctl;
  if (text == "fadvise") return CacheDropMode::kFadvise;
  if (text == "none") return CacheDropMode::kNone;
  return Status(StatusCode::kInvalidArgument,
                "unknown --drop-caches '" + text + "' (auto, both, sysctl, fadvise, none)");
}

bool FadviseDontNeed(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  (void)::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  ::close(fd);
  return true;
}

static Status WriteDropCaches() {
  ::sync();
  int fd = ::open("/proc/sys/vm/drop_caches", O_WRONLY | O_CLOEXEC);
  if (fd < 0) return Status::FromErrno(errno, "/proc/sys/vm/drop_caches");
  ssize_t rc = ::write(fd, "3", 1);
  int err = errno;
  ::close(fd);
  if (rc != 1) return Status::FromErrno(err, "write /proc/sys/vm/drop_caches");
  return Status::Ok();
}

Result<CacheDropReport> DropPageCache(
    CacheDropMode mode,
    const std::function<void(const std::function<void(const std::string&)>&)>& for_each_file) {
  CacheDropReport r;
  uint64_t t0 = MonoNanos();
  if (mode == CacheDropMode::kNone) {
    r.note = "page cache NOT dropped (--drop-caches none): reads may come from client memory";
    return r;
  }
  std::string sysctl_note;
  if (mode == CacheDropMode::kAuto || mode == CacheDropMode::kBoth ||
      mode == CacheDropMode::kSysctl) {
    Status st = WriteDropCaches();
    if (st.ok()) {
      r.sysctl = true;
    } else if (mode == CacheDropMode::kAuto) {
      sysctl_note = fmt::format("drop_caches not possible ({})", st.message());
    } else {
      return st.WithContext("--drop-caches");
    }
  }
  if (mode != CacheDropMode::kSysctl) {
    uint64_t missing = 0;
    for_each_file([&](const std::string& path) {
      if (FadviseDontNeed(path)) {
        ++r.fadvised;
      } else {
        ++missing;
      }
    });
    (void)missing;
  }
  r.seconds = static_cast<double>(MonoNanos() - t0) / 1e9;
  std::string done;
  if (r.sysctl) done = "drop_caches=3";
  if (mode != CacheDropMode::kSysctl) {
    if (!done.empty()) done += " + ";
    done += fmt::format("fadvise(DONTNEED) on {} files", r.fadvised);
  }
  r.note = "page cache dropped: " + done;
  if (!sysctl_note.empty()) {
    r.note += "; " + sysctl_note +
              ": only this dataset's clean pages were dropped (other caches, e.g. a file "
              "server's, stay warm)";
  }
  return r;
}

}  // namespace t0fs::bench::mlperf
