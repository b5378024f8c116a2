#include "bench/report_html.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include <fmt/format.h>

#include "bench/report_checks.h"

namespace t0fs::bench {

std::string EscapeXml(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20 && c != '\n' && c != '\t') break;
        out += c;
    }
  }
  return out;
}

namespace {

const char* kPalette[] = {"#4e79a7", "#f28e2b", "#59a14f", "#e15759",
                          "#76b7b2", "#edc948", "#b07aa1", "#9c755f"};
const char* Color(size_t idx) { return kPalette[idx % 8]; }

const char* kStyle = R"(
body { font-family: -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; margin: 24px; color: #222; }
h1 { font-size: 22px; } h2 { font-size: 18px; margin-top: 32px; border-bottom: 1px solid #ddd; }
table { border-collapse: collapse; margin: 8px 0 16px 0; font-size: 13px; }
th, td { border: 1px solid #ddd; padding: 4px 8px; text-align: left; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.better { color: #1a7f37; font-weight: 600; } .worse { color: #c62828; font-weight: 600; }
.grid { display: flex; flex-wrap: wrap; gap: 12px; }
figure { margin: 0; border: 1px solid #eee; padding: 6px; background: #fff; }
figcaption { font-size: 12px; color: #555; }
.legend span { display: inline-block; margin-right: 16px; font-size: 13px; }
.swatch { display: inline-block; width: 12px; height: 12px; margin-right: 4px; vertical-align: middle; }
.note { color: #666; font-size: 12px; }
.warning { border: 2px solid #c62828; background: #fdecea; padding: 8px 12px; margin: 12px 0; }
.warning li { margin: 2px 0; }
)";

struct Key {
  std::string phase;
  std::string figure;
  bool operator<(const Key& o) const {
    return std::tie(phase, figure) < std::tie(o.phase, o.figure);
  }
};

// Summaries of every set, by (phase, figure), skipping sweep per-thread phases.
std::vector<std::map<Key, FigureSummary>> SummariesOf(const std::vector<ResultSet>& sets) {
  std::vector<std::map<Key, FigureSummary>> out;
  for (const auto& set : sets) {
    std::map<Key, FigureSummary> m;
    if (set.kind == "sweep") {
      // A sweep's figures are its curve summaries (peak and plateau).
      for (const char* dir : {"write", "read"}) {
        for (const char* view : {"children_see", "parent_sees"}) {
          std::vector<double> peaks, plateaus;
          for (const auto& run : set.runs) {
            const auto& s = run.extra.value(dir, nlohmann::json::object()).value(view, nlohmann::json::object());
            if (s.contains("peak_bw")) peaks.push_back(s["peak_bw"].get<double>());
            if (s.value("has_plateau", false)) plateaus.push_back(s["plateau_bw"].get<double>());
          }
          std::string label = std::string(view) == "children_see" ? "children see" : "parent sees";
          auto add = [&](const std::string& name, const std::string& what,
                         const std::vector<double>& v) {
            if (v.empty()) return;
            FigureSummary f;
            f.phase = std::string("sweep ") + dir;
            f.figure = {name, Median(v), "B/s", Better::kHigher, what + " (" + label + ")"};
            f.runs = v.size();
            f.cv_pct = CoefficientOfVariation(v);
            f.min = *std::min_element(v.begin(), v.end());
            f.max = *std::max_element(v.begin(), v.end());
            m[{f.phase, name}] = f;
          };
          add(std::string("peak_") + view, "Peak", peaks);
          add(std::string("plateau_") + view, "Plateau", plateaus);
        }
      }
    } else {
      for (auto& s : set.Summarize()) m[{s.phase, s.figure.name}] = s;
    }
    out.push_back(std::move(m));
  }
  return out;
}

// Phase and figure order: as first seen across the sets.
std::vector<Key> OrderedKeys(const std::vector<ResultSet>& sets,
                             const std::vector<std::map<Key, FigureSummary>>& sums) {
  std::vector<Key> keys;
  std::set<Key> seen;
  for (size_t idx = 0; idx < sets.size(); ++idx) {
    std::vector<Key> local;
    if (sets[idx].kind == "sweep") {
      for (const auto& [k, v] : sums[idx]) local.push_back(k);
    } else {
      for (const auto& s : sets[idx].Summarize()) local.push_back({s.phase, s.figure.name});
    }
    for (const auto& k : local) {
      if (seen.insert(k).second) keys.push_back(k);
    }
  }
  // Group by phase, keeping first-seen order of phases.
  std::vector<std::string> phases;
  for (const auto& k : keys) {
    if (std::find(phases.begin(), phases.end(), k.phase) == phases.end()) phases.push_back(k.phase);
  }
  std::vector<Key> grouped;
  for (const auto& ph : phases) {
    for (const auto& k : keys) {
      if (k.phase == ph) grouped.push_back(k);
    }
  }
  return grouped;
}

double NiceMax(double v) {
  if (v <= 0) return 1;
  double p = std::pow(10.0, std::floor(std::log10(v)));
  for (double m : {1.0, 2.0, 2.5, 5.0, 10.0}) {
    if (v <= m * p) return m * p;
  }
  return 10 * p;
}

std::string Truncate(const std::string& s, size_t n) {
  return s.size() <= n ? s : s.substr(0, n - 1) + "…";
}

// One bar per set: median, whisker min..max.
std::string BarChart(const Key& key, const std::vector<ResultSet>& sets,
                     const std::vector<std::map<Key, FigureSummary>>& sums) {
  const int w = 340, h = 210, left = 58, right = 10, top = 30, bottom = 40;
  const FigureSummary* any = nullptr;
  double vmax = 0;
  for (const auto& m : sums) {
    auto it = m.find(key);
    if (it == m.end()) continue;
    any = &it->second;
    vmax = std::max({vmax, it->second.figure.value, it->second.max});
  }
  if (any == nullptr) return "";
  double top_v = NiceMax(vmax * 1.05);
  std::string svg = fmt::format(
      "<svg class=\"figure-chart\" width=\"{}\" "
      "height=\"{}\" viewBox=\"0 0 {} {}\" role=\"img\">",
      w, h, w, h);
  svg += fmt::format("<text x=\"{}\" y=\"16\" font-size=\"13\" font-weight=\"600\">{}</text>",
                     8, EscapeXml(any->figure.label));
  std::string hint = any->figure.better == Better::kHigher  ? "higher is better"
                     : any->figure.better == Better::kLower ? "lower is better"
                                                            : "";
  svg += fmt::format("<text x=\"{}\" y=\"16\" font-size=\"10\" fill=\"#888\" "
                     "text-anchor=\"end\">{}</text>",
                     w - right, hint);
  int plot_h = h - top - bottom, plot_w = w - left - right;
  for (int tick = 0; tick <= 4; ++tick) {
    double v = top_v * tick / 4;
    double y = top + plot_h - plot_h * tick / 4.0;
    svg += fmt::format("<line x1=\"{}\" x2=\"{}\" y1=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#eee\"/>",
                       left, w - right, y, y);
    svg += fmt::format("<text x=\"{}\" y=\"{:.1f}\" font-size=\"9\" text-anchor=\"end\" "
                       "fill=\"#666\">{}</text>",
                       left - 4, y + 3, EscapeXml(FormatValue(v, any->figure.unit)));
  }
  size_t n = sets.size();
  double slot = static_cast<double>(plot_w) / static_cast<double>(n);
  double bar_w = std::min(60.0, slot * 0.6);
  for (size_t idx = 0; idx < n; ++idx) {
    auto it = sums[idx].find(key);
    double cx = left + slot * (static_cast<double>(idx) + 0.5);
    std::string name = EscapeXml(Truncate(sets[idx].label, static_cast<size_t>(slot / 6) + 2));
    svg += fmt::format("<text x=\"{:.1f}\" y=\"{}\" font-size=\"10\" text-anchor=\"middle\">{}"
                       "</text>",
                       cx, h - bottom + 14, name);
    if (it == sums[idx].end()) {
      svg += fmt::format("<text x=\"{:.1f}\" y=\"{}\" font-size=\"10\" text-anchor=\"middle\" "
                         "fill=\"#999\">n/a</text>",
                         cx, top + plot_h - 4);
      continue;
    }
    const FigureSummary& s = it->second;
    auto y_of = [&](double v) { return top + plot_h - plot_h * std::max(0.0, v) / top_v; };
    double y = y_of(s.figure.value);
    svg += fmt::format("<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" "
                       "fill=\"{}\"><title>{}: {}</title></rect>",
                       cx - bar_w / 2, y, bar_w, top + plot_h - y, Color(idx),
                       EscapeXml(sets[idx].label), EscapeXml(FormatValue(s.figure.value, s.figure.unit)));
    if (s.runs > 1) {
      svg += fmt::format("<line x1=\"{:.1f}\" x2=\"{:.1f}\" y1=\"{:.1f}\" y2=\"{:.1f}\" "
                         "stroke=\"#333\"/>",
                         cx, cx, y_of(s.min), y_of(s.max));
    }
    svg += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"10\" text-anchor=\"middle\">"
                       "{}</text>",
                       cx, std::max(static_cast<double>(top) + 8, y - 4),
                       EscapeXml(FormatValue(s.figure.value, s.figure.unit)));
  }
  svg += fmt::format("<line x1=\"{}\" x2=\"{}\" y1=\"{}\" y2=\"{}\" stroke=\"#999\"/>", left,
                     w - right, top + plot_h, top + plot_h);
  svg += "</svg>";
  return "<figure>" + svg + "</figure>";
}

// Latency at p50..p99.99 for each set that has the phase (one line per set).
std::string LatencyChart(const std::string& phase, const std::vector<ResultSet>& sets) {
  const std::vector<double> pcts = {50, 90, 99, 99.9, 99.99};
  std::vector<std::pair<size_t, std::vector<double>>> lines;
  double vmax = 0;
  for (size_t idx = 0; idx < sets.size(); ++idx) {
    if (sets[idx].runs.empty()) continue;
    // Latency of all runs merged (exact).
    Histogram merged;
    for (const auto& run : sets[idx].runs) {
      for (const auto& p : run.phases) {
        if (p.name == phase) merged.Merge(p.latency);
      }
    }
    if (merged.count() == 0) continue;
    std::vector<double> v;
    for (double q : pcts) v.push_back(static_cast<double>(merged.Percentile(q)));
    vmax = std::max(vmax, v.back());
    lines.emplace_back(idx, v);
  }
  if (lines.empty()) return "";
  const int w = 340, h = 210, left = 58, right = 10, top = 30, bottom = 40;
  int plot_h = h - top - bottom, plot_w = w - left - right;
  double top_v = NiceMax(vmax * 1.05);
  std::string svg = fmt::format(
      "<svg class=\"latency-chart\" width=\"{}\" "
      "height=\"{}\" viewBox=\"0 0 {} {}\" role=\"img\">",
      w, h, w, h);
  svg += "<text x=\"8\" y=\"16\" font-size=\"13\" font-weight=\"600\">Latency percentiles</text>";
  for (int tick = 0; tick <= 4; ++tick) {
    double y = top + plot_h - plot_h * tick / 4.0;
    svg += fmt::format("<line x1=\"{}\" x2=\"{}\" y1=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#eee\"/>",
                       left, w - right, y, y);
    svg += fmt::format("<text x=\"{}\" y=\"{:.1f}\" font-size=\"9\" text-anchor=\"end\" "
                       "fill=\"#666\">{}</text>",
                       left - 4, y + 3, EscapeXml(FormatNanos(top_v * tick / 4)));
  }
  auto x_of = [&](size_t i) { return left + plot_w * (static_cast<double>(i) + 0.5) / pcts.size(); };
  for (size_t i = 0; i < pcts.size(); ++i) {
    svg += fmt::format("<text x=\"{:.1f}\" y=\"{}\" font-size=\"10\" text-anchor=\"middle\">p{}"
                       "</text>",
                       x_of(i), h - bottom + 14, pcts[i]);
  }
  for (const auto& [idx, v] : lines) {
    std::string points;
    for (size_t i = 0; i < v.size(); ++i) {
      points += fmt::format("{:.1f},{:.1f} ", x_of(i), top + plot_h - plot_h * v[i] / top_v);
    }
    svg += fmt::format("<polyline fill=\"none\" stroke=\"{}\" stroke-width=\"2\" points=\"{}\"/>",
                       Color(idx), points);
    for (size_t i = 0; i < v.size(); ++i) {
      svg += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3\" fill=\"{}\"><title>{} p{}: "
                         "{}</title></circle>",
                         x_of(i), top + plot_h - plot_h * v[i] / top_v, Color(idx),
                         EscapeXml(sets[idx].label), pcts[i], EscapeXml(FormatNanos(v[i])));
    }
  }
  svg += "</svg>";
  return "<figure>" + svg + "</figure>";
}

// Sweep curves: throughput against threads (log2 axis), 4 series.
std::string SweepChart(size_t set_idx, const ResultSet& set) {
  if (set.runs.empty()) return "";
  const auto& curve = set.runs.front().extra.value("curve", nlohmann::json::array());
  if (curve.empty()) return "";
  struct Series {
    const char* key;
    const char* label;
    const char* color;
    const char* dash;
  };
  const Series series[] = {{"write_children_see", "write, children see", "#e15759", ""},
                           {"write_parent_sees", "write, parent sees", "#e15759", "4,3"},
                           {"read_children_see", "read, children see", "#4e79a7", ""},
                           {"read_parent_sees", "read, parent sees", "#4e79a7", "4,3"}};
  double vmax = 0;
  for (const auto& pt : curve) {
    for (const auto& s : series) vmax = std::max(vmax, pt.value(s.key, 0.0));
  }
  const int w = 560, h = 280, left = 70, right = 160, top = 30, bottom = 40;
  int plot_h = h - top - bottom, plot_w = w - left - right;
  double top_v = NiceMax(vmax * 1.05);
  size_t n = curve.size();
  auto x_of = [&](size_t i) {
    return n == 1 ? left + plot_w / 2.0 : left + plot_w * static_cast<double>(i) / (n - 1);
  };
  std::string svg = fmt::format(
      "<svg class=\"curve-chart\" width=\"{}\" "
      "height=\"{}\" viewBox=\"0 0 {} {}\" role=\"img\">",
      w, h, w, h);
  svg += fmt::format("<text x=\"8\" y=\"16\" font-size=\"13\" font-weight=\"600\">{}: throughput "
                     "by threads</text>",
                     EscapeXml(set.label));
  for (int tick = 0; tick <= 4; ++tick) {
    double y = top + plot_h - plot_h * tick / 4.0;
    svg += fmt::format("<line x1=\"{}\" x2=\"{}\" y1=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#eee\"/>",
                       left, left + plot_w, y, y);
    svg += fmt::format("<text x=\"{}\" y=\"{:.1f}\" font-size=\"9\" text-anchor=\"end\" "
                       "fill=\"#666\">{}</text>",
                       left - 4, y + 3, EscapeXml(FormatBytesPerSec(top_v * tick / 4)));
  }
  for (size_t i = 0; i < n; ++i) {
    svg += fmt::format("<text x=\"{:.1f}\" y=\"{}\" font-size=\"10\" text-anchor=\"middle\">{}"
                       "</text>",
                       x_of(i), h - bottom + 14, curve[i].value("threads", 0));
  }
  svg += fmt::format("<text x=\"{:.1f}\" y=\"{}\" font-size=\"10\" text-anchor=\"middle\" "
                     "fill=\"#666\">threads</text>",
                     left + plot_w / 2.0, h - 6);
  int legend_y = top + 10;
  for (const auto& s : series) {
    std::string points;
    for (size_t i = 0; i < n; ++i) {
      points += fmt::format("{:.1f},{:.1f} ", x_of(i),
                            top + plot_h - plot_h * curve[i].value(s.key, 0.0) / top_v);
    }
    svg += fmt::format("<polyline fill=\"none\" stroke=\"{}\" stroke-width=\"2\" "
                       "stroke-dasharray=\"{}\" points=\"{}\"/>",
                       s.color, *s.dash ? s.dash : "none", points);
    svg += fmt::format("<line x1=\"{}\" x2=\"{}\" y1=\"{}\" y2=\"{}\" stroke=\"{}\" "
                       "stroke-width=\"2\" stroke-dasharray=\"{}\"/>",
                       left + plot_w + 10, left + plot_w + 34, legend_y, legend_y, s.color,
                       *s.dash ? s.dash : "none");
    svg += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"10\">{}</text>", left + plot_w + 38,
                       legend_y + 3, s.label);
    legend_y += 16;
  }
  svg += "</svg>";
  (void)set_idx;
  return "<figure>" + svg + "</figure>";
}

std::string Cell(const std::string& text, bool num = false) {
  return fmt::format("<td{}>{}</td>", num ? " class=\"num\"" : "", EscapeXml(text));
}

}  // namespace

std::string RenderHtmlReport(const std::vector<ResultSet>& sets, const std::string& title) {
  auto sums = SummariesOf(sets);
  auto keys = OrderedKeys(sets, sums);
  std::string html = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"/>";
  html += "<title>" + EscapeXml(title) + "</title><style>" + kStyle + "</style></head><body>\n";
  html += "<h1>" + EscapeXml(title) + "</h1>\n";
  html += "<p class=\"note\">Figures are medians over the runs of each result set (whiskers: "
          "min to max). <b>Last done</b>: until the slowest thread finished; <b>first done</b>: "
          "until the fastest one did (elbencho). Bandwidth in MiB/s (2<sup>20</sup> bytes/s).</p>\n";
  html += "<div class=\"legend\">";
  for (size_t idx = 0; idx < sets.size(); ++idx) {
    html += fmt::format("<span><i class=\"swatch\" style=\"background:{}\"></i>{}</span>",
                        Color(idx), EscapeXml(sets[idx].label));
  }
  html += "</div>\n";

  // What makes these figures suspect, before any figure is shown.
  std::vector<std::string> warnings = ComparisonWarnings(sets);
  if (!warnings.empty()) {
    html += "<div class=\"warning\"><b>Warning: read these figures with care</b><ul>";
    for (const auto& w : warnings) html += "<li>" + EscapeXml(w) + "</li>";
    html += "</ul></div>\n";
  }

  html += "<h2>Result sets</h2>\n<table><tr><th>Label</th><th>Kind</th><th>Workload</th>"
          "<th>Dataset</th><th>Engine</th><th>Page cache</th><th>Host</th><th>Started</th>"
          "<th>Runs</th><th>Ranks</th><th>Command</th></tr>\n";
  for (const auto& set : sets) {
    std::string runs = std::to_string(set.runs.size());
    if (set.stopped_early()) runs += " (stopped early by " + set.stopped_by + ")";
    html += "<tr>" + Cell(set.label) + Cell(set.kind) + Cell(set.workload) +
            Cell(set.params.value("dataset", "")) + Cell(set.params.value("engine", "")) +
            Cell(set.Cache().Describe()) + Cell(set.host) + Cell(set.started) +
            Cell(runs, true) + Cell(std::to_string(set.ranks), true) + Cell(set.command) +
            "</tr>\n";
  }
  html += "</table>\n";

  if (sets.size() >= 2) {
    html += fmt::format("<h2>Comparison against {}</h2>\n", EscapeXml(sets[0].label));
    if (!warnings.empty()) {
      html += "<p class=\"warning\">This comparison is not like for like: see the warning "
              "above.</p>\n";
    }
    html += "<p class=\"note\">Change = value / baseline − 1. Green: an improvement (higher "
            "throughput, lower latency or CPU cost); red: a regression.</p>\n";
    html += "<table><tr><th>Phase</th><th>Figure</th><th>" + EscapeXml(sets[0].label) + "</th>";
    for (size_t idx = 1; idx < sets.size(); ++idx) {
      html += "<th>" + EscapeXml(sets[idx].label) + "</th><th>ratio</th><th>change</th>";
    }
    html += "</tr>\n";
    for (const auto& key : keys) {
      auto base = sums[0].find(key);
      if (base == sums[0].end()) continue;
      const FigureSummary& b = base->second;
      html += "<tr>" + Cell(key.phase) + Cell(b.figure.label) +
              Cell(FormatValue(b.figure.value, b.figure.unit), true);
      for (size_t idx = 1; idx < sets.size(); ++idx) {
        auto it = sums[idx].find(key);
        if (it == sums[idx].end()) {
          html += Cell("") + Cell("") + Cell("");
          continue;
        }
        const FigureSummary& o = it->second;
        html += Cell(FormatValue(o.figure.value, o.figure.unit), true);
        if (b.figure.value == 0) {
          html += Cell("", true) + Cell("", true);
          continue;
        }
        double ratio = o.figure.value / b.figure.value;
        double change = (ratio - 1) * 100;
        bool better = (b.figure.better == Better::kHigher && change > 0) ||
                      (b.figure.better == Better::kLower && change < 0);
        bool worse = (b.figure.better == Better::kHigher && change < 0) ||
                     (b.figure.better == Better::kLower && change > 0);
        const char* cls = std::fabs(change) < 0.05 ? "" : better ? "better" : worse ? "worse" : "";
        html += Cell(fmt::format("{:.2f}x", ratio), true);
        html += fmt::format("<td class=\"num {}\">{:+.1f} %</td>", cls, change);
      }
      html += "</tr>\n";
    }
    html += "</table>\n";
  }

  // Charts, phase by phase.
  std::string phase;
  for (size_t k = 0; k < keys.size(); ++k) {
    if (keys[k].phase != phase) {
      if (!phase.empty()) html += "</div>\n";
      phase = keys[k].phase;
      html += "<h2>" + EscapeXml(phase) + "</h2>\n<div class=\"grid\">";
      html += LatencyChart(phase, sets);
    }
    html += BarChart(keys[k], sets, sums);
  }
  if (!phase.empty()) html += "</div>\n";

  for (size_t idx = 0; idx < sets.size(); ++idx) {
    if (sets[idx].kind != "sweep") continue;
    html += "<h2>Thread sweep: " + EscapeXml(sets[idx].label) + "</h2>\n<div class=\"grid\">";
    html += SweepChart(idx, sets[idx]);
    html += "</div>\n<table><tr><th>threads</th><th>write children see</th><th>write parent "
            "sees</th><th>read children see</th><th>read parent sees</th></tr>\n";
    for (const auto& pt : sets[idx].runs.front().extra.value("curve", nlohmann::json::array())) {
      html += "<tr>" + Cell(std::to_string(pt.value("threads", 0)), true) +
              Cell(FormatBytesPerSec(pt.value("write_children_see", 0.0)), true) +
              Cell(FormatBytesPerSec(pt.value("write_parent_sees", 0.0)), true) +
              Cell(FormatBytesPerSec(pt.value("read_children_see", 0.0)), true) +
              Cell(FormatBytesPerSec(pt.value("read_parent_sees", 0.0)), true) + "</tr>\n";
    }
    html += "</table>\n";
  }
  html += "<p class=\"note\">Generated by t0fs bench report. Self-contained: no scripts, no "
          "external resources.</p>\n</body></html>\n";
  return html;
}

}  // namespace t0fs::bench
