// A small S3 client over libcurl (Debian's libcurl4-openssl-dev) with AWS
// Signature Version 4 signing (sigv4.h); no SDK. Talks to AWS S3, Ceph RGW,
// MinIO: one bucket per Client, path-style addressing by default
// (http://host:port/bucket/key), virtual-hosted style on request.
//
// Operations: PutObject (buffer or file range), GetObject (whole or a byte
// range into the caller's buffer), HeadObject, DeleteObject, ListObjectsV2,
// CreateBucket, multipart upload (create, upload part, complete, abort, list
// uploads) and UploadFile, which sends a large file in parts.
//
// Credentials come from a file of mode 0600 (like the cluster secret):
//     access_key = AKIA...
//     secret_key = ...
// A client opened from the file reads it again when it changes (another
// inode, size or mtime; checked before each request), so keys are rotated
// by rewriting or replacing the file, with no restart; a file that cannot be
// read keeps the keys held (logged once per change). Neither key's secret
// ever appears in a log line or a Status message.
//
// Errors (Status codes of common/status.h):
//   404                        kNotFound ("s3 GET key: 404 NoSuchKey: ...")
//   403 (bad keys, signature)  kPermissionDenied with S3's code and message
//   409                        kExists;  400 and other 4xx: kInvalidArgument
//   500, 502, 503, 504, 429    retried, then kTryAgain
//   no answer (refused, reset, timeout)  retried, then kIoError
//   unparsable XML             kRpcMalformed
// Retries use capped exponential backoff with full jitter and stop when
// either the attempt count or the time budget (RetryPolicy) is spent; the
// message says how many attempts were made and for how long.
//
// Thread safety: a Client may be used by several threads at once. Each call
// borrows a curl easy handle from a pool (a handle keeps its connection
// alive, so successive calls reuse connections) and returns it afterwards.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace t0fs::s3 {

struct Credentials {
  std::string access_key;
  std::string secret_key;
};

// Reads `access_key = ...` / `secret_key = ...` lines ('#' comments, blank
// lines allowed). Refuses a file readable or writable by group or others
// (kPermissionDenied), a missing key (kInvalidArgument). Messages name the
// file and the problem, never a key's value.
Result<Credentials> LoadCredentials(const std::string& path);
// The same checks on text already read (the mode is the caller's business).
Result<Credentials> ParseCredentials(std::string_view text, std::string_view origin);

struct RetryPolicy {
  // Tries per request, the first included. More ride out longer outages of
  // the gateway but hold the caller longer.
  int max_attempts = 6;
  // Backoff before retry n is uniform in [0, min(max_backoff, initial*2^(n-1))]
  // ("full jitter": clients that failed together do not retry together).
  std::chrono::milliseconds initial_backoff{100};
  std::chrono::milliseconds max_backoff{5000};
  // Wall time for one call, retries included; each attempt's timeout is cut
  // to what is left. Bounds how long a caller waits on a dead endpoint.
  std::chrono::milliseconds budget{60000};
};

struct Config {
  std::string endpoint;                // "http://127.0.0.1:7480" (https works too)
  std::string bucket;
  std::string region = "us-east-1";    // part of the signature scope; RGW accepts any
  // Path style (http://host/bucket/key) works with RGW and MinIO without DNS
  // setup; virtual-hosted style (http://bucket.host/key) is what AWS prefers.
  bool path_style = true;
  std::string credentials_file;        // used by Client::Open(Config)
  // Time to establish a TCP connection: short enough to fail over to a retry
  // quickly, long enough for a loaded gateway.
  std::chrono::milliseconds connect_timeout{3000};
  // Time for one whole attempt (transfer included): must cover a part of
  // part_size at the slowest acceptable rate.
  std::chrono::milliseconds request_timeout{120000};
  // UploadFile's part size: S3 requires at least 5 MiB for every part but
  // the last; larger parts mean fewer requests but more memory per upload
  // (one part is buffered) and more to resend after a failure.
  uint64_t part_size = 8u << 20;
  RetryPolicy retry;
};

struct ObjectInfo {
  uint64_t size = 0;
  std::string etag;        // without quotes
  int64_t mtime = 0;       // seconds since the epoch
};

struct ListEntry {
  std::string key;
  uint64_t size = 0;
  std::string etag;        // without quotes
  int64_t mtime = 0;
};

struct ListPage {
  std::vector<ListEntry> objects;
  std::vector<std::string> common_prefixes;   // with a delimiter
  bool truncated = false;
  std::string next_continuation_token;        // pass back for the next page
};

