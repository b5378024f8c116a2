// `t0fs bench report RESULT... -o report.html`
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "bench/cli_common.h"
#include "bench/report_checks.h"
#include "bench/report_html.h"

namespace t0fs::bench {

void RegisterReport(CLI::App* bench, int* exit_code) {
  auto* cmd = AddBenchSubcommand(
      bench, "report",
      "One self-contained HTML page (inline SVG charts) from result files; with two or more, a "
      "comparison table (each set against the first)");
  auto inputs = std::make_shared<std::vector<std::string>>();
  auto output = std::make_shared<std::string>();
  auto title = std::make_shared<std::string>("t0fs bench report");
  cmd->add_option("RESULT", *inputs, "Result files written with --json (the first is the "
                                     "baseline of the comparison)")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("-o,--output", *output, "HTML file to write")->required();
  cmd->add_option("--title", *title, "Page title");
  cmd->footer("Example:\n  t0fs bench report raw.json t0fs.json -o report.html");
  SetCallback(cmd, exit_code, [inputs, output, title] {
    std::vector<ResultSet> sets;
    for (const auto& path : *inputs) {
      auto set = LoadResultSet(path);
      if (!set.ok()) return ReportError(set.status());
      sets.push_back(std::move(set).value());
    }
    std::string html = RenderHtmlReport(sets, *title);
    Status st = WriteFileAtomic(*output, html);
    if (!st.ok()) return ReportError(st);
    std::fprintf(stdout, "wrote %s (%zu result set%s)\n", output->c_str(), sets.size(),
                 sets.size() == 1 ? "" : "s");
    for (const std::string& warning : ComparisonWarnings(sets)) {
      std::fprintf(stderr, "t0fs bench report: warning: %s\n", warning.c_str());
    }
    return 0;
  });
}

}  // namespace t0fs::bench
