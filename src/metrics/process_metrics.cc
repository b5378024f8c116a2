#include "metrics/process_metrics.h"

#include <dirent.h>
#include <sys/resource.h>
#include <unistd.h>

#include <charconv>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

namespace t0fs::metrics {
namespace {

// Fields of /proc/self/stat we use, numbered as in proc(5).
struct ProcStat {
  bool ok = false;
  uint64_t utime_ticks = 0;      // 14
  uint64_t stime_ticks = 0;      // 15
  uint64_t starttime_ticks = 0;  // 22, since boot
  uint64_t vsize_bytes = 0;      // 23
  uint64_t rss_pages = 0;        // 24
};

ProcStat ReadProcStat() {
  ProcStat stat;
  std::ifstream in("/proc/self/stat");
  std::string line;
  if (!std::getline(in, line)) return stat;
  // The command name (field 2) is in parentheses and may hold spaces or ')'.
  size_t close = line.rfind(')');
  if (close == std::string::npos) return stat;
  std::istringstream fields(line.substr(close + 1));
  std::vector<std::string> tokens;
  for (std::string token; fields >> token;) tokens.push_back(token);
  // tokens[0] is field 3 (state).
  auto field = [&](size_t number, uint64_t& out) {
    size_t idx = number - 3;
    if (idx >= tokens.size()) return false;
    const std::string& t = tokens[idx];
    return std::from_chars(t.data(), t.data() + t.size(), out).ec == std::errc();
  };
  stat.ok = field(14, stat.utime_ticks) && field(15, stat.stime_ticks) &&
            field(22, stat.starttime_ticks) && field(23, stat.vsize_bytes) &&
            field(24, stat.rss_pages);
  return stat;
}

// Seconds since the epoch at which the system booted (btime in /proc/stat).
uint64_t BootTime() {
  std::ifstream in("/proc/stat");
  for (std::string key; in >> key;) {
    if (key == "btime") {
      uint64_t btime = 0;
      in >> btime;
      return btime;
    }
    in.ignore(std::numeric_limits<std::streamsize>::max(), '\n');
  }
  return 0;
}

double OpenFds() {
  DIR* dir = ::opendir("/proc/self/fd");
  if (dir == nullptr) return 0;
  uint64_t count = 0;
  while (dirent* entry = ::readdir(dir)) {
    if (entry->d_name[0] != '.') ++count;
  }
  ::closedir(dir);
  return static_cast<double>(count > 0 ? count - 1 : 0);  // not the directory's own fd
}

}  // namespace

std::string_view Version() {
  return T0FS_VERSION;
}

void AddProcessMetrics(Registry& registry) {
  const double ticks = static_cast<double>(::sysconf(_SC_CLK_TCK));
  const double page = static_cast<double>(::sysconf(_SC_PAGESIZE));
  ProcStat at_start = ReadProcStat();
  const double start_time =
      static_cast<double>(BootTime()) + static_cast<double>(at_start.starttime_ticks) / ticks;

  registry.AddCallback(
      MetricType::kCounter, "process_cpu_seconds_total",
      "Total user and system CPU time spent in seconds.", {}, [ticks](SampleSink& sink) {
        ProcStat stat = ReadProcStat();
        if (stat.ok) {
          sink.Add(static_cast<double>(stat.utime_ticks + stat.stime_ticks) / ticks);
        }
      });
  registry.AddCallback(MetricType::kGauge, "process_resident_memory_bytes",
                       "Resident memory size in bytes.", {}, [page](SampleSink& sink) {
                         ProcStat stat = ReadProcStat();
                         if (stat.ok) sink.Add(static_cast<double>(stat.rss_pages) * page);
                       });
  registry.AddCallback(MetricType::kGauge, "process_virtual_memory_bytes",
                       "Virtual memory size in bytes.", {}, [](SampleSink& sink) {
                         ProcStat stat = ReadProcStat();
                         if (stat.ok) sink.Add(static_cast<double>(stat.vsize_bytes));
                       });
  registry.AddGaugeFn("process_open_fds", "Number of open file descriptors.", OpenFds);
  registry.AddGaugeFn("process_max_fds", "Maximum number of open file descriptors.", [] {
    rlimit limit{};
    if (::getrlimit(RLIMIT_NOFILE, &limit) != 0) return 0.0;
    return static_cast<double>(limit.rlim_cur);
  });
  if (at_start.ok && start_time > 0) {
    registry.AddGaugeFn("process_start_time_seconds",
                        "Start time of the process since unix epoch in seconds.",
                        [start_time] { return start_time; });
  }
}

void AddBuildInfo(Registry& registry, std::string_view component) {
  auto& info = registry.AddGauge("t0fs_build_info",
                                 "Always 1; labels give the t0fs version and the component.",
                                 {"component", "version"});
  info.With({{"component", component}, {"version", Version()}}).Set(1);
}

}  // namespace t0fs::metrics
