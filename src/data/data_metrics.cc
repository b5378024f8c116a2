#include "data/data_metrics.h"

#include <string>

namespace t0fs::data {

using metrics::MetricType;
using metrics::SampleSink;

ChunkTraffic AddChunkTrafficMetrics(metrics::Registry& registry) {
  auto& bytes = registry.AddCounter(
      "t0fs_data_bytes_total",
      "Chunk bytes served by this data service, by op (read, write) and transport (tcp: over the network; "
      "unix: over the same-host socket). Bypass I/O is not here: it is counted by the clients.",
      {"op", "transport"});
  ChunkTraffic t;
  t.tcp_read_bytes = &bytes.With({{"op", "read"}, {"transport", "tcp"}});
  t.tcp_write_bytes = &bytes.With({{"op", "write"}, {"transport", "tcp"}});
  t.unix_read_bytes = &bytes.With({{"op", "read"}, {"transport", "unix"}});
  t.unix_write_bytes = &bytes.With({{"op", "write"}, {"transport", "unix"}});
  t.local_opens = &registry
                       .AddCounter("t0fs_data_local_opens_total",
                                   "Chunk file descriptors handed to same-host clients (the local bypass).")
                       .With({});
  return t;
}

RemovalCounters AddRemovalMetrics(metrics::Registry& registry) {
  RemovalCounters c;
  c.deferred = &registry
                    .AddCounter("t0fs_data_removals_deferred_total",
                                "Removals meta sent that this node left for a later heartbeat: "
                                "the chunk was placed here again after they were queued.")
                    .With({});
  c.orphans_queued = &registry
                          .AddCounter("t0fs_data_orphans_queued_total",
                                      "Chunk files in no layout that this node's orphan sweep "
                                      "had meta queue for removal.")
                          .With({});
  return c;
}

void AddVolumeMetrics(metrics::Registry& registry, const std::vector<Volume>& volumes, const ChunkStore& store,
                      std::function<uint64_t()> copied_bytes, std::function<uint64_t()> node) {
  registry.AddCallback(MetricType::kGauge, "t0fs_data_volume_chunks", "Chunk files per volume.", {"volume"},
                       [&store](SampleSink& sink) {
                         for (auto& [dir, chunks] : store.VolumeChunkCounts()) {
                           sink.Add({dir}, static_cast<double>(chunks));
                         }
                       });
  registry.AddCallback(MetricType::kGauge, "t0fs_data_unnamed_chunks",
                       "New chunks a local client holds whose files have no names yet (lazy opens).", {},
                       [&store](SampleSink& sink) { sink.Add({}, static_cast<double>(store.UnnamedCount())); });
  registry.AddCallback(
      MetricType::kCounter, "t0fs_data_reused_chunk_files_total",
      "New chunks given the unnamed files of a new file its client closed empty, instead of "
      "new files (PrepareLocal with reuse).",
      {}, [&store](SampleSink& sink) { sink.Add(static_cast<double>(store.ReusedCount())); });
  // statvfs per volume at each scrape: a few microseconds each.
  auto capacity = [&volumes](SampleSink& sink, bool available) {
    for (const Volume& vol : volumes) {
      auto stats = vol.Stats();
      if (!stats.ok()) continue;
      sink.Add({vol.dir()}, static_cast<double>(available ? stats->free_bytes : stats->total_bytes));
    }
  };
  registry.AddCallback(MetricType::kGauge, "t0fs_data_volume_capacity_bytes",
                       "Size of the file system holding each volume.", {"volume"},
                       [capacity](SampleSink& sink) { capacity(sink, false); });
  registry.AddCallback(MetricType::kGauge, "t0fs_data_volume_available_bytes",
                       "Bytes available to t0fs on the file system holding each volume.", {"volume"},
                       [capacity](SampleSink& sink) { capacity(sink, true); });
  registry.AddCallback(MetricType::kCounter, "t0fs_data_copy_bytes_total",
                       "Bytes received from peers by repair copies.", {},
                       [copied_bytes = std::move(copied_bytes)](SampleSink& sink) {
                         sink.Add(static_cast<double>(copied_bytes()));
                       });
  registry.AddCallback(MetricType::kGauge, "t0fs_data_node_info",
                       "1, labelled with the node id meta assigned (absent until registered).", {"node"},
                       [node = std::move(node)](SampleSink& sink) {
                         uint64_t id = node();
                         if (id != 0) sink.Add({std::to_string(id)}, 1);
                       });
}

void AddObjectReadMetrics(metrics::Registry& registry, const ObjectReadAhead& read_ahead) {
  registry.AddCallback(
      MetricType::kCounter, "t0fs_data_object_read_ahead_hits_total",
      "Reads through the object tier answered from bytes read ahead.", {},
      [&read_ahead](SampleSink& sink) { sink.Add(static_cast<double>(read_ahead.hits())); });
  registry.AddCallback(
      MetricType::kCounter, "t0fs_data_object_read_gets_total",
      "Ranged GETs (each with one of its checksums) for reads through the object tier.", {},
      [&read_ahead](SampleSink& sink) { sink.Add(static_cast<double>(read_ahead.fetches())); });
}

}  // namespace t0fs::data
