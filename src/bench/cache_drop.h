// Dropping the page cache before reads, for every bench command (io, ai,
// sweep, mlperf), and checking that it worked.
//
// Ways to drop: writing 3 to /proc/sys/vm/drop_caches (root; the whole
// host, after a sync) or posix_fadvise(DONTNEED) on the files (any user;
// clean pages of those files only). fadvise is not enough everywhere: with
// FUSE passthrough the pages of a file belong to its backing file, which
// fadvise on the mount's file never reaches, and a server's cache (NFS, a
// data node) is out of its reach too. So after every drop each file (or an
// even sample of many files) is mapped PROT_READ and mincore() counts the
// pages still resident; a passthrough file's mapping is its backing file's,
// so the count sees the cache the reads would hit. The CacheReport carries
// what was done, what stayed, and the warnings a result must show.
//
// Thread safety: functions are reentrant; call a drop from one thread.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "bench/result.h"
#include "common/status.h"

namespace t0fs::bench {

enum class CacheDropMode {
  kAuto,     // drop_caches when root (fadvise when it fails), else fadvise + a warning
  kBoth,     // drop_caches and fadvise; failing drop_caches is an error
  kSysctl,   // drop_caches only; failing (not root) is an error
  kFadvise,  // posix_fadvise(DONTNEED) on the files only
  kNone,     // keep the cache (reads may come from memory)
};
Result<CacheDropMode> ParseCacheDropMode(const std::string& text);
std::string_view CacheDropModeName(CacheDropMode mode);
// The values --drop-caches accepts, for the CLI's check and help.
std::vector<std::string> CacheDropChoices();
extern const char* const kDropCachesHelp;

// Pages of one file that are in memory now: mapped PROT_READ in windows of
// 1 GiB, counted with mincore(). Regular files and block devices; other
// kinds (and empty files) give 0 pages.
struct Residency {
  uint64_t pages = 0;
  uint64_t resident = 0;
  uint64_t files = 0;  // files counted
  double Fraction() const {
    return pages == 0 ? 0.0 : static_cast<double>(resident) / static_cast<double>(pages);
  }
};
Result<Residency> FileResidency(const std::string& path);
// Indices of at most `max` of `count` items, evenly spread, first and last
// included (all of them when count <= max).
std::vector<size_t> SampleIndices(size_t count, size_t max);
// Residency of the files at SampleIndices(paths.size(), max_files); files
// that cannot be opened or mapped are skipped.
constexpr size_t kResidencySample = 64;
Residency SampleResidency(const std::vector<std::string>& paths,
                          size_t max_files = kResidencySample);

// Drops the page cache of `files` as `mode` says, then measures what stayed
// (CacheReport.resident) and adds the warnings: fadvise only (auto without
// root), nothing dropped (none), or more than kResidentLimit still resident.
// Errors only when an explicitly requested drop_caches is impossible.
Result<CacheReport> DropPageCache(CacheDropMode mode, const std::vector<std::string>& files);
// The report of a run whose reads use O_DIRECT (no drop needed).
CacheReport DirectReadsReport(CacheDropMode mode);

// posix_fadvise(DONTNEED) on one file; false if it could not be opened.
bool FadviseDontNeed(const std::string& path);

}  // namespace t0fs::bench
