// Configuration: defaults live in code, an optional TOML file mirrors the
// struct tree, and command-line flags override both.
//
// A config struct lists its fields once, in a Visit() method:
//
//   struct DataConfig {
//     std::string listen = "127.0.0.1:7701";
//     ByteSize max_request{8 << 20};
//     template <class V> void Visit(V& v) {
//       v("listen", listen, "address:port for chunk I/O");
//       v("max-request", max_request, "largest chunk read/write per RPC; bigger costs memory");
//     }
//   };
//
// ConfigFromToml() walks that list against a TOML table; the CLI layer
// (src/cli/config_flags.h) walks the same list to add one flag per field.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace toml {
inline namespace v3 {
class table;
}
}  // namespace toml

namespace t0fs {

// A byte count written with an optional binary suffix: "4096", "64K", "64M", "1G".
struct ByteSize {
  uint64_t bytes = 0;
};
// A duration written with a unit: "250ms", "30s", "5m".
struct Duration {
  std::chrono::milliseconds value{0};
};

Result<ByteSize> ParseByteSize(std::string_view text);
Result<Duration> ParseDuration(std::string_view text);
std::string FormatByteSize(uint64_t bytes);  // "64 MiB"
std::string FormatDuration(Duration d);      // "30s"

// Reads the fields of `cfg` present in `table`; unknown keys are an error
// (a typo in a config file must not be silently ignored).
class TomlFieldReader {
 public:
  TomlFieldReader(const toml::table& table, std::string section)
      : table_(table), section_(std::move(section)) {}

  void operator()(std::string_view key, std::string& field, std::string_view help);
  void operator()(std::string_view key, bool& field, std::string_view help);
  void operator()(std::string_view key, int64_t& field, std::string_view help);
  void operator()(std::string_view key, uint64_t& field, std::string_view help);
  void operator()(std::string_view key, uint32_t& field, std::string_view help);
  void operator()(std::string_view key, double& field, std::string_view help);
  void operator()(std::string_view key, ByteSize& field, std::string_view help);
  void operator()(std::string_view key, Duration& field, std::string_view help);
  void operator()(std::string_view key, std::vector<std::string>& field, std::string_view help);

  // Fields seen; used to reject unknown keys.
  const std::vector<std::string>& seen() const { return seen_; }
  Status status() const { return status_; }

 private:
  const void* Find(std::string_view key);
  void Fail(std::string_view key, std::string_view want);

  const toml::table& table_;
  std::string section_;
  std::vector<std::string> seen_;
  Status status_;
};

// A parsed TOML config file; sections are applied to config structs by name
// ("meta", "data", "mount"). A missing section leaves a struct unchanged.
class TomlDocument {
 public:
  static Result<TomlDocument> Load(const std::string& path);
  static Result<TomlDocument> Parse(std::string_view text, std::string_view origin);
  TomlDocument(TomlDocument&&) noexcept;
  TomlDocument& operator=(TomlDocument&&) noexcept;
  ~TomlDocument();
  const toml::table& root() const { return *root_; }

  // Applies section `name` to `cfg`; unknown keys in it are an error.
  template <typename Config>
  Status Apply(std::string_view name, Config& cfg) const;

 private:
  explicit TomlDocument(toml::table* root) : root_(root) {}
  Status CheckKeys(std::string_view name, const std::vector<std::string>& known) const;
  const toml::table* Section(std::string_view name) const;
  toml::table* root_ = nullptr;
};

template <typename Config>
Status TomlDocument::Apply(std::string_view name, Config& cfg) const {
  const toml::table* section = Section(name);
  if (section == nullptr) return Status::Ok();
  TomlFieldReader reader(*section, std::string(name));
  cfg.Visit(reader);
  RETURN_IF_ERROR(reader.status());
  return CheckKeys(name, reader.seen());
}

}  // namespace t0fs
