#include "cli/command_util.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

namespace t0fs::cli {

int Fail(std::string_view what, const Status& st) {
  fmt::print(stderr, "t0fs {}: {}\n", what, st.ToString());
  return 1;
}

Status CheckLogLevel(const std::string& level) {
  for (const char* ok : {"trace", "debug", "info", "warn", "error", "off"}) {
    if (level == ok) return Status::Ok();
  }
  return Status(StatusCode::kInvalidArgument,
                fmt::format("log level '{}' is not one of trace, debug, info, warn, error, off", level));
}

void AddConfigFileOption(CLI::App* cmd, std::string* path) {
  cmd->add_option("--config", *path, "TOML config file; flags override it")->check(CLI::ExistingFile);
}

}  // namespace t0fs::cli
