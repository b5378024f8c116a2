#include "cli/config_flags.h"

#include <charconv>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

namespace t0fs::cli {
namespace {

template <typename T>
Status ParseNumber(const std::string& text, T& out) {
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  if (ec != std::errc() || ptr != text.data() + text.size()) {
    return Status(StatusCode::kInvalidArgument, fmt::format("'{}' is not a valid number", text));
  }
  return Status::Ok();
}

}  // namespace

template <typename T>
void ConfigFlags::Add(std::string_view key, T& field, std::string_view help, std::string default_text,
                      std::function<Status(const std::string&, T&)> parse) {
  std::string& raw = values_.emplace_back();
  std::string name = "--" + prefix_ + std::string(key);
  CLI::Option* opt = app_->add_option(name, raw, std::string(help));
  opt->default_str(default_text)->capture_default_str();
  opt->option_text(default_text.empty() ? "TEXT" : fmt::format("[{}]", default_text));
  appliers_.push_back([opt, &raw, &field, parse, name]() -> Status {
    if (opt->count() == 0) return Status::Ok();
    Status st = parse(raw, field);
    return st.ok() ? st : st.WithContext(name);
  });
}

void ConfigFlags::operator()(std::string_view key, std::string& field, std::string_view help) {
  Add<std::string>(key, field, help, field, [](const std::string& raw, std::string& out) {
    out = raw;
    return Status::Ok();
  });
}

void ConfigFlags::operator()(std::string_view key, bool& field, std::string_view help) {
  Add<bool>(key, field, help, field ? "true" : "false", [](const std::string& raw, bool& out) {
    if (raw == "true" || raw == "1" || raw == "yes" || raw == "on") {
      out = true;
    } else if (raw == "false" || raw == "0" || raw == "no" || raw == "off") {
      out = false;
    } else {
      return Status(StatusCode::kInvalidArgument, fmt::format("'{}' is not true or false", raw));
    }
    return Status::Ok();
  });
}

void ConfigFlags::operator()(std::string_view key, int64_t& field, std::string_view help) {
  Add<int64_t>(key, field, help, std::to_string(field), ParseNumber<int64_t>);
}

void ConfigFlags::operator()(std::string_view key, uint64_t& field, std::string_view help) {
  Add<uint64_t>(key, field, help, std::to_string(field), ParseNumber<uint64_t>);
}

void ConfigFlags::operator()(std::string_view key, uint32_t& field, std::string_view help) {
  Add<uint32_t>(key, field, help, std::to_string(field), ParseNumber<uint32_t>);
}

void ConfigFlags::operator()(std::string_view key, double& field, std::string_view help) {
  Add<double>(key, field, help, fmt::format("{}", field), [](const std::string& raw, double& out) {
    try {
      size_t used = 0;
      out = std::stod(raw, &used);
      if (used == raw.size()) return Status::Ok();
    } catch (const std::exception&) {
    }
    return Status(StatusCode::kInvalidArgument, fmt::format("'{}' is not a number", raw));
  });
}

void ConfigFlags::operator()(std::string_view key, ByteSize& field, std::string_view help) {
  Add<ByteSize>(key, field, help, FormatByteSize(field.bytes), [](const std::string& raw, ByteSize& out) {
    ASSIGN_OR_RETURN(out, ParseByteSize(raw));
    return Status::Ok();
  });
}

void ConfigFlags::operator()(std::string_view key, Duration& field, std::string_view help) {
  Add<Duration>(key, field, help, FormatDuration(field), [](const std::string& raw, Duration& out) {
    ASSIGN_OR_RETURN(out, ParseDuration(raw));
    return Status::Ok();
  });
}

void ConfigFlags::operator()(std::string_view key, std::vector<std::string>& field, std::string_view help) {
  std::vector<std::string>& raw = lists_.emplace_back();
  std::string name = "--" + prefix_ + std::string(key);
  CLI::Option* opt = app_->add_option(name, raw, std::string(help));
  std::string shown;
  for (const auto& item : field) shown += (shown.empty() ? "" : " ") + item;
  opt->default_str(shown)->capture_default_str();
  appliers_.push_back([opt, &raw, &field]() -> Status {
    if (opt->count() > 0) field = raw;
    return Status::Ok();
  });
}

Status ConfigFlags::Apply() {
  for (auto& apply : appliers_) RETURN_IF_ERROR(apply());
  return Status::Ok();
}

}  // namespace t0fs::cli
