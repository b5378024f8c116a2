#include "metrics/text_format.h"

#include <charconv>
#include <cmath>

namespace t0fs::metrics {
namespace {

// Length of the valid UTF-8 sequence starting at s[i], or 0 if invalid
// (overlong forms, surrogates and code points above U+10FFFF are invalid).
size_t Utf8SequenceLength(std::string_view s, size_t i) {
  auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  unsigned char c = byte(i);
  if (c < 0x80) return 1;
  size_t len = 0;
  uint32_t cp = 0;
  if ((c & 0xE0) == 0xC0) {
    len = 2;
    cp = c & 0x1F;
  } else if ((c & 0xF0) == 0xE0) {
    len = 3;
    cp = c & 0x0F;
  } else if ((c & 0xF8) == 0xF0) {
    len = 4;
    cp = c & 0x07;
  } else {
    return 0;
  }
  if (i + len > s.size()) return 0;
  for (size_t k = 1; k < len; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (byte(i + k) & 0x3F);
  }
  static constexpr uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < kMin[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return len;
}

}  // namespace

void AppendValue(std::string& out, uint64_t v) {
  char buf[24];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, end);
}

void AppendValue(std::string& out, double v) {
  if (std::isnan(v)) {
    out.append("NaN");
    return;
  }
  if (std::isinf(v)) {
    out.append(v > 0 ? "+Inf" : "-Inf");
    return;
  }
  char buf[32];
  // Integral values are written as integers, exactly (to_chars would give
  // "1e+06" for a million). 2^63 bounds the conversion.
  if (v == std::trunc(v) && std::fabs(v) < 9.2e18) {
    auto [end, ec] = std::to_chars(buf, buf + sizeof buf, static_cast<int64_t>(v));
    out.append(buf, end);
    return;
  }
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);  // shortest round-trip form
  out.append(buf, end);
}

std::string FormatValue(double v) {
  std::string out;
  AppendValue(out, v);
  return out;
}

void AppendLabelValue(std::string& out, std::string_view value) {
  for (size_t i = 0; i < value.size();) {
    char c = value[i];
    switch (c) {
      case '\\':
        out.append("\\\\");
        ++i;
        continue;
      case '"':
        out.append("\\\"");
        ++i;
        continue;
      case '\n':
        out.append("\\n");
        ++i;
        continue;
      default:
        break;
    }
    size_t len = Utf8SequenceLength(value, i);
    if (len == 0) {
      out.append("\xEF\xBF\xBD");  // U+FFFD REPLACEMENT CHARACTER
      ++i;
    } else {
      out.append(value.substr(i, len));
      i += len;
    }
  }
}

void AppendHelp(std::string& out, std::string_view help) {
  for (char c : help) {
    if (c == '\\') {
      out.append("\\\\");
    } else if (c == '\n') {
      out.append("\\n");
    } else {
      out.push_back(c);
    }
  }
}

std::string RenderLabels(const std::vector<std::string>& names,
                         const std::vector<std::string>& values) {
  std::string out;
  for (size_t label_idx = 0; label_idx < names.size() && label_idx < values.size(); ++label_idx) {
    if (label_idx > 0) out.push_back(',');
    out.append(names[label_idx]);
    out.append("=\"");
    AppendLabelValue(out, values[label_idx]);
    out.push_back('"');
  }
  return out;
}

void AppendHeader(std::string& out, std::string_view name, std::string_view help,
                  std::string_view type) {
  out.append("# HELP ");
  out.append(name);
  out.push_back(' ');
  AppendHelp(out, help);
  out.append("\n# TYPE ");
  out.append(name);
  out.push_back(' ');
  out.append(type);
  out.push_back('\n');
}

}  // namespace t0fs::metrics
