// t0fs_fsx: a seeded random sequence of file operations applied to FILE and
// to an in-memory model, compared after every step (fsx-style). A pure
// POSIX client: it runs on any file system. README.md beside this file.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <map>

#include "config.h"
#include "runner.h"

namespace {

using t0fs::fsx::CheckMode;
using t0fs::fsx::Config;
using t0fs::fsx::FallocPolicy;
using t0fs::fsx::IoMode;
using t0fs::fsx::OpKind;

uint64_t TimeSeed() {
  auto now = std::chrono::system_clock::now().time_since_epoch();
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(now).count()) %
         1000000000;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "t0fs_fsx: random file operations on FILE, checked against a model after every step"};
  Config config;
  config.seed = TimeSeed();
  std::string check;
  app.add_option("file", config.path, "the file to test (created or truncated)")->required();
  app.add_option("--seed", config.seed, "random seed (default: from the clock; always printed)");
  app.add_option("--ops", config.ops, "number of operations")->default_val(config.ops);
  app.add_option("--mode", config.mode, "I/O mode")
      ->transform(
          CLI::CheckedTransformer(std::map<std::string, IoMode>{{"buffered", IoMode::kBuffered},
                                                                {"nommap", IoMode::kNoMmap},
                                                                {"direct", IoMode::kDirect},
                                                                {"uring", IoMode::kUring}}))
      ->default_str("buffered");
  app.add_option("--max-size", config.max_size, "largest file size the ops make (bytes)")
      ->default_val(config.max_size)
      ->check(CLI::Range(uint64_t{4096}, uint64_t{1} << 40));
  app.add_option("--max-op-len", config.max_op_len, "longest single I/O, copy or fallocate (bytes)")
      ->default_val(config.max_op_len)
      ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 30));
  app.add_option("--check", check,
                 "full: the whole file after every step (default up to 1 MiB max-size); range: "
                 "touched ranges + one random range, whole file every 1000 steps and at the end")
      ->check(CLI::IsMember({"full", "range"}));
  app.add_option("--fallocate-modes", config.falloc,
                 "auto: a mode answering EOPNOTSUPP is reported once and skipped; all: "
                 "EOPNOTSUPP fails; basic: modes 0 and KEEP_SIZE only")
      ->transform(CLI::CheckedTransformer(
          std::map<std::string, FallocPolicy>{{"auto", FallocPolicy::kAuto},
                                              {"all", FallocPolicy::kAll},
                                              {"basic", FallocPolicy::kBasic}}))
      ->default_str("auto");
  app.add_flag("--log", config.log, "print every operation as it runs");
  app.add_option("--replay-to", config.replay_to, "stop after this step (replay and bisect)");
  app.add_flag("--quiet", config.quiet, "no progress lines");
  std::vector<std::string> without;
  app.add_option("--without", without,
                 "op kinds never to generate, e.g. copy_range,rewrite (changes the sequence)")
      ->delimiter(',');
  CLI11_PARSE(app, argc, argv);

  for (const std::string& name : without) {
    bool known = false;
    for (size_t kind = 0; kind < static_cast<size_t>(OpKind::kCount); ++kind) {
      if (name == t0fs::fsx::KindName(static_cast<OpKind>(kind))) {
        config.without.insert(static_cast<OpKind>(kind));
        known = true;
      }
    }
    if (!known) {
      fmt::print(stderr, "--without: unknown op kind '{}'\n", name);
      return 2;
    }
  }
  if (config.mode == IoMode::kDirect) config.max_size -= config.max_size % t0fs::fsx::kDirectAlign;
  config.max_op_len = std::min(config.max_op_len, config.max_size);
  if (check.empty()) {
    config.check = config.max_size <= (uint64_t{1} << 20) ? CheckMode::kFull : CheckMode::kRange;
  } else {
    config.check = check == "full" ? CheckMode::kFull : CheckMode::kRange;
  }
  return t0fs::fsx::Runner(std::move(config)).Run();
}
