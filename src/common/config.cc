#include "common/config.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <utility>

#include <fmt/format.h>
#include <toml++/toml.h>

namespace t0fs {

Result<ByteSize> ParseByteSize(std::string_view text) {
  uint64_t value = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || ptr == text.data()) {
    return Status(StatusCode::kInvalidArgument, fmt::format("'{}' is not a size (e.g. 4096, 64K, 1M, 2G)", text));
  }
  std::string_view suffix(ptr, static_cast<size_t>(text.data() + text.size() - ptr));
  uint64_t mult = 1;
  if (suffix.empty() || suffix == "B") {
    mult = 1;
  } else if (suffix == "K" || suffix == "KiB" || suffix == "k") {
    mult = 1ull << 10;
  } else if (suffix == "M" || suffix == "MiB" || suffix == "m") {
    mult = 1ull << 20;
  } else if (suffix == "G" || suffix == "GiB" || suffix == "g") {
    mult = 1ull << 30;
  } else if (suffix == "T" || suffix == "TiB" || suffix == "t") {
    mult = 1ull << 40;
  } else {
    return Status(StatusCode::kInvalidArgument, fmt::format("'{}': unknown size suffix '{}' (use K, M, G or T)", text, suffix));
  }
  if (value > UINT64_MAX / mult) {
    return Status(StatusCode::kInvalidArgument, fmt::format("'{}' is too large", text));
  }
  return ByteSize{value * mult};
}

Result<Duration> ParseDuration(std::string_view text) {
  uint64_t value = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || ptr == text.data()) {
    return Status(StatusCode::kInvalidArgument, fmt::format("'{}' is not a duration (e.g. 500ms, 30s, 5m)", text));
  }
  std::string_view unit(ptr, static_cast<size_t>(text.data() + text.size() - ptr));
  using namespace std::chrono;
  if (unit == "ms") return Duration{milliseconds(value)};
  if (unit == "s" || unit.empty()) return Duration{seconds(value)};
  if (unit == "m" || unit == "min") return Duration{minutes(value)};
  if (unit == "h") return Duration{hours(value)};
  if (unit == "d") return Duration{hours(value * 24)};
  return Status(StatusCode::kInvalidArgument,
                fmt::format("'{}': unknown duration unit '{}' (use ms, s, m, h or d)", text, unit));
}

std::string FormatByteSize(uint64_t bytes) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  double v = static_cast<double>(bytes);
  size_t unit = 0;
  while (v >= 1024 && unit + 1 < std::size(kUnits)) {
    v /= 1024;
    ++unit;
  }
  if (unit == 0) return fmt::format("{} B", bytes);
  return fmt::format("{:.{}f} {}", v, v == static_cast<uint64_t>(v) ? 0 : 1, kUnits[unit]);
}

std::string FormatDuration(Duration d) {
  auto ms = d.value.count();
  if (ms % 1000 != 0) return fmt::format("{}ms", ms);
  if (ms % 60000 != 0 || ms == 0) return fmt::format("{}s", ms / 1000);
  return fmt::format("{}m", ms / 60000);
}

const void* TomlFieldReader::Find(std::string_view key) {
  seen_.emplace_back(key);
  return table_.get(key);
}

void TomlFieldReader::Fail(std::string_view key, std::string_view want) {
  if (status_.ok()) {
    status_ = Status(StatusCode::kInvalidArgument,
                     fmt::format("config [{}] {}: expected {}", section_, key, want));
  }
}

void TomlFieldReader::operator()(std::string_view key, std::string& field, std::string_view) {
  auto* node = static_cast<const toml::node*>(Find(key));
  if (node == nullptr) return;
  if (auto v = node->value_exact<std::string>()) field = *v; else Fail(key, "a string");
}

void TomlFieldReader::operator()(std::string_view key, bool& field, std::string_view) {
  auto* node = static_cast<const toml::node*>(Find(key));
  if (node == nullptr) return;
  if (auto v = node->value_exact<bool>()) field = *v; else Fail(key, "true or false");
}

void TomlFieldReader::operator()(std::string_view key, int64_t& field, std::string_view) {
  auto* node = static_cast<const toml::node*>(Find(key));
  if (node == nullptr) return;
  if (auto v = node->value_exact<int64_t>()) field = *v; else Fail(key, "an integer");
}

