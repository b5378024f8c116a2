// Dropping the client page cache between epochs (training) or between the
// write and read phases (checkpointing), "where permitted": writing 3 to
// /proc/sys/vm/drop_caches (root; the reference's `sudo echo 3`, whole
// node) and/or posix_fadvise(DONTNEED) on the dataset's files (any user;
// only those files, only clean pages). The report says what was done and,
// when something was not possible, why.
// Thread safety: call from one thread.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "common/status.h"

namespace t0fs::bench::mlperf {

enum class CacheDropMode {
  kAuto,     // both where permitted (drop_caches needs root)
  kBoth,     // both; failing drop_caches is an error
  kSysctl,   // /proc/sys/vm/drop_caches only
  kFadvise,  // posix_fadvise(DONTNEED) on the files only
  kNone,     // keep caches (a cached run is not a valid MLPerf result)
};
Result<CacheDropMode> ParseCacheDropMode(const std::string& text);

struct CacheDropReport {
  bool sysctl = false;        // drop_caches written
  uint64_t fadvised = 0;      // files given DONTNEED
  double seconds = 0;
  std::string note;           // human text: what was done / why not
};

// `for_each_file` calls its argument with every dataset path (on this host).
Result<CacheDropReport> DropPageCache(
    CacheDropMode mode,
    const std::function<void(const std::function<void(const std::string&)>&)>& for_each_file);

// posix_fadvise(DONTNEED) on one file; false if it could not be opened.
bool FadviseDontNeed(const std::string& path);

}  // namespace t0fs::bench::mlperf
