// ObjectTier: meta's side of the object tier (protect=object). Chunks are
// copied to an S3 bucket by the data nodes that hold them (upload commands)
// and copied back by repair when no node holds them any more (recall); meta
// names the objects and deletes those the cluster no longer needs (a freed
// chunk's copy, an older version replaced by a newer upload), which wait in
// the garbage queue of kObjectTierNode.
//
// Objects: `<prefix>chunks/<chunk id, 16 hex digits>.<version>` — one object
// per uploaded version, written once, never changed; a recall reads exactly
// the version the chunk's row names.
//
// Thread safety: Key and NodeConfig are pure; CollectGarbage runs on the
// housekeeping thread, WriteManifest on the manifest thread (the S3 client
// is safe for concurrent use).
#pragma once

#include <memory>
#include <string>

#include "common/object_key.h"
#include "common/status.h"
#include "meta/meta_config.h"
#include "meta/object_manifest.h"
#include "meta/store/meta_store.h"
#include "rpc/proto/meta.pb.h"
#include "s3/s3.h"

namespace t0fs::meta {

class ObjectTier {
 public:
  // Checks the settings and reads the credentials (a clear error for a
  // missing bucket or a bad credentials file); contacts nothing.
  static Result<std::unique_ptr<ObjectTier>> Open(const ObjectTierConfig& config,
                                                  const std::string& cluster_id);

  std::string Key(ChunkId chunk, uint64_t version) const {
    return ObjectKey(prefix_, chunk, version);
  }
  const std::string& prefix() const { return prefix_; }
  // What data nodes are told at registration (no secret).
  pb::ObjectTier NodeConfig() const;
  // Deletes up to `max` queued objects, up to s3::kMaxDeleteKeys per
  // request (multi-object delete; one DELETE per key on a server without
  // it); returns how many went. An error (endpoint down, permission) leaves
  // the rest queued for the next call.
  Result<size_t> CollectGarbage(MetaStore& store, size_t max);
  // Writes the manifest (meta/object_manifest.h) of `store` to the bucket,
  // replacing the one there.
  Result<ManifestCounts> WriteManifest(MetaStore& store, const std::string& cluster_id);

 private:
  ObjectTier(ObjectTierConfig config, std::string prefix, std::unique_ptr<s3::Client> client)
      : config_(std::move(config)), prefix_(std::move(prefix)), client_(std::move(client)) {}

  // Deletes `keys`; on an error `keys` holds the ones not deleted.
  Status DeleteKeys(std::vector<std::string>& keys);

  const ObjectTierConfig config_;
  const std::string prefix_;
  std::unique_ptr<s3::Client> client_;
  bool multi_delete_ = true;  // until the server refuses it once
};

}  // namespace t0fs::meta
