// Helpers shared by the subcommands: error output and config resolution.
#pragma once

#include <memory>
#include <string>

#include "cli/config_flags.h"
#include "common/status.h"

namespace CLI {
class App;
}

namespace t0fs::cli {

// Prints "t0fs <what>: <status>" to stderr; returns the exit code (1).
int Fail(std::string_view what, const Status& st);
// Checks a log level name (trace, debug, info, warn, error, off).
Status CheckLogLevel(const std::string& level);

// A config struct with its --config file and flags: the state one
// subcommand keeps between registration and its callback.
template <typename Config>
struct Configured {
  Config cfg;
  std::string config_file;
  std::unique_ptr<ConfigFlags> flags;

  // Registers --config and one flag per field of cfg on `cmd`.
  void Register(CLI::App* cmd, const std::string& prefix = "");
  // defaults < file section `section` < flags.
  Status Resolve(std::string_view section) {
    RETURN_IF_ERROR(LoadConfigFile(config_file, section, cfg));
    return flags->Apply();
  }
};

void AddConfigFileOption(CLI::App* cmd, std::string* path);

template <typename Config>
void Configured<Config>::Register(CLI::App* cmd, const std::string& prefix) {
  AddConfigFileOption(cmd, &config_file);
  flags = std::make_unique<ConfigFlags>(cmd, prefix);
  cfg.Visit(*flags);
}

}  // namespace t0fs::cli
