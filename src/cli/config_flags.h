// Command-line flags for config structs, applied after the TOML file so that
// the precedence is: defaults in code < config file < flags.
//
//   MetaConfig cfg;
//   ConfigFlags flags(cmd);        // cmd: a CLI::App subcommand
//   cfg.Visit(flags);              // one --key flag per field, help from the struct
//   ... after parsing:
//   RETURN_IF_ERROR(LoadConfigFile(path, "meta", cfg));
//   RETURN_IF_ERROR(flags.Apply());  // only flags given on the command line
#pragma once

#include <deque>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "common/config.h"
#include "common/status.h"

namespace CLI {
class App;
}

namespace t0fs::cli {

class ConfigFlags {
 public:
  // `prefix` is prepended to every flag name ("mount-" gives --mount-threads).
  explicit ConfigFlags(CLI::App* app, std::string prefix = "") : app_(app), prefix_(std::move(prefix)) {}

  void operator()(std::string_view key, std::string& field, std::string_view help);
  void operator()(std::string_view key, bool& field, std::string_view help);
  void operator()(std::string_view key, int64_t& field, std::string_view help);
  void operator()(std::string_view key, uint64_t& field, std::string_view help);
  void operator()(std::string_view key, uint32_t& field, std::string_view help);
  void operator()(std::string_view key, double& field, std::string_view help);
  void operator()(std::string_view key, ByteSize& field, std::string_view help);
  void operator()(std::string_view key, Duration& field, std::string_view help);
  void operator()(std::string_view key, std::vector<std::string>& field, std::string_view help);

  // Copies every flag that was given into its field; the first bad value
  // (e.g. "--chunk-size 12X") is an error naming the flag.
  Status Apply();

 private:
  template <typename T>
  void Add(std::string_view key, T& field, std::string_view help, std::string default_text,
           std::function<Status(const std::string&, T&)> parse);

  CLI::App* app_;
  std::string prefix_;
  std::deque<std::string> values_;  // raw flag text, stable addresses
  std::deque<std::vector<std::string>> lists_;
  std::vector<std::function<Status()>> appliers_;
};

// Applies section `section` of the TOML file at `path` (if `path` is not
// empty) to `cfg`.
template <typename Config>
Status LoadConfigFile(const std::string& path, std::string_view section, Config& cfg) {
  if (path.empty()) return Status::Ok();
  ASSIGN_OR_RETURN(TomlDocument doc, TomlDocument::Load(path));
  return doc.Apply(section, cfg);
}

}  // namespace t0fs::cli
