// `t0fs meta`: run the metadata service in the foreground; `t0fs meta
// migrate`: copy a cluster's metadata to another store and verify it.
#include <fmt/format.h>

#include <cstdio>
#include <optional>

#include "cli/commands.h"
#include "cli/daemon_command.h"
#include "common/lock_file.h"
#include "common/url_redact.h"
#include "meta/meta_service.h"
#include "meta/store/copy/engine_copy.h"
#include "meta/store/store_url.h"

namespace t0fs::cli {
namespace {

struct MigrateArgs {
  std::string from;
  std::string to;
};

// A store in use by a meta server is locked (LockStore): the copy must not
// read a store that changes under it.
Result<std::optional<LockFile>> LockOrSayWhy(const meta::StoreLocation& location,
                                             const std::string& url) {
  auto lock = meta::LockStore(location);
  if (!lock.ok()) {
    return Status(StatusCode::kBusy, fmt::format("{} is in use by a running meta server ({}); stop "
                                                 "it first",
                                                 RedactUrlPassword(url), lock.status().message()));
  }
  return lock;
}

// The namespace check of one store; its problem lines (below-objective
// lines are not problems).
Result<size_t> CheckStore(const meta::StoreLocation& location, const std::string& url) {
  ASSIGN_OR_RETURN(std::unique_ptr<meta::MetaStore> store, meta::OpenStore(location));
  ASSIGN_OR_RETURN(std::vector<std::string> lines, store->Check());
  size_t problems = 0;
  for (const std::string& line : lines) {
    if (line.starts_with(meta::MetaStore::kBelowObjective)) continue;
    if (++problems <= 10) std::fprintf(stderr, "  %s: %s\n", RedactUrlPassword(url).c_str(), line.c_str());
  }
  return problems;
}

Status Migrate(const MigrateArgs& args) {
  ASSIGN_OR_RETURN(meta::StoreLocation from, meta::ParseStoreUrl(args.from));
  ASSIGN_OR_RETURN(meta::StoreLocation to, meta::ParseStoreUrl(args.to));
  if (from.engine == to.engine && from.path == to.path) {
    return Status(StatusCode::kInvalidArgument, "--from and --to name the same store");
  }
  ASSIGN_OR_RETURN(std::optional<LockFile> from_lock, LockOrSayWhy(from, args.from));
  ASSIGN_OR_RETURN(std::optional<LockFile> to_lock, LockOrSayWhy(to, args.to));
  const std::string from_text = RedactUrlPassword(args.from);
  const std::string to_text = RedactUrlPassword(args.to);
  std::printf("checking %s\n", from_text.c_str());
  ASSIGN_OR_RETURN(size_t before, CheckStore(from, args.from));
  if (before > 0) {
    return Status(StatusCode::kCorruption,
                  fmt::format("{} has {} problem(s) (above); repair it (t0fs fsck) before migrating",
                              from_text, before));
  }
  {
    ASSIGN_OR_RETURN(std::unique_ptr<meta::Engine> source, meta::OpenEngine(from));
    ASSIGN_OR_RETURN(std::unique_ptr<meta::Engine> target, meta::OpenEngine(to));
    std::printf("copying %s -> %s\n", from_text.c_str(), to_text.c_str());
    std::fflush(stdout);
    meta::CopyOptions copts;
    copts.progress = [](uint64_t rows) {
      std::fprintf(stderr, "\r  %llu rows copied", static_cast<unsigned long long>(rows));
    };
    ASSIGN_OR_RETURN(meta::CopyReport report, meta::CopyStore(*source, *target, copts));
    std::fprintf(stderr, "\n");
    for (const meta::KindCount& kind : report.kinds) {
      std::printf("  %-10s %llu\n", kind.kind.c_str(), static_cast<unsigned long long>(kind.rows));
    }
    std::printf("copied %llu rows; every row kind compared equal\n",
                static_cast<unsigned long long>(report.rows));
  }
  std::printf("checking %s\n", to_text.c_str());
  ASSIGN_OR_RETURN(size_t after, CheckStore(to, args.to));
  if (after > 0) {
    return Status(StatusCode::kCorruption,
                  fmt::format("{} has {} problem(s) after the copy (above)", to_text, after));
  }
  std::printf("done: start the meta servers with --store %s\n", to_text.c_str());
  return Status::Ok();
}

void RegisterMigrate(CLI::App* meta_cmd, int* exit_code) {
  auto* cmd = meta_cmd->add_subcommand(
      "migrate",
      "Copy a cluster's metadata to a new store (e.g. SQLite to PostgreSQL) and verify it: every "
      "row compared, both stores checked. Stop the meta servers first.");
  auto args = std::make_shared<MigrateArgs>();
  cmd->add_option("--from", args->from, "the store in use, by URL (sqlite:///var/lib/t0fs/meta.db)")
      ->required();
  cmd->add_option("--to", args->to,
                  "the new, empty store, by URL (postgresql://t0fs@db.example:5432/t0fs)")
      ->required();
  cmd->footer(
      "\nExample:\n  t0fs meta migrate --from sqlite:///var/lib/t0fs/meta.db \\\n"
      "    --to postgresql://t0fs@db.example:5432/t0fs\n");
  cmd->callback([args, exit_code] {
    InitLogging("meta", "warn");
    Status st = Migrate(*args);
    *exit_code = st.ok() ? 0 : Fail("meta migrate", st);
  });
}

}  // namespace

void RegisterMeta(CLI::App& app, int* exit_code) {
  CLI::App* cmd = RegisterDaemon<meta::MetaService, meta::MetaConfig>(
      app, exit_code, "meta", "Run the metadata service (namespace, layouts, cluster)");
  RegisterMigrate(cmd, exit_code);
}

}  // namespace t0fs::cli
