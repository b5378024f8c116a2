#include "bench/meta_workload.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "bench/test_util.h"

namespace t0fs::bench {
namespace {

std::vector<std::string> PhaseNames(const RunResult& run) {
  std::vector<std::string> names;
  for (const PhaseResult& p : run.phases) names.push_back(p.name);
  return names;
}

const PhaseResult& Find(const RunResult& run, const std::string& name) {
  for (const PhaseResult& p : run.phases) {
    if (p.name == name) return p;
  }
  ADD_FAILURE() << "no phase " << name;
  return run.phases.front();
}

TEST(Meta, ListAndRenameRunByDefault) {
  TempDir dir;
  MetaSpec spec;
  spec.path = dir.path();
  spec.threads = 2;
  spec.items = 20;
  auto run = RunMeta(spec, WorldComm());
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  EXPECT_EQ(PhaseNames(*run),
            (std::vector<std::string>{"dir-create", "dir-stat", "dir-remove", "file-create",
                                      "dir-list", "file-stat", "file-rename", "file-remove"}));
  // file-remove removes the renamed names: it fails unless every rename happened.
  for (const PhaseResult& p : run->phases) EXPECT_EQ(p.last_done.ops, 40u) << p.name;
  EXPECT_EQ(Find(*run, "dir-list").workers, 2u);  // each thread lists its own directory
  EXPECT_TRUE(std::filesystem::is_empty(dir.path())) << "files left behind";
}

TEST(Meta, SharedDirectoryIsListedOnceWhole) {
  TempDir dir;
  MetaSpec spec;
  spec.path = dir.path();
  spec.threads = 3;
  spec.items = 10;
  spec.unique_dirs = false;
  spec.dirs = false;
  auto run = RunMeta(spec, WorldComm());
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  EXPECT_EQ(PhaseNames(*run), (std::vector<std::string>{"file-create", "dir-list", "file-stat",
                                                        "file-rename", "file-remove"}));
  const PhaseResult& list = Find(*run, "dir-list");
  EXPECT_EQ(list.last_done.ops, 30u);  // every thread's files, by one lister
  EXPECT_EQ(list.workers, 1u);
  EXPECT_EQ(list.latency.count(), 30u);
  EXPECT_GT(list.first_done.elapsed_s, 0.0);  // the lister, not an idle thread
  EXPECT_EQ(Find(*run, "file-rename").last_done.ops, 30u);
  EXPECT_TRUE(std::filesystem::is_empty(dir.path())) << "files left behind";
}

TEST(Meta, ListAndRenameCanBeLeftOut) {
  TempDir dir;
  MetaSpec spec;
  spec.path = dir.path();
  spec.items = 5;
  spec.dirs = false;
  spec.list = false;
  spec.rename = false;
  spec.write_bytes = 100;
  auto run = RunMeta(spec, WorldComm());
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  EXPECT_EQ(PhaseNames(*run),
            (std::vector<std::string>{"file-create", "file-stat", "file-read", "file-remove"}));
  EXPECT_TRUE(std::filesystem::is_empty(dir.path())) << "files left behind";
}

}  // namespace
}  // namespace t0fs::bench