struct CompletedPart {
  int number = 0;          // 1..10000
  std::string etag;        // as UploadPart returned it (without quotes)
};

struct UploadRef {
  std::string key;
  std::string upload_id;
};

// A key a multi-object delete could not delete, and S3's reason.
struct DeleteFailure {
  std::string key;
  std::string code;  // "AccessDenied", "InternalError"
  std::string message;
};
inline constexpr size_t kMaxDeleteKeys = 1000;  // per DeleteObjects request (S3's limit)

inline constexpr uint64_t kMinPartSize = 5u << 20;

class CurlPool;
struct HttpRequest;
struct HttpResponse;

class Client {
 public:
  // Loads config.credentials_file (see LoadCredentials).
  static Result<std::unique_ptr<Client>> Open(Config config);
  static Result<std::unique_ptr<Client>> Open(Config config, Credentials credentials);
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  const Config& config() const { return config_; }

  // Creates the bucket; ok if this user already owns it.
  Status CreateBucket();

  Status PutObject(std::string_view key, std::span<const std::byte> data);
  Status PutObject(std::string_view key, std::string_view data);
  // Sends `length` bytes of the file at `offset` (read into memory first:
  // use UploadFile for large files).
  Status PutObjectFromFile(std::string_view key, const std::string& path, uint64_t offset, uint64_t length);

  // Reads up to out.size() bytes at `offset` (a ranged GET); returns how many
  // arrived: fewer at the end of the object, 0 at or past its end.
  Result<size_t> GetObject(std::string_view key, uint64_t offset, std::span<std::byte> out);
  // The whole object.
  Result<std::string> GetObject(std::string_view key);
  Result<ObjectInfo> HeadObject(std::string_view key);
  // Ok also when the key does not exist (S3 semantics).
  Status DeleteObject(std::string_view key);
  // Deletes up to kMaxDeleteKeys keys in one request (POST ?delete, quiet):
  // the keys it could not delete, with S3's reasons (a key that does not
  // exist counts as deleted). A request the server refuses as a whole is an
  // error (kNotSupported when it does not know the call).
  Result<std::vector<DeleteFailure>> DeleteObjects(const std::vector<std::string>& keys);
  // One page (up to max_keys) of keys starting with `prefix`, in key order.
  Result<ListPage> ListObjects(std::string_view prefix, std::string_view continuation_token = {},
                               int max_keys = 1000, std::string_view delimiter = {});

  // Multipart upload. Parts are numbered from 1; every part but the last must
  // be at least kMinPartSize bytes.
  Result<std::string> CreateMultipartUpload(std::string_view key);
  Result<std::string> UploadPart(std::string_view key, std::string_view upload_id, int part_number,
                                 std::span<const std::byte> data);
  Status CompleteMultipartUpload(std::string_view key, std::string_view upload_id,
                                 const std::vector<CompletedPart>& parts);
  Status AbortMultipartUpload(std::string_view key, std::string_view upload_id);
  // Uploads in progress (created, neither completed nor aborted).
  Result<std::vector<UploadRef>> ListMultipartUploads(std::string_view prefix = {});

  // Sends a whole file: one PUT up to config().part_size, else a multipart
  // upload in parts of part_size (aborted if any part fails).
  Status UploadFile(std::string_view key, const std::string& path);

 private:
  static Result<std::unique_ptr<Client>> Open(Config config, Credentials credentials, bool reload);
  Client(Config config, Credentials credentials, bool reload);
  // One request with retries (RetryPolicy); a non-2xx answer as a Status.
  Result<HttpResponse> Perform(HttpRequest& request);
  Status PerformOnce(HttpRequest& request, HttpResponse& response, std::chrono::milliseconds timeout,
                     bool& retryable);
  std::string ObjectPath(std::string_view key) const;

  // The keys to sign with (see the file comment).
  Credentials SigningCredentials();

  const Config config_;
  const bool reload_;          // opened from config_.credentials_file
  std::mutex credentials_mu_;  // guards the two below
  Credentials credentials_;
  std::string credentials_stamp_;  // the file's inode, size and mtime when read
  std::string scheme_host_;   // "http://127.0.0.1:7480" or "http://bucket.host:port"
  std::string host_header_;   // what curl sends as Host: and what we sign
  std::unique_ptr<CurlPool> pool_;
};

}  // namespace t0fs::s3
