#include <gtest/gtest.h>

#include <CLI/CLI.hpp>

#include "bench/bench_cli.h"
#include "bench/cli_options.h"

namespace t0fs::bench {
namespace {

template <typename Opts, typename Add>
bool Parse(Opts* opts, Add add, std::vector<std::string> args) {
  CLI::App app("t");
  add(&app, opts);
  std::reverse(args.begin(), args.end());
  try {
    app.parse(args);
  } catch (const CLI::ParseError&) {
    return false;
  }
  return true;
}

TEST(Cli, IoDefaultsAndParsing) {
  IoCliOptions o;
  ASSERT_TRUE(Parse(&o, AddIoOptions,
                    {"/tmp", "--rw", "randread", "--bs", "4K", "-t", "4", "--iodepth", "32",
                     "--engine", "io_uring", "--direct", "--runtime", "30s", "--ramp", "500ms",
                     "--split", "shared", "--size", "2G"}));
  auto spec = ToIoSpec(o, false, false);
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  EXPECT_EQ(spec->rw, RwMode::kRandRead);
  EXPECT_EQ(spec->block, 4096u);
  EXPECT_EQ(spec->threads, 4u);
  EXPECT_EQ(spec->iodepth, 32u);
  EXPECT_EQ(spec->engine.kind, EngineKind::kUring);
  EXPECT_TRUE(spec->direct);
  EXPECT_DOUBLE_EQ(spec->runtime_s, 30);
  EXPECT_DOUBLE_EQ(spec->ramp_s, 0.5);
  EXPECT_EQ(spec->split, Split::kShared);
  EXPECT_EQ(spec->size, uint64_t{2} << 30);

  IoCliOptions d;
  ASSERT_TRUE(Parse(&d, AddIoOptions, {"/tmp"}));
  auto def = ToIoSpec(d, false, false);
  ASSERT_TRUE(def.ok());
  EXPECT_EQ(def->rw, RwMode::kRead);
  EXPECT_EQ(def->block, uint64_t{1} << 20);
  EXPECT_EQ(def->split, Split::kPerThread);
  EXPECT_EQ(def->engine.kind, EngineKind::kPsync);
}

TEST(Cli, IoRejectsBadArguments) {
  IoCliOptions o;
  EXPECT_FALSE(Parse(&o, AddIoOptions, {"/tmp", "--rw", "sideways"}));
  EXPECT_FALSE(Parse(&o, AddIoOptions, {"/tmp", "--threads", "0"}));
  EXPECT_FALSE(Parse(&o, AddIoOptions, {"--bs", "4K"}));  // PATH missing
  auto expect_error = [](std::vector<std::string> args, const std::string& text) {
    IoCliOptions opts;
    ASSERT_TRUE(Parse(&opts, AddIoOptions, args));
    auto spec = ToIoSpec(opts, false, false);
    ASSERT_FALSE(spec.ok());
    EXPECT_NE(spec.status().message().find(text), std::string::npos) << spec.status().message();
  };
  expect_error({"/tmp", "--bs", "4Q"}, "--bs");
  expect_error({"/tmp", "--size", "1K", "--bs", "4K"}, "smaller than --bs");
  expect_error({"/tmp", "--direct", "--bs", "1000"}, "multiple of 512");
  expect_error({"/tmp", "--ramp", "5s"}, "--ramp needs");
  expect_error({"/tmp", "--runtime", "soon"}, "--runtime");
}

TEST(Cli, AiPresetsFollowTheSpec) {
  AiCliOptions o;
  ASSERT_TRUE(Parse(&o, AddAiOptions, {"/tmp", "--pattern", "all", "--size", "8G"}));
  auto specs = ToAiSpecs(o, false, false);
  ASSERT_TRUE(specs.ok()) << specs.status().ToString();
  ASSERT_EQ(specs->size(), 4u);
  const IoSpec& rs = (*specs)[0];
  EXPECT_EQ(rs.rw, RwMode::kRandRead);
  EXPECT_EQ(rs.block, 128u << 10);
  EXPECT_EQ(rs.threads, 64u);
  EXPECT_EQ(rs.iodepth, 4u);
  EXPECT_EQ(rs.nrfiles, 256u);
  EXPECT_TRUE(rs.direct);
  EXPECT_DOUBLE_EQ(rs.runtime_s, 60);
  const IoSpec& ml = (*specs)[2];
  EXPECT_EQ(ml.block, 16u << 20);
  EXPECT_EQ(ml.split, Split::kShared);
  EXPECT_EQ(ml.layout, FileLayout::kSharedFiles);
  const IoSpec& ck = (*specs)[3];
  EXPECT_EQ(ck.rw, RwMode::kWrite);
  EXPECT_TRUE(ck.end_fsync);
  EXPECT_EQ(ck.phase_prefix, "checkpoint-save ");

  AiCliOptions small;
  ASSERT_TRUE(Parse(&small, AddAiOptions,
                    {"/tmp", "-p", "model-load", "--size", "8M", "-t", "2", "--bs", "1M",
                     "--buffered"}));
  auto one = ToAiSpecs(small, false, false);
  ASSERT_TRUE(one.ok());
  EXPECT_EQ((*one)[0].threads, 2u);
  EXPECT_FALSE((*one)[0].direct);
  AiCliOptions bad;
  EXPECT_FALSE(Parse(&bad, AddAiOptions, {"/tmp", "--pattern", "inference"}));
}

TEST(Cli, AiSizesAreCheckedForEveryPatternFirst) {
  AiCliOptions o;
  // 64 MiB fits random-sampling (32 MiB) but not sharded-training (32
  // threads x 64 files x 1 MiB) nor the two 32-thread 16 MiB patterns.
  ASSERT_TRUE(Parse(&o, AddAiOptions, {"/tmp", "--pattern", "all", "--size", "64M"}));
  auto specs = ToAiSpecs(o, false, false);
  ASSERT_FALSE(specs.ok());
  const std::string& msg = specs.status().message();
  EXPECT_NE(msg.find("sharded-training needs 2 GiB"), std::string::npos) << msg;
  EXPECT_NE(msg.find("model-load needs 512 MiB"), std::string::npos) << msg;
  EXPECT_EQ(msg.find("random-sampling"), std::string::npos) << msg;
  EXPECT_NE(msg.find("smallest valid size is --size 2G"), std::string::npos) << msg;
  // Two MPI ranks share the threads' files: twice the dataset.
  auto ranked = ToAiSpecs(o, false, false, 2);
  ASSERT_FALSE(ranked.ok());
  EXPECT_NE(ranked.status().message().find("--size 4G"), std::string::npos);
  // One pattern: its own smallest size, named with the pattern.
  AiCliOptions one;
  ASSERT_TRUE(Parse(&one, AddAiOptions, {"/tmp", "-p", "model-load", "--size", "8M"}));
  auto ml = ToAiSpecs(one, false, false);
  ASSERT_FALSE(ml.ok());
  EXPECT_NE(ml.status().message().find("model-load: "), std::string::npos);
  EXPECT_NE(ml.status().message().find("--size 512M"), std::string::npos) << ml.status().message();
}

TEST(Cli, DropCachesOption) {
  IoCliOptions o;
  ASSERT_TRUE(Parse(&o, AddIoOptions, {"/tmp", "--drop-caches", "sysctl"}));
  EXPECT_EQ(ToIoSpec(o, false, false)->drop, CacheDropMode::kSysctl);
  IoCliOptions d;
  ASSERT_TRUE(Parse(&d, AddIoOptions, {"/tmp"}));
  EXPECT_EQ(ToIoSpec(d, false, false)->drop, CacheDropMode::kAuto);
  IoCliOptions n;
  ASSERT_TRUE(Parse(&n, AddIoOptions, {"/tmp", "--no-invalidate"}));
  EXPECT_EQ(ToIoSpec(n, false, false)->drop, CacheDropMode::kNone);
  IoCliOptions bad;
  EXPECT_FALSE(Parse(&bad, AddIoOptions, {"/tmp", "--drop-caches", "sometimes"}));
  SweepCliOptions s;
  ASSERT_TRUE(Parse(&s, AddSweepOptions,
                    {"/tmp", "--size", "64M", "--record", "1M", "--drop-caches", "fadvise"}));
  auto sweep = ToSweepSpec(s, false, false);
  ASSERT_TRUE(sweep.ok()) << sweep.status().ToString();
  EXPECT_EQ(sweep->drop, CacheDropMode::kFadvise);
}

TEST(Cli, SweepAndMeta) {
  SweepCliOptions s;
  ASSERT_TRUE(Parse(&s, AddSweepOptions, {"/tmp", "--size", "64M", "--record", "1M",
                                          "--max-threads", "4"}));
  auto sweep = ToSweepSpec(s, false, false);
  ASSERT_TRUE(sweep.ok()) << sweep.status().ToString();
  EXPECT_EQ(sweep->threads, (std::vector<uint32_t>{1, 2, 4}));
  EXPECT_TRUE(sweep->stonewall);
  MetaCliOptions m;
  ASSERT_TRUE(Parse(&m, AddMetaOptions, {"/tmp", "-n", "10", "-F", "-D"}));
  EXPECT_FALSE(ToMetaSpec(m, false, false).ok());
  MetaCliOptions dflt;
  ASSERT_TRUE(Parse(&dflt, AddMetaOptions, {"/tmp"}));
  auto with = ToMetaSpec(dflt, false, false);
  ASSERT_TRUE(with.ok()) << with.status().ToString();
  EXPECT_TRUE(with->list);
  EXPECT_TRUE(with->rename);
  MetaCliOptions plain;
  ASSERT_TRUE(Parse(&plain, AddMetaOptions, {"/tmp", "--no-list", "--no-rename"}));
  auto without = ToMetaSpec(plain, false, false);
  ASSERT_TRUE(without.ok()) << without.status().ToString();
  EXPECT_FALSE(without->list);
  EXPECT_FALSE(without->rename);
}

TEST(Cli, EverySubcommandHasHelpWithDefaults) {
  CLI::App app("t0fs");
  int code = 0;
  RegisterBenchCommand(app, &code);
  CLI::App* bench = app.get_subcommand("bench");
  for (const char* name : {"io", "ai", "sweep", "meta", "report"}) {
    std::string help = bench->get_subcommand(name)->help();
    EXPECT_NE(help.find("--json"), name == std::string("report") ? std::string::npos : 0) << name;
    if (std::string(name) == "io") {
      EXPECT_NE(help.find("1M"), std::string::npos) << help;  // --bs default shown
      EXPECT_NE(help.find("per-thread"), std::string::npos);
    }
  }
}

}  // namespace
}  // namespace t0fs::bench
