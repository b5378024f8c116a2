#include "fuse/fuse_metrics.h"

#include <string>

#include "metrics/op_metrics.h"

namespace t0fs::fuse {

namespace {

std::string OpLabel(uint32_t opcode) {
  std::string name = metrics::SnakeCaseName(abi::OpcodeName(opcode));
  return name == "unknown" ? "opcode_" + std::to_string(opcode) : name;
}

}  // namespace

FuseMetrics::FuseMetrics(metrics::Registry& registry)
    : ops_family_(&registry.AddCounter("t0fs_fuse_ops_total",
                                       "FUSE requests by opcode and result (ok or the errno answered).",
                                       {"op", "result"})),
      latency_family_(&registry.AddHistogram("t0fs_fuse_op_duration_seconds",
                                             "FUSE request latency in the daemon, from read to reply.", {"op"})),
      ops_(std::make_unique<Op[]>(abi::kMaxOpcode)) {}

std::pair<metrics::Histogram*, metrics::Counter*> FuseMetrics::Resolve(uint32_t opcode, int error, size_t slot) {
  std::lock_guard lock(mu_);
  Op& op = ops_[opcode];
  std::string name = OpLabel(opcode);
  metrics::Histogram* latency = op.latency.load(std::memory_order_acquire);
  if (latency == nullptr) {
    latency = &latency_family_->With({{"op", name}});
    op.latency.store(latency, std::memory_order_release);
  }
  metrics::Counter* counter = op.results[slot].load(std::memory_order_acquire);
  if (counter == nullptr) {
    counter = &ops_family_->With({{"op", name}, {"result", metrics::ErrnoLabel(error)}});
    if (slot != kOtherSlot) op.results[slot].store(counter, std::memory_order_release);
  }
  return {latency, counter};
}

void AddClientMetrics(metrics::Registry& registry, const client::Client& client) {
  using metrics::MetricType;
  using metrics::SampleSink;
  const client::Client* c = &client;
  registry.AddCallback(MetricType::kCounter, "t0fs_client_bytes_total",
                       "Bytes this client read and wrote, by path: local = the same-host bypass (the chunk "
                       "file directly), remote = over TCP to a data service (once per replica written).",
                       {"op", "path"}, [c](SampleSink& sink) {
                         client::IoCounters n = c->counters();
                         sink.Add({"read", "local"}, static_cast<double>(n.local_read_bytes));
                         sink.Add({"read", "remote"}, static_cast<double>(n.remote_read_bytes));
                         sink.Add({"write", "local"}, static_cast<double>(n.local_write_bytes));
                         sink.Add({"write", "remote"}, static_cast<double>(n.remote_write_bytes));
                       });
  registry.AddCallback(MetricType::kCounter, "t0fs_client_reads_total",
                       "Chunk reads by path (local bypass or remote).", {"path"}, [c](SampleSink& sink) {
                         client::IoCounters n = c->counters();
                         sink.Add({"local"}, static_cast<double>(n.local_reads));
                         sink.Add({"remote"}, static_cast<double>(n.remote_reads));
                       });
  registry.AddCallback(MetricType::kCounter, "t0fs_client_checksum_errors_total",
                       "Blocks that failed their checksum on read (the read moved to another replica).", {},
                       [c](SampleSink& sink) { sink.Add(static_cast<double>(c->counters().checksum_errors)); });
  registry.AddCallback(MetricType::kCounter, "t0fs_client_replica_failovers_total",
                       "Reads served by another replica after one failed.", {},
                       [c](SampleSink& sink) { sink.Add(static_cast<double>(c->counters().replica_failovers)); });
  registry.AddCallback(
      MetricType::kCounter, "t0fs_client_degraded_reads_total",
      "Reads decoded from a chunk's erasure-coded cells because no replica answered (protect=ec).",
      {}, [c](SampleSink& sink) { sink.Add(static_cast<double>(c->counters().degraded_reads)); });
  registry.AddCallback(
      MetricType::kCounter, "t0fs_client_degraded_rows_total",
      "Stripe rows that degraded reads decoded whole from K cells (kept in memory for the reads "
      "that follow).",
      {}, [c](SampleSink& sink) { sink.Add(static_cast<double>(c->counters().degraded_rows)); });
  registry.AddCallback(MetricType::kCounter, "t0fs_client_degraded_row_hits_total",
                       "Rows of degraded reads served from memory, decoded by an earlier read (no "
                       "cell fetched again).",
                       {}, [c](SampleSink& sink) {
                         sink.Add(static_cast<double>(c->counters().degraded_row_hits));
                       });
  registry.AddCallback(
      MetricType::kCounter, "t0fs_client_object_reads_total",
      "Reads served from the object tier's copy through a data node because no replica answered "
      "(protect=object, before repair recalls the chunk).",
      {}, [c](SampleSink& sink) { sink.Add(static_cast<double>(c->counters().object_reads)); });
  registry.AddCallback(
      MetricType::kCounter, "t0fs_client_replica_write_failures_total",
      "Replicas dropped from a write (reported stale at commit, then repaired).", {},
      [c](SampleSink& sink) { sink.Add(static_cast<double>(c->counters().replica_write_failures)); });
  registry.AddCallback(
      MetricType::kCounter, "t0fs_client_stage_back_requests_total",
      "Chunk writes no replica could take (their nodes lost) that asked meta to recall the chunk "
      "from the object tier at once and waited for the new replica (protect=object).",
      {},
      [c](SampleSink& sink) { sink.Add(static_cast<double>(c->counters().stage_back_requests)); });
  registry.AddCallback(
      MetricType::kCounter, "t0fs_client_recall_requests_total",
      "Writes and truncations of offloaded chunks (keep-local=drop|pressure) that waited for meta "
      "to stage the chunk back.",
      {}, [c](SampleSink& sink) { sink.Add(static_cast<double>(c->counters().recall_requests)); });
  registry.AddCallback(
      MetricType::kCounter, "t0fs_client_read_recall_requests_total",
      "Reads of offloaded chunks, served from the tier, that asked meta to stage the chunk back "
      "(recall on read: keep-local=pressure, or drop with after=).",
      {},
      [c](SampleSink& sink) { sink.Add(static_cast<double>(c->counters().read_recall_requests)); });
  registry.AddCallback(MetricType::kGauge, "t0fs_client_local_node",
                       "This client's data node (0: none on this host), as the value.", {},
                       [c](SampleSink& sink) { sink.Add(static_cast<double>(c->local_node().value())); });
}

}  // namespace t0fs::fuse
