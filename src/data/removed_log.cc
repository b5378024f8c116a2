#include "data/removed_log.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <utility>

#include "common/clock.h"
#include "common/logging.h"

namespace t0fs::data {
namespace {

// One record: the chunk id, then the time in ms, negative for a placement
// (host byte order: the files never leave their host).
struct Record {
  uint64_t chunk;
  int64_t ms;
};
static_assert(sizeof(Record) == 16);

std::vector<Record> ReadRecords(const std::string& path) {
  std::vector<Record> out;
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    if (errno != ENOENT) LOG_WARN("{}: cannot read ({})", path, std::strerror(errno));
    return out;
  }
  Record r{};
  while (in.read(reinterpret_cast<char*>(&r), sizeof r)) out.push_back(r);  // a torn tail is left
  return out;
}

}  // namespace

int64_t WallMillisNow() {
  const Timespec now = WallNow();
  return now.sec * 1000 + now.nsec / 1000000;
}

RemovedLog::RemovedLog(std::string dir, std::chrono::milliseconds memory, size_t capacity)
    : dir_(std::move(dir)), memory_(memory), capacity_(capacity) {}

std::vector<RemovedLog::Removal> RemovedLog::Load(int64_t now_ms) const {
  // chunk → its latest removal (a placement after it ends it).
  std::map<uint64_t, int64_t> latest;
  for (const char* name : {kOldName, kName}) {
    for (const Record& r : ReadRecords(dir_ + "/" + name)) {
      if (r.ms < 0) {
        latest.erase(r.chunk);
      } else {
        latest[r.chunk] = r.ms;
      }
    }
  }
  std::vector<Removal> out;
  for (const auto& [chunk, ms] : latest) {
    if (now_ms - ms <= memory_.count()) out.push_back(Removal{ChunkId(chunk), ms});
  }
  std::sort(out.begin(), out.end(),
            [](const Removal& a, const Removal& b) { return a.wall_ms < b.wall_ms; });
  return out;
}

Status RemovedLog::OpenCurrent() {
  const std::string path = dir_ + "/" + kName;
  std::vector<Record> kept = ReadRecords(path);
  fd_ = UniqueFd(::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644));
  if (!fd_.valid()) return Status::FromErrno(errno, "open " + path);
  struct stat st {};
  if (::fstat(fd_.get(), &st) == 0 && st.st_size % sizeof(Record) != 0) {
    // A torn record (a crash mid-append): cut, so that the next ones align.
    if (::ftruncate(fd_.get(), st.st_size - st.st_size % sizeof(Record)) != 0) {
      return Status::FromErrno(errno, "truncate " + path);
    }
  }
  records_ = kept.size();
  first_ms_ = kept.empty() ? -1 : std::abs(kept.front().ms);
  return Status::Ok();
}

Status RemovedLog::Append(ChunkId chunk, bool placed, int64_t now_ms) {
  if (!fd_.valid()) RETURN_IF_ERROR(OpenCurrent());
  if (records_ >= capacity_ || (first_ms_ >= 0 && now_ms - first_ms_ > memory_.count())) {
    const std::string path = dir_ + "/" + kName;
    const std::string old = dir_ + "/" + kOldName;
    if (::rename(path.c_str(), old.c_str()) != 0) return Status::FromErrno(errno, "rename " + path);
    fd_ = UniqueFd();
    RETURN_IF_ERROR(OpenCurrent());
  }
  const Record r{chunk.value(), placed ? -now_ms : now_ms};
  const ssize_t n = ::write(fd_.get(), &r, sizeof r);
  if (n != static_cast<ssize_t>(sizeof r)) {
    const int err = n < 0 ? errno : EIO;
    fd_ = UniqueFd();  // opened again by the next append, which cuts a torn record first
    return Status::FromErrno(err, fmt::format("append to {}/{}", dir_, kName));
  }
  if (records_++ == 0) first_ms_ = now_ms;
  return Status::Ok();
}

}  // namespace t0fs::data
