// Logging: spdlog underneath, one logger per process, structured as
// "<time> <level> <component>: message". Nothing is logged per I/O at the
// default level (info); per-request detail is at debug/trace.
#pragma once

#include <spdlog/spdlog.h>

#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>

namespace t0fs {

// Configures the process logger: `level` is trace|debug|info|warn|error|off,
// `component` the daemon name ("meta", "data 2", "mount"). Safe to call again.
void InitLogging(std::string_view component, std::string_view level);
// Logs to `path` (appending) instead of stderr.
void InitFileLogging(std::string_view component, std::string_view level, std::string_view path);

// Lets the first `burst` messages of each `interval` through and counts the
// others: a fault met by every request (a hung replica that misses every
// write) then logs a few lines and a count, not a line per request.
// Thread safe.
class LogLimit {
 public:
  LogLimit(uint32_t burst, std::chrono::steady_clock::duration interval)
      : burst_(burst), interval_(interval) {}
  // Whether to log a message now; if so, `*held_back` is how many were not
  // logged since the last one that was.
  bool Allow(uint64_t* held_back) { return Allow(std::chrono::steady_clock::now(), held_back); }
  bool Allow(std::chrono::steady_clock::time_point now, uint64_t* held_back);
  // The tail for the message let through: "" or " (N similar warning(s) ...)".
  static std::string HeldBackNote(uint64_t held_back);

 private:
  const uint32_t burst_;
  const std::chrono::steady_clock::duration interval_;
  std::mutex mu_;  // guards the rest
  std::chrono::steady_clock::time_point window_start_{};
  uint32_t in_window_ = 0;
  uint64_t held_back_ = 0;
};

}  // namespace t0fs

#define LOG_TRACE(...) SPDLOG_TRACE(__VA_ARGS__)
#define LOG_DEBUG(...) SPDLOG_DEBUG(__VA_ARGS__)
#define LOG_INFO(...) ::spdlog::info(__VA_ARGS__)
#define LOG_WARN(...) ::spdlog::warn(__VA_ARGS__)
#define LOG_ERROR(...) ::spdlog::error(__VA_ARGS__)
