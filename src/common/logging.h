// Logging: spdlog underneath, one logger per process, structured as
// "<time> <level> <component>: message". Nothing is logged per I/O at the
// default level (info); per-request detail is at debug/trace.
#pragma once

#include <string_view>

#include <spdlog/spdlog.h>

namespace t0fs {

// Configures the process logger: `level` is trace|debug|info|warn|error|off,
// `component` the daemon name ("meta", "data 2", "mount"). Safe to call again.
void InitLogging(std::string_view component, std::string_view level);
// Logs to `path` (appending) instead of stderr.
void InitFileLogging(std::string_view component, std::string_view level, std::string_view path);

}  // namespace t0fs

#define LOG_TRACE(...) SPDLOG_TRACE(__VA_ARGS__)
#define LOG_DEBUG(...) SPDLOG_DEBUG(__VA_ARGS__)
#define LOG_INFO(...) ::spdlog::info(__VA_ARGS__)
#define LOG_WARN(...) ::spdlog::warn(__VA_ARGS__)
#define LOG_ERROR(...) ::spdlog::error(__VA_ARGS__)
