#include "meta/object_tier.h"

#include <fmt/format.h>

#include <algorithm>
#include <unordered_set>

#include "common/logging.h"

namespace t0fs::meta {

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

Result<ManifestCounts> ObjectTier::WriteManifest(MetaStore& store, const std::string& cluster_id) {
  ManifestCounts counts;
  ASSIGN_OR_RETURN(std::string text,
                   BuildObjectManifest(store, cluster_id, prefix_, WallNow(), &counts));
  const std::string key = ObjectManifestKey(prefix_);
  RETURN_IF_ERROR(
      client_->PutObject(key, std::string_view(text)).WithContext("object tier: writing " + key));
  return counts;
}

pb::ObjectTier ObjectTier::NodeConfig() const {
  pb::ObjectTier out;
  out.set_endpoint(config_.endpoint);
  out.set_bucket(config_.bucket);
  out.set_region(config_.region);
  out.set_credentials_file(config_.credentials);
  out.set_prefix(prefix_);
  return out;
}

Result<size_t> ObjectTier::CollectGarbage(MetaStore& store, size_t max) {
  ASSIGN_OR_RETURN(std::vector<GarbageChunk> queued, store.TakeGarbage(kObjectTierNode, max));
  std::vector<uint64_t> done;
  Status failed;
  // Two keys per chunk version: the object and its checksums.
  constexpr size_t kPerRequest = s3::kMaxDeleteKeys / 2;
  for (size_t first = 0; first < queued.size() && failed.ok(); first += kPerRequest) {
    const size_t end = std::min(queued.size(), first + kPerRequest);
    std::vector<std::string> keys;
    for (size_t i = first; i < end; ++i) {
      keys.push_back(Key(queued[i].chunk, queued[i].version));
      keys.push_back(ObjectSumsKey(keys.back()));
    }
    failed = DeleteKeys(keys);
    if (!failed.ok()) {
      // A version with a key not deleted stays queued (the next pass
      // retries it; deleting a missing key is no error).
      const std::unordered_set<std::string> left(keys.begin(), keys.end());
      for (size_t i = first; i < end; ++i) {
        const std::string key = Key(queued[i].chunk, queued[i].version);
        if (left.count(key) == 0 && left.count(ObjectSumsKey(key)) == 0)
          done.push_back(queued[i].id);
      }
      break;
    }
    for (size_t i = first; i < end; ++i) done.push_back(queued[i].id);
    LOG_DEBUG("object tier: deleted {} object(s)", end - first);
  }
  if (!done.empty()) RETURN_IF_ERROR(store.AckGarbage(done));
  if (!failed.ok()) return failed.WithContext("object tier: deleting objects no longer needed");
  return done.size();
}

Status ObjectTier::DeleteKeys(std::vector<std::string>& keys) {
  auto failures =
      multi_delete_ ? client_->DeleteObjects(keys) : Status(StatusCode::kNotSupported, "");
  if (failures.ok()) {
    if (failures->empty()) {
      keys.clear();
      return Status::Ok();
    }
    std::vector<std::string> left;
    for (const s3::DeleteFailure& f : *failures) left.push_back(f.key);
    const s3::DeleteFailure& first = failures->front();
    keys = std::move(left);
    return Status(
        first.code == "AccessDenied" ? StatusCode::kPermissionDenied : StatusCode::kTryAgain,
        fmt::format("{} of the keys not deleted, e.g. {}: {}: {}", keys.size(), first.key,
                    first.code, first.message));
  }
  const StatusCode code = failures.status().code();
  if (code != StatusCode::kNotSupported && code != StatusCode::kInvalidArgument &&
      code != StatusCode::kRpcMalformed && code != StatusCode::kNotFound) {
    return failures.status();  // the tier is down or refuses us: the next pass
  }
  // A server without multi-object delete (or one that answers it oddly):
  // one DELETE per key from now on.
  if (multi_delete_) {
    LOG_INFO(
        "object tier: the server refuses multi-object delete ({}); deleting one object at a time",
        failures.status().ToString());
    multi_delete_ = false;
  }
  while (!keys.empty()) {
    RETURN_IF_ERROR(client_->DeleteObject(keys.back()));  // a missing key is fine
    keys.pop_back();
  }
  return Status::Ok();
}

}  // namespace t0fs::meta