void TomlFieldReader::operator()(std::string_view key, uint64_t& field, std::string_view) {
  auto* node = static_cast<const toml::node*>(Find(key));
  if (node == nullptr) return;
  auto v = node->value_exact<int64_t>();
  if (v && *v >= 0) field = static_cast<uint64_t>(*v); else Fail(key, "a non-negative integer");
}

void TomlFieldReader::operator()(std::string_view key, uint32_t& field, std::string_view) {
  auto* node = static_cast<const toml::node*>(Find(key));
  if (node == nullptr) return;
  auto v = node->value_exact<int64_t>();
  if (v && *v >= 0 && *v <= UINT32_MAX) field = static_cast<uint32_t>(*v); else Fail(key, "a non-negative 32-bit integer");
}

void TomlFieldReader::operator()(std::string_view key, double& field, std::string_view) {
  auto* node = static_cast<const toml::node*>(Find(key));
  if (node == nullptr) return;
  if (auto v = node->value<double>()) field = *v; else Fail(key, "a number");
}

void TomlFieldReader::operator()(std::string_view key, ByteSize& field, std::string_view) {
  auto* node = static_cast<const toml::node*>(Find(key));
  if (node == nullptr) return;
  if (auto i = node->value_exact<int64_t>(); i && *i >= 0) {
    field.bytes = static_cast<uint64_t>(*i);
  } else if (auto s = node->value_exact<std::string>()) {
    auto parsed = ParseByteSize(*s);
    if (parsed.ok()) field = *parsed; else Fail(key, "a size such as \"64M\"");
  } else {
    Fail(key, "a size such as \"64M\"");
  }
}

void TomlFieldReader::operator()(std::string_view key, Duration& field, std::string_view) {
  auto* node = static_cast<const toml::node*>(Find(key));
  if (node == nullptr) return;
  if (auto s = node->value_exact<std::string>()) {
    auto parsed = ParseDuration(*s);
    if (parsed.ok()) field = *parsed; else Fail(key, "a duration such as \"30s\"");
  } else {
    Fail(key, "a duration such as \"30s\"");
  }
}

void TomlFieldReader::operator()(std::string_view key, std::vector<std::string>& field,
                                 std::string_view) {
  auto* node = static_cast<const toml::node*>(Find(key));
  if (node == nullptr) return;
  const toml::array* arr = node->as_array();
  if (arr == nullptr) return Fail(key, "an array of strings");
  std::vector<std::string> out;
  for (const toml::node& item : *arr) {
    auto v = item.value_exact<std::string>();
    if (!v) return Fail(key, "an array of strings");
    out.push_back(*v);
  }
  field = std::move(out);
}

Result<TomlDocument> TomlDocument::Load(const std::string& path) {
  try {
    return TomlDocument(new toml::table(toml::parse_file(path)));
  } catch (const toml::parse_error& e) {
    return Status(StatusCode::kInvalidArgument,
                  fmt::format("{}:{}: {}", path, e.source().begin.line, e.description()));
  } catch (const std::exception& e) {
    return Status(StatusCode::kInvalidArgument, fmt::format("{}: {}", path, e.what()));
  }
}

Result<TomlDocument> TomlDocument::Parse(std::string_view text, std::string_view origin) {
  try {
    return TomlDocument(new toml::table(toml::parse(text, origin)));
  } catch (const toml::parse_error& e) {
    return Status(StatusCode::kInvalidArgument,
                  fmt::format("{}:{}: {}", origin, e.source().begin.line, e.description()));
  }
}

TomlDocument::TomlDocument(TomlDocument&& o) noexcept : root_(std::exchange(o.root_, nullptr)) {}
TomlDocument& TomlDocument::operator=(TomlDocument&& o) noexcept {
  if (this != &o) {
    delete root_;
    root_ = std::exchange(o.root_, nullptr);
  }
  return *this;
}
TomlDocument::~TomlDocument() { delete root_; }

const toml::table* TomlDocument::Section(std::string_view name) const {
  const toml::node* node = root_->get(name);
  return node == nullptr ? nullptr : node->as_table();
}

Status TomlDocument::CheckKeys(std::string_view name, const std::vector<std::string>& known) const {
  const toml::table* section = Section(name);
  if (section == nullptr) return Status::Ok();
  for (const auto& [key, value] : *section) {
    if (std::find(known.begin(), known.end(), key.str()) == known.end()) {
      return Status(StatusCode::kInvalidArgument,
                    fmt::format("config [{}]: unknown key '{}'", name, key.str()));
    }
  }
  return Status::Ok();
}

}  // namespace t0fs
