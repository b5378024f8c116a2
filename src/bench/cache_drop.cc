#include "bench/cache_drop.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "common/fd.h"

namespace t0fs::bench {

const char* const kDropCachesHelp =
    "Page cache before reads: auto (drop_caches when root, else fadvise DONTNEED on the files "
    "and a warning), sysctl (drop_caches; needs root), fadvise, both, none. Every result "
    "records what was done and how much of the files stayed in memory (mincore)";

Result<CacheDropMode> ParseCacheDropMode(const std::string& text) {
  if (text == "auto") return CacheDropMode::kAuto;
  if (text == "both") return CacheDropMode::kBoth;
  if (text == "sysctl" || text == "drop_caches") return CacheDropMode::kSysctl;
  if (text == "fadvise") return CacheDropMode::kFadvise;
  if (text == "none") return CacheDropMode::kNone;
  return Status(StatusCode::kInvalidArgument,
                "unknown --drop-caches '" + text + "' (auto, sysctl, fadvise, both, none)");
}

std::string_view CacheDropModeName(CacheDropMode mode) {
  switch (mode) {
    case CacheDropMode::kAuto:
      return "auto";
    case CacheDropMode::kBoth:
      return "both";
    case CacheDropMode::kSysctl:
      return "sysctl";
    case CacheDropMode::kFadvise:
      return "fadvise";
    case CacheDropMode::kNone:
      return "none";
  }
  return "?";
}

std::vector<std::string> CacheDropChoices() {
  return {"auto", "sysctl", "drop_caches", "fadvise", "both", "none"};
}

bool FadviseDontNeed(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  (void)::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  ::close(fd);
  return true;
}

Result<Residency> FileResidency(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Status::FromErrno(errno, "open " + path);
  UniqueFd owner(fd);
  struct stat st {};
  if (::fstat(fd, &st) != 0) return Status::FromErrno(errno, "stat " + path);
  uint64_t size = 0;
  if (S_ISREG(st.st_mode)) {
    size = static_cast<uint64_t>(st.st_size);
  } else if (S_ISBLK(st.st_mode)) {
    if (::ioctl(fd, BLKGETSIZE64, &size) != 0) return Status::FromErrno(errno, "size of " + path);
  } else {
    return Residency{};
  }
  Residency r;
  r.files = 1;
  const uint64_t page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  constexpr uint64_t kWindow = uint64_t{1} << 30;
  std::vector<unsigned char> vec;
  for (uint64_t off = 0; off < size; off += kWindow) {
    const uint64_t len = std::min(kWindow, size - off);
    void* addr = ::mmap(nullptr, len, PROT_READ, MAP_SHARED, fd, static_cast<off_t>(off));
    if (addr == MAP_FAILED) return Status::FromErrno(errno, "mmap " + path);
    const uint64_t pages = (len + page - 1) / page;
    vec.assign(pages, 0);
    int rc = ::mincore(addr, len, vec.data());
    int err = errno;
    ::munmap(addr, len);
    if (rc != 0) return Status::FromErrno(err, "mincore " + path);
    r.pages += pages;
    for (unsigned char v : vec) r.resident += v & 1;
  }
  return r;
}

std::vector<size_t> SampleIndices(size_t count, size_t max) {
  std::vector<size_t> out;
  if (count == 0 || max == 0) return out;
  if (count <= max) {
    for (size_t idx = 0; idx < count; ++idx) out.push_back(idx);
    return out;
  }
  if (max == 1) return {0};
  for (size_t k = 0; k < max; ++k) {
    size_t idx = static_cast<size_t>((static_cast<unsigned __int128>(count - 1) * k) / (max - 1));
    if (out.empty() || out.back() != idx) out.push_back(idx);
  }
  return out;
}

Residency SampleResidency(const std::vector<std::string>& paths, size_t max_files) {
  Residency all;
  for (size_t idx : SampleIndices(paths.size(), max_files)) {
    auto one = FileResidency(paths[idx]);
    if (!one.ok()) continue;
    all.pages += one->pages;
    all.resident += one->resident;
    all.files += one->files;
  }
  return all;
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

Result<CacheReport> DropPageCache(CacheDropMode mode, const std::vector<std::string>& files) {
  CacheReport r;
  r.requested = std::string(CacheDropModeName(mode));
  r.drops = 1;
  r.files = files.size();
  bool sysctl = false, fadvise = false;
  if (mode == CacheDropMode::kAuto) {
    if (::geteuid() == 0) {
      Status st = WriteDropCaches();
      if (st.ok()) {
        sysctl = true;
      } else {
        fadvise = true;
        r.AddWarning(
            fmt::format("drop_caches failed ({}); only posix_fadvise(DONTNEED) on the "
                        "files was done: reads may come from memory",
                        st.message()));
      }
    } else {
      fadvise = true;
      r.AddWarning(
          "not root: only posix_fadvise(DONTNEED) on the files was done, which cannot "
          "drop every cache (a FUSE passthrough file's backing file, a server's): reads "
          "may come from memory; run as root for drop_caches");
    }
  } else if (mode == CacheDropMode::kSysctl || mode == CacheDropMode::kBoth) {
    Status st = WriteDropCaches();
    if (!st.ok()) {
      return st.WithContext(fmt::format("--drop-caches {} needs root", r.requested));
    }
    sysctl = true;
    fadvise = mode == CacheDropMode::kBoth;
  } else if (mode == CacheDropMode::kFadvise) {
    fadvise = true;
  }
  if (fadvise) {
    for (const std::string& path : files) FadviseDontNeed(path);
  }
  r.done = sysctl && fadvise ? "both" : sysctl ? "sysctl" : fadvise ? "fadvise" : "none";
  if (r.done == "none") {
    r.AddWarning("the page cache was not dropped (--drop-caches none): reads may come from memory");
  }
  Residency left = SampleResidency(files);
  r.files_checked = left.files;
  r.resident = left.files > 0 ? left.Fraction() : -1;
  if (r.done != "none" && r.resident > kResidentLimit) {
    r.AddWarning(fmt::format(
        "after the drop {:.0f} % of the files' pages were still in memory: reads may come from "
        "memory, not storage{}",
        r.resident * 100,
        sysctl ? ""
               : " (fadvise does not reach the cache of a FUSE passthrough file's backing "
                 "file; use --drop-caches sysctl as root)"));
  }
  return r;
}

CacheReport DirectReadsReport(CacheDropMode mode) {
  CacheReport r;
  r.requested = std::string(CacheDropModeName(mode));
  r.done = "direct";
  return r;
}

}  // namespace t0fs::bench
