// What the training commands share (cli_training.h): the workload options,
// resolving them to a workload and sizing, the header, the run spec, one run.
#include <cstdio>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "bench/comm.h"
#include "bench/mlperf/cli_training.h"
#include "bench/mlperf/dataset_layout.h"
#include "bench/mlperf/training_output.h"
#include "bench/option_values.h"
#include "bench/progress.h"

namespace t0fs::bench::mlperf::training_cli {

void AddWorkloadOptions(CLI::App* cmd, TrainingCli* o, bool data_dir) {
  cmd->add_option("-w,--workload", o->workload, "unet3d, resnet50, cosmoflow or retinanet")
      ->required()
      ->check(CLI::IsMember({"unet3d", "resnet50", "cosmoflow", "retinanet"}));
  cmd->add_option("-g,--accelerator", o->accelerator, "Emulated accelerator: a100, h100, b200, mi355")
      ->required()
      ->check(CLI::IsMember({"a100", "h100", "b200", "mi355"}));
  cmd->add_option("-n,--accelerators", o->accelerators,
                  "Emulated accelerators (ranks) in total (datasize: the most you will run)")
      ->check(CLI::Range(1, 100000));
  if (data_dir) {
    cmd->add_option("--data-dir", o->data_dir, "Dataset directory (files in DIR/<workload>/train)")
        ->required();
  }
  cmd->add_option("--client-host-memory-gb", o->host_memory_gb,
                  "RAM per client host in GiB (default: MemTotal of /proc/meminfo)");
  cmd->add_option("--num-client-hosts", o->hosts, "Client hosts (default: MPI processes, or 1)");
  cmd->add_option("--edition", o->edition, "MLPerf Storage edition of the formulas: 1.0, 2.0, 3.0")
      ->check(CLI::IsMember({"1.0", "2.0", "3.0", "1", "2", "3"}));
  auto* g = "Workload parameters (changing them makes an OPEN/whatif run)";
  cmd->add_option("--num-files", o->num_files,
                  "Files (dataset.num_files_train; default: what datasize requires)")
      ->group(g);
  cmd->add_option("--record-length", o->record_length, "record_length_bytes")->group(g);
  cmd->add_option("--record-length-stdev", o->record_length_stdev, "record_length_bytes_stdev")
      ->group(g);
  cmd->add_option("--samples-per-file", o->samples_per_file, "num_samples_per_file")->group(g);
  cmd->add_option("--batch-size", o->batch_size, "batch_size")->group(g);
  cmd->add_option("--read-threads", o->read_threads, "reader.read_threads (CLOSED tunable)")
      ->group(g);
  cmd->add_option("--prefetch-size", o->prefetch_size, "reader.prefetch_size (CLOSED tunable)")
      ->group(g);
  cmd->add_option("--computation-time", o->computation_time, "seconds of compute per batch")
      ->group(g);
  cmd->add_option("--epochs", o->epochs, "epochs")->group(g);
  cmd->add_option("--steps", o->steps, "total_training_steps per epoch (0: the whole dataset)")
      ->group(g);
  cmd->add_option("--sharding", o->sharding,
                  "Sample order: v1 (global shuffle), v2 (contiguous), v3 (round-robin + "
                  "all-to-all); default: the edition's")
      ->check(CLI::IsMember({"", "v1", "v2", "v3"}))
      ->group(g);
}

Result<Resolved> Resolve(const TrainingCli& o, uint64_t accelerators) {
  Resolved r;
  ASSIGN_OR_RETURN(r.w, LookupWorkload(o.workload, o.accelerator));
  ASSIGN_OR_RETURN(r.edition, ParseEdition(o.edition));
  auto& w = r.w;
  auto change = [&](const char* name, auto& field, auto value, bool given) {
    if (!given) return;
    field = value;
    r.changed.push_back(fmt::format("{}={}", name, value));
  };
  change("record_length_bytes", w.record_length, o.record_length, o.record_length > 0);
  change("record_length_bytes_stdev", w.record_length_stdev, o.record_length_stdev,
         o.record_length_stdev >= 0);
  change("num_samples_per_file", w.samples_per_file, o.samples_per_file, o.samples_per_file > 0);
  change("batch_size", w.batch_size, o.batch_size, o.batch_size > 0);
  change("read_threads", w.read_threads, static_cast<uint32_t>(o.read_threads),
         o.read_threads >= 0);
  change("prefetch_size", w.prefetch_size, static_cast<uint32_t>(o.prefetch_size),
         o.prefetch_size >= 0);
  change("computation_time", w.computation_time, o.computation_time, o.computation_time >= 0);
  change("epochs", w.epochs, o.epochs, o.epochs > 0);
  r.hosts = o.hosts > 0 ? o.hosts : static_cast<uint32_t>(WorldComm().size());
  r.mem_gib = ClientMemoryGib(o.host_memory_gb);
  SizingInput in{w.record_length, w.samples_per_file, w.batch_size, accelerators, r.hosts,
                 r.mem_gib};
  r.sizing = ComputeSizing(in);
  return r;
}

std::string Header(const std::string& what, const Resolved& r, uint32_t accelerators) {
  std::string closed = IsClosed(r.w, r.edition)
                           ? "CLOSED combination"
                           : "whatif: not a CLOSED combination in this edition";
  std::string out = fmt::format(
      "t0fs bench mlperf training {}: {} on {} x {}, edition {} ({})\n", what, r.w.workload,
      accelerators, r.w.accelerator, EditionName(r.edition), closed);
  out += fmt::format(
      "  {} , record {:.0f} B (stdev {:.0f}), {} sample(s)/file, batch {}, read_threads {}, "
      "prefetch {}, compute {} s/batch, {} epochs, pass at AU >= {:.0f} %\n",
      ContainerName(r.w.container), r.w.record_length, r.w.record_length_stdev,
      r.w.samples_per_file, r.w.batch_size, r.w.read_threads, r.w.prefetch_size,
      r.w.computation_time, r.w.epochs, r.w.min_au * 100);
  if (!r.changed.empty()) {
    std::string list;
    for (const auto& c : r.changed) list += (list.empty() ? "" : ", ") + c;
    out += "  parameters changed from the reference (OPEN/whatif): " + list + "\n";
  }
  return out;
}

Result<TrainingSpec> MakeSpec(const TrainingCli& o, const Resolved& r, uint32_t accelerators,
                              std::string* notes, bool all_files) {
  TrainingSpec spec;
  spec.workload = r.w;
  spec.edition = r.edition;
  if (o.sharding.empty()) {
    spec.sharding = DefaultSharding(r.edition);
  } else {
    ASSIGN_OR_RETURN(spec.sharding, ParseSharding(o.sharding));
  }
  // The I/O choice first: a bad --engine is reported before a missing dataset.
  ASSIGN_OR_RETURN(IoChoice io, ToIoChoice(o.io, o.data_dir));
  ASSIGN_OR_RETURN(spec.layout, DetectDataset(o.data_dir + "/" + r.w.workload, r.w.ext));
  spec.accelerators = accelerators;
  spec.max_steps = o.steps;
  if (o.num_files > 0) {
    spec.files = o.num_files;
  } else if (all_files) {
    spec.files = spec.layout.total_files;  // search: one dataset for every probe
  } else if (r.sizing.required_files <= spec.layout.total_files) {
    spec.files = r.sizing.required_files;
  } else {
    return Status(StatusCode::kInvalidArgument,
                  fmt::format("datasize requires {} files for {} accelerators; {} holds {}: "
                              "generate more, or pass --num-files {} (not a valid CLOSED run)",
                              r.sizing.required_files, accelerators, spec.layout.TrainDir(),
                              spec.layout.total_files, spec.layout.total_files));
  }
  spec.engine = io.engine;
  spec.read.transfer = io.transfer;
  spec.read.direct = o.io.odirect;
  spec.drop = io.drop;
  ASSIGN_OR_RETURN(spec.read.delay_per_file_s,
                   ParseSecondsOption("--test-read-delay", o.test_read_delay));
  spec.progress = ProgressWanted(o.out.quiet);
  RETURN_IF_ERROR(ValidateTrainingSpec(spec, WorldComm().size()));
  if (notes != nullptr) {
    if (spec.files < r.sizing.required_files) {
      *notes += fmt::format("  note: {} files is below the datasize minimum of {} (>= 5 x client "
                            "RAM and >= 500 steps): not a valid CLOSED run\n",
                            spec.files, r.sizing.required_files);
    }
    if (spec.read.delay_per_file_s > 0) {
      *notes += fmt::format("  TEST HOOK: every file read is followed by a {} s sleep\n",
                            spec.read.delay_per_file_s);
    }
  }
  return spec;
}

// One run; prints epoch lines (rank 0) and writes its leaf.
Result<TrainingResult> OneRun(const TrainingSpec& spec, const std::string& leaf, bool print) {
  ASSIGN_OR_RETURN(TrainingResult r, RunTraining(spec, WorldComm(), [&](const EpochInfo& e) {
                     if (!print) return;
                     std::string line = EpochLine(e, spec);
                     std::fwrite(line.data(), 1, line.size(), stdout);
                     std::fflush(stdout);
                   }));
  if (WorldComm().rank() == 0 && !leaf.empty()) {
    RETURN_IF_ERROR(WriteJsonFile(leaf + "/summary.json", SummaryJson(r, spec)));
    RETURN_IF_ERROR(WriteJsonFile(leaf + "/0_per_epoch_stats.json", PerEpochStatsJson(r)));
    RETURN_IF_ERROR(WriteJsonFile(leaf + "/training_run_metadata.json", TrainingParams(spec)));
  }
  return r;
}

}  // namespace t0fs::bench::mlperf::training_cli
