#include "meta/object_tier.h"

#include <fmt/format.h>

#include "common/logging.h"

namespace t0fs::meta {

std::string ObjectKey(std::string_view prefix, ChunkId chunk, uint64_t version) {
  return fmt::format("{}chunks/{:016x}.{}", prefix, chunk.value(), version);
}

Result<std::unique_ptr<ObjectTier>> ObjectTier::Open(const ObjectTierConfig& config,
                                                     const std::string& cluster_id) {
  if (!config.endpoint.starts_with("http://") && !config.endpoint.starts_with("https://")) {
    return Status(
        StatusCode::kInvalidArgument,
        fmt::format("object-endpoint '{}' must start with http:// or https://", config.endpoint));
  }
  if (config.bucket.empty()) {
    return Status(StatusCode::kInvalidArgument, "object-endpoint needs object-bucket too");
  }
  if (config.credentials.empty()) {
    return Status(StatusCode::kInvalidArgument,
                  "object-endpoint needs object-credentials (a file of mode 0600 with access_key "
                  "= and secret_key = lines)");
  }
  std::string prefix = config.prefix.empty() ? fmt::format("t0fs/{}/", cluster_id) : config.prefix;
  if (!prefix.ends_with('/')) prefix += '/';
  s3::Config s3;
  s3.endpoint = config.endpoint;
  s3.bucket = config.bucket;
  s3.region = config.region;
  s3.credentials_file = config.credentials;
  // Meta only deletes, on its housekeeping thread: fail fast, retry next pass.
  s3.retry.max_attempts = 3;
  s3.retry.budget = std::chrono::seconds(10);
  s3.request_timeout = std::chrono::seconds(10);
  auto client = s3::Client::Open(std::move(s3));
  if (!client.ok()) return client.status().WithContext("object tier (--object-*)");
  return std::unique_ptr<ObjectTier>(new ObjectTier(config, std::move(prefix), std::move(*client)));
}

pb::ObjectTier ObjectTier::NodeConfig() const {
  pb::ObjectTier out;
  out.set_endpoint(config_.endpoint);
  out.set_bucket(config_.bucket);
  out.set_region(config_.region);
  out.set_credentials_file(config_.credentials);
  return out;
}

Result<size_t> ObjectTier::CollectGarbage(MetaStore& store, size_t max) {
  ASSIGN_OR_RETURN(std::vector<GarbageChunk> queued, store.TakeGarbage(kObjectTierNode, max));
  std::vector<uint64_t> done;
  Status failed;
  for (const GarbageChunk& g : queued) {
    const std::string key = Key(g.chunk, g.version);
    failed = client_->DeleteObject(key);  // a missing key is fine
    if (!failed.ok()) break;
    done.push_back(g.id);
    LOG_DEBUG("object tier: deleted {}", key);
  }
  if (!done.empty()) RETURN_IF_ERROR(store.AckGarbage(done));
  if (!failed.ok()) return failed.WithContext("object tier: deleting objects no longer needed");
  return done.size();
}

}  // namespace t0fs::meta
