// `t0fs fsck`: namespace, layout and redundancy check of a running cluster
// (AdminClient::Fsck in t0fs/admin.h says what it checks and what counts as
// a problem). Exit 0 when clean, 1 on problems or data below its objective,
// 2 when the cluster cannot be asked. With --remove-orphans, the chunk files
// found in no layout are queued for removal by their nodes
// (AdminClient::QueueOrphans); the check's answer still lists them.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cli/admin.h"
#include "cli/command_util.h"
#include "cli/commands.h"
#include "cli/signals.h"
#include "t0fs/admin.h"

namespace t0fs::cli {
namespace {

using client::FsckReport;

void Print(const FsckReport& r, bool json) {
  if (json) {
    nlohmann::json j = {{"clean", r.clean()},
                        {"problems", r.problems},
                        {"below_objective", r.below_objective},
                        {"warnings", r.warnings},
                        {"notes", r.notes},
                        {"inodes", r.inodes},
                        {"chunks", r.meta_chunks},
                        {"chunk_files", r.chunk_files},
                        {"nodes_checked", r.nodes_checked},
                        {"nodes_unchecked", r.nodes_unchecked}};
    fmt::print("{}\n", j.dump(2));
    return;
  }
  fmt::print("namespace: {} inodes, {} chunks in layouts\n", r.inodes, r.meta_chunks);
  fmt::print("chunk files: {} on {} node(s)\n", r.chunk_files, r.nodes_checked);
  for (const auto& n : r.notes) fmt::print("note: {}\n", n);
  for (const auto& w : r.warnings) fmt::print("warning: {}\n", w);
  for (const auto& p : r.problems) fmt::print("{}\n", p);
  for (const auto& b : r.below_objective) fmt::print("below objective: {}\n", b);
  // Clean says nothing of the chunk files of nodes not listed.
  const std::string unchecked =
      r.nodes_unchecked == 0
          ? std::string()
          : fmt::format(" ({} node(s) not listed: their chunk files were not checked)",
                        r.nodes_unchecked);
  if (r.clean()) {
    fmt::print("fsck: clean{}\n", unchecked);
  } else {
    fmt::print("fsck: {} problem(s), {} chunk(s) below their objective{}\n", r.problems.size(),
               r.below_objective.size(), unchecked);
  }
}

}  // namespace

void RegisterFsck(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand(
      "fsck",
      "Check namespace, layouts and redundancy (exit 0 when clean, 1 on problems or "
      "data below its objective)");
  auto opts = std::make_shared<AdminOptions>();
  opts->Register(cmd, true, "2m");  // a check of a large namespace takes long
  auto remove_orphans = std::make_shared<bool>(false);
  cmd->add_flag("--remove-orphans", *remove_orphans,
                "Have the chunk files found in no layout (orphans: of data deleted or truncated "
                "away while their node was not told) removed by their nodes, at their next "
                "heartbeat; an erasure-coded cell of a chunk that lives on is left");
  cmd->callback([opts, remove_orphans, exit_code] {
    ExitOnStopSignal();
    auto target = ConnectAdmin(*opts);
    if (!target.ok()) {
      *exit_code = Fail("fsck", target.status()) + 1;
      return;
    }
    auto report = target->admin->Fsck();
    if (!report.ok()) {
      *exit_code = Fail("fsck", report.status()) + 1;
      return;
    }
    if (*remove_orphans && !report->orphans.empty()) {
      uint64_t found = 0, queued = 0;
      for (const auto& [node, files] : report->orphans) {
        found += files.size();
        auto taken = target->admin->QueueOrphans(node, files);
        if (!taken.ok()) {
          *exit_code = Fail("fsck --remove-orphans", taken.status()) + 1;
          return;
        }
        queued += *taken;
      }
      report->notes.push_back(fmt::format(
          "{} of {} orphan chunk file(s) queued for removal: their nodes remove them at their "
          "next heartbeat (run fsck again to see them gone){}",
          queued, found,
          queued == found ? ""
                          : "; the others are cells of chunks that live on, placed again "
                            "meanwhile, or queued already"));
    }
    Print(*report, opts->json);
    *exit_code = report->clean() ? 0 : 1;
  });
}

}  // namespace t0fs::cli
