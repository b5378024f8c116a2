// The Prometheus text exposition format, version 0.0.4: the building blocks
// the registry uses to render a scrape.
//
//   # HELP <name> <help, with \ and newline escaped>
//   # TYPE <name> counter|gauge|histogram
//   <name>{<label>="<value, with \ " and newline escaped>",...} <value>
//
// Values: integers are written exactly ("42", not "4.2e+01"); other finite
// values in the shortest form that reads back to the same double; NaN, +Inf
// and -Inf as the format spells them.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace t0fs::metrics {

// The Content-Type of a scrape response in this format.
inline constexpr std::string_view kTextContentType = "text/plain; version=0.0.4; charset=utf-8";

void AppendValue(std::string& out, double v);
void AppendValue(std::string& out, uint64_t v);
std::string FormatValue(double v);

// Escapes a label value: backslash, double quote and newline. Bytes that are
// not valid UTF-8 become U+FFFD (Prometheus rejects a scrape with invalid UTF-8).
void AppendLabelValue(std::string& out, std::string_view value);
// Escapes HELP text: backslash and newline.
void AppendHelp(std::string& out, std::string_view help);

// `a="x",b="y"` for parallel lists of names and values (no braces).
std::string RenderLabels(const std::vector<std::string>& names,
                         const std::vector<std::string>& values);

// "# HELP ...\n# TYPE ...\n".
void AppendHeader(std::string& out, std::string_view name, std::string_view help,
                  std::string_view type);

// One sample line: name+suffix, then {labels[,extra]} when either is
// non-empty, then the value. `labels` is pre-rendered by RenderLabels;
// `extra` is a pre-rendered label such as `le="0.5"`.
template <typename V>
void AppendSample(std::string& out, std::string_view name, std::string_view suffix,
                  std::string_view labels, std::string_view extra, V value) {
  out.append(name);
  out.append(suffix);
  if (!labels.empty() || !extra.empty()) {
    out.push_back('{');
    out.append(labels);
    if (!labels.empty() && !extra.empty()) out.push_back(',');
    out.append(extra);
    out.push_back('}');
  }
  out.push_back(' ');
  AppendValue(out, value);
  out.push_back('\n');
}

}  // namespace t0fs::metrics
