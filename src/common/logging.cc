#include "common/logging.h"

#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_sinks.h>

#include <memory>
#include <string>

namespace t0fs {
namespace {

void Configure(std::shared_ptr<spdlog::logger> logger, std::string_view component,
               std::string_view level) {
  logger->set_pattern(fmt::format("%Y-%m-%d %H:%M:%S.%e %^%l%$ {}: %v", component));
  logger->set_level(spdlog::level::from_str(std::string(level)));
  logger->flush_on(spdlog::level::warn);
  spdlog::set_default_logger(std::move(logger));
}

}  // namespace

void InitLogging(std::string_view component, std::string_view level) {
  auto sink = std::make_shared<spdlog::sinks::stderr_sink_mt>();
  Configure(std::make_shared<spdlog::logger>(std::string(component), sink), component, level);
}

void InitFileLogging(std::string_view component, std::string_view level, std::string_view path) {
  auto sink = std::make_shared<spdlog::sinks::basic_file_sink_mt>(std::string(path));
  Configure(std::make_shared<spdlog::logger>(std::string(component), sink), component, level);
}

bool LogLimit::Allow(std::chrono::steady_clock::time_point now, uint64_t* held_back) {
  std::lock_guard lock(mu_);
  if (in_window_ == 0 || now - window_start_ >= interval_) {
    window_start_ = now;
    in_window_ = 0;
  }
  if (in_window_ >= burst_) {
    ++held_back_;
    return false;
  }
  ++in_window_;
  *held_back = held_back_;
  held_back_ = 0;
  return true;
}

std::string LogLimit::HeldBackNote(uint64_t held_back) {
  return held_back == 0
             ? ""
             : fmt::format(" ({} similar warning(s) not logged in the last seconds)", held_back);
}

}  // namespace t0fs
