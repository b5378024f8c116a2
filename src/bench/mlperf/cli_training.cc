// `t0fs bench mlperf training datasize|datagen|run|search`: the commands,
// their options and help. The commands themselves: cli_training.h.
#include <memory>
#include <string>

#include <CLI/CLI.hpp>

#include "bench/cli_common.h"
#include "bench/mlperf/cli_mlperf.h"
#include "bench/mlperf/cli_training.h"

namespace t0fs::bench::mlperf {

void RegisterTraining(CLI::App* mlperf, int* exit_code) {
  auto* training = AddBenchSubcommand(
      mlperf, "training",
      "Training: datasize (dataset sizing), datagen (write the dataset), run (emulated "
      "accelerators), search (the most accelerators that pass)");
  training->require_subcommand(1);
  std::string table = "Workloads: " + WorkloadTableHelp();

  auto o_size = std::make_shared<training_cli::TrainingCli>();
  auto* size = AddBenchSubcommand(training, "datasize",
                                  "Files needed: >= 5 x client RAM and >= 500 steps per epoch; "
                                  "prints the datagen command");
  training_cli::AddWorkloadOptions(size, o_size.get(), false);
  size->add_option("--data-dir", o_size->data_dir, "Put this directory in the printed command");
  size->footer(table + "\nExample:\n  t0fs bench mlperf training datasize -w unet3d -g h100 -n 8 "
                       "--client-host-memory-gb 128");
  SetCallback(size, exit_code, [o_size] { return training_cli::Datasize(*o_size); });

  auto o_gen = std::make_shared<training_cli::TrainingCli>();
  auto* gen = AddBenchSubcommand(training, "datagen",
                                 "Write the dataset: reference names, sizes and formats (npz, "
                                 "tfrecord, raw), random incompressible content");
  training_cli::AddWorkloadOptions(gen, o_gen.get(), true);
  gen->add_option("--subfolders", o_gen->subfolders,
                  "num_subfolders_train (default: files / 10,000 above 10,000 files, else none)");
  gen->add_option("-t,--threads", o_gen->threads, "Writer threads per process")
      ->check(CLI::Range(1, 1024));
  AddIoOptions(gen, &o_gen->io, "4M");
  AddOutputOptions(gen, &o_gen->out);
  gen->footer(table + "\nExample:\n  t0fs bench mlperf training datagen -w unet3d -g h100 "
                      "--num-files 7200 --data-dir /mnt/t0/mlperf");
  SetCallback(gen, exit_code, [o_gen] { return training_cli::Datagen(*o_gen); });

  auto add_run_options = [](CLI::App* cmd, training_cli::TrainingCli* o, uint32_t runs,
                            uint32_t warmup) {
    o->runs = runs;
    o->warmup = warmup;
    cmd->add_option("--runs", o->runs, "Measured runs (the rules: 5; every one must pass)")
        ->check(CLI::Range(1, 100));
    cmd->add_option("--warmup-runs", o->warmup, "Warm-up runs before them (excluded)")
        ->check(CLI::Range(0, 100));
    cmd->add_option("--test-read-delay", o->test_read_delay,
                    "TEST HOOK: sleep this long after every file read (emulates slow storage)")
        ->group("Test hooks");
    AddIoOptions(cmd, &o->io, "4M");
    AddOutputOptions(cmd, &o->out);
  };
  auto o_run = std::make_shared<training_cli::TrainingCli>();
  auto* run = AddBenchSubcommand(training, "run",
                                 "Run the emulated accelerators: AU, throughput, pass/fail per "
                                 "run, summary.json per run");
  training_cli::AddWorkloadOptions(run, o_run.get(), true);
  add_run_options(run, o_run.get(), 5, 1);
  run->footer(table + "\nExample:\n  t0fs bench mlperf training run -w unet3d -g h100 -n 4 "
                      "--data-dir /mnt/t0/mlperf --json unet3d.json");
  SetCallback(run, exit_code, [o_run] { return training_cli::Run(*o_run); });

  auto o_search = std::make_shared<training_cli::TrainingCli>();
  auto* search = AddBenchSubcommand(training, "search",
                                    "The largest number of accelerators that passes (doubling, "
                                    "then bisection over runs)");
  training_cli::AddWorkloadOptions(search, o_search.get(), true);
  search->add_option("--min", o_search->min_acc, "Smallest accelerator count")
      ->check(CLI::Range(1, 100000));
  search->add_option("--max", o_search->max_acc, "Largest accelerator count")
      ->check(CLI::Range(1, 100000));
  add_run_options(search, o_search.get(), 1, 0);
  search->footer(table + "\nExample:\n  t0fs bench mlperf training search -w unet3d -g h100 "
                         "--num-files 64 --data-dir /mnt/t0/mlperf --max 16");
  SetCallback(search, exit_code, [o_search] { return training_cli::Search(*o_search); });
}

}  // namespace t0fs::bench::mlperf
