#include <curl/curl.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <openssl/evp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <ctime>
#include <mutex>
#include <random>
#include <thread>

#include "common/fd.h"
#include "common/io_backend.h"
#include "common/logging.h"
#include "s3/s3.h"
#include "s3/sigv4.h"
#include "s3/xml.h"

namespace t0fs::s3 {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// Idle curl easy handles. Each keeps its connection cache, so a handle
// taken again reuses the connection of its last call. mu_ guards handles_
// only; no lock is held during a transfer.
class CurlPool {
 public:
  CurlPool() = default;
  ~CurlPool() {
    for (CURL* h : handles_) curl_easy_cleanup(h);
  }
  CURL* Take() {
    {
      std::lock_guard lock(mu_);
      if (!handles_.empty()) {
        CURL* h = handles_.back();
        handles_.pop_back();
        curl_easy_reset(h);
        return h;
      }
    }
    return curl_easy_init();
  }
  void Give(CURL* h) {
    std::lock_guard lock(mu_);
    handles_.push_back(h);
  }

 private:
  std::mutex mu_;
  std::vector<CURL*> handles_;
};

struct HttpRequest {
  HttpRequest(std::string m, std::string k, bool object = true)
      : method(std::move(m)), key(std::move(k)), has_key(object) {}
  std::string method;
  std::string key;
  bool has_key;                    // false: the bucket itself
  std::vector<std::pair<std::string, std::string>> query;
  std::vector<std::pair<std::string, std::string>> headers;  // extra headers, signed
  std::span<const std::byte> body;
  std::span<std::byte> sink;       // with to_sink: a 2xx body lands here
  bool to_sink = false;
  std::string payload_sha256;      // computed once, reused by every attempt
};

struct HttpResponse {
  long http = 0;
  std::string body;
  size_t sink_bytes = 0;
  bool sink_overflow = false;
  std::vector<std::pair<std::string, std::string>> headers;  // lower-case names

  std::string Header(std::string_view name) const {
    for (const auto& [n, v] : headers) {
      if (n == name) return v;
    }
    return {};
  }
};

namespace {

std::once_flag g_curl_init;

struct Transfer {
  HttpResponse* response;
  std::span<std::byte> sink;
  bool to_sink;
  CURL* curl;
  std::span<const std::byte> body;
  size_t body_pos = 0;
};

size_t OnHeader(char* data, size_t size, size_t count, void* user) {
  auto* t = static_cast<Transfer*>(user);
  std::string_view line(data, size * count);
  if (line.starts_with("HTTP/")) {
    t->response->headers.clear();  // a new response (after 100 Continue)
    return line.size();
  }
  size_t colon = line.find(':');
  if (colon != std::string_view::npos) {
    std::string name(line.substr(0, colon));
    for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    std::string_view value = line.substr(colon + 1);
    while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);
    while (!value.empty() && (value.back() == '\r' || value.back() == '\n' || value.back() == ' ')) {
      value.remove_suffix(1);
    }
    t->response->headers.emplace_back(std::move(name), std::string(value));
  }
  return line.size();
}

size_t OnBody(char* data, size_t size, size_t count, void* user) {
  auto* t = static_cast<Transfer*>(user);
  size_t n = size * count;
  long http = 0;
  curl_easy_getinfo(t->curl, CURLINFO_RESPONSE_CODE, &http);
  if (t->to_sink && http >= 200 && http < 300) {
    HttpResponse& r = *t->response;
    if (r.sink_bytes + n > t->sink.size()) {
      r.sink_overflow = true;
      return 0;  // aborts the transfer: more than we asked for
    }
    std::memcpy(t->sink.data() + r.sink_bytes, data, n);
    r.sink_bytes += n;
    return n;
  }
  t->response->body.append(data, n);
  return n;
}

size_t OnRead(char* out, size_t size, size_t count, void* user) {
  auto* t = static_cast<Transfer*>(user);
  size_t n = std::min(size * count, t->body.size() - t->body_pos);
  std::memcpy(out, t->body.data() + t->body_pos, n);
  t->body_pos += n;
  return n;
}

std::string AmzDate() {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%dT%H%M%SZ", &tm);
  return buf;
}

milliseconds Backoff(const RetryPolicy& policy, int retry) {
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  int64_t cap = policy.initial_backoff.count() << std::min(retry - 1, 20);
  cap = std::min<int64_t>(cap, policy.max_backoff.count());
  std::uniform_int_distribution<int64_t> dist(0, std::max<int64_t>(cap, 0));
  return milliseconds(dist(rng));
}

std::span<const std::byte> Bytes(std::string_view s) {
  return {reinterpret_cast<const std::byte*>(s.data()), s.size()};
}

// A status for a non-2xx answer: S3's code and message when the body has them.
Status HttpError(const std::string& what, long http, const std::string& body) {
  std::string detail;
  if (auto error = ParseError(body); error.ok()) {
    detail = fmt::format("{}: {}", error->code, error->message);
  } else {
    detail = "no S3 error document";
  }
  std::string message = fmt::format("s3 {}: HTTP {} {}", what, http, detail);
  StatusCode code = StatusCode::kInvalidArgument;
  if (http == 404) code = StatusCode::kNotFound;
  else if (http == 401 || http == 403) code = StatusCode::kPermissionDenied;
  else if (http == 409) code = StatusCode::kExists;
  else if (http == 416) code = StatusCode::kRange;
  else if (http == 501)
    code = StatusCode::kNotSupported;  // a call the server does not know
  else if (http == 429 || http >= 500) code = StatusCode::kTryAgain;
  return Status(code, std::move(message));
}

bool RetryableHttp(long http) { return http == 429 || http == 500 || http == 502 || http == 503 || http == 504; }

}  // namespace

namespace {
// What tells a file's versions apart: inode, size, mtime ("" when missing).
std::string FileStamp(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return {};
  return fmt::format("{}:{}:{}:{}.{}", st.st_dev, st.st_ino, st.st_size, st.st_mtim.tv_sec,
                     st.st_mtim.tv_nsec);
}
}  // namespace

Result<std::unique_ptr<Client>> Client::Open(Config config) {
  std::string stamp = FileStamp(config.credentials_file);
  ASSIGN_OR_RETURN(Credentials creds, LoadCredentials(config.credentials_file));
  ASSIGN_OR_RETURN(std::unique_ptr<Client> client, Open(std::move(config), std::move(creds), true));
  client->credentials_stamp_ = std::move(stamp);
  return client;
}

Result<std::unique_ptr<Client>> Client::Open(Config config, Credentials credentials) {
  return Open(std::move(config), std::move(credentials), false);
}

Result<std::unique_ptr<Client>> Client::Open(Config config, Credentials credentials, bool reload) {
  std::string_view ep = config.endpoint;
  size_t scheme_end = ep.find("://");
  if (scheme_end == std::string_view::npos || (ep.substr(0, scheme_end) != "http" && ep.substr(0, scheme_end) != "https")) {
    return Status(StatusCode::kInvalidArgument,
                  fmt::format("s3 endpoint '{}': expected http://host[:port] or https://host[:port]", ep));
  }
  while (ep.ends_with('/')) ep.remove_suffix(1);
  std::string_view host = ep.substr(scheme_end + 3);
  if (host.empty() || host.find('/') != std::string_view::npos) {
    return Status(StatusCode::kInvalidArgument, fmt::format("s3 endpoint '{}': expected no path", config.endpoint));
  }
  if (config.bucket.empty()) return Status(StatusCode::kInvalidArgument, "s3: no bucket configured");
  if (config.part_size < kMinPartSize) {
    return Status(StatusCode::kInvalidArgument,
                  fmt::format("s3 part size {} is below the S3 minimum of {} bytes", config.part_size, kMinPartSize));
  }
  if (config.retry.max_attempts < 1) config.retry.max_attempts = 1;
  std::call_once(g_curl_init, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
  std::string scheme(ep.substr(0, scheme_end));
  std::unique_ptr<Client> client(new Client(std::move(config), std::move(credentials), reload));
  client->host_header_ = client->config_.path_style ? std::string(host) : client->config_.bucket + "." + std::string(host);
  client->scheme_host_ = scheme + "://" + client->host_header_;
  return client;
}

Client::Client(Config config, Credentials credentials, bool reload)
    : config_(std::move(config)),
      reload_(reload),
      credentials_(std::move(credentials)),
      pool_(std::make_unique<CurlPool>()) {}

Credentials Client::SigningCredentials() {
  std::lock_guard lock(credentials_mu_);
  if (!reload_) return credentials_;
  std::string stamp = FileStamp(config_.credentials_file);
  if (stamp == credentials_stamp_) return credentials_;
  credentials_stamp_ = std::move(stamp);  // a bad file is reported once per change
  auto fresh = LoadCredentials(config_.credentials_file);
  if (!fresh.ok()) {
    LOG_WARN("s3: {} changed and cannot be used ({}); signing with the keys read before",
             config_.credentials_file, fresh.status().ToString());
    return credentials_;
  }
  if (fresh->access_key != credentials_.access_key ||
      fresh->secret_key != credentials_.secret_key) {
    LOG_INFO("s3: credentials read again from {} (access key {})", config_.credentials_file,
             fresh->access_key);
  }
  credentials_ = std::move(fresh).value();
  return credentials_;
}

Client::~Client() = default;

std::string Client::ObjectPath(std::string_view key) const {
  std::string path;
  if (config_.path_style) path = "/" + UriEncode(config_.bucket, true);
  path += "/" + UriEncode(key, false);
  return path;
}

Status Client::PerformOnce(HttpRequest& req, HttpResponse& resp, milliseconds timeout, bool& retryable) {
  retryable = false;
  resp = HttpResponse();
  std::string path = req.has_key ? ObjectPath(req.key)
                                 : (config_.path_style ? "/" + UriEncode(config_.bucket, true) : std::string("/"));
  std::string query = CanonicalQuery(req.query);
  std::string url = scheme_host_ + path + (query.empty() ? "" : "?" + query);

  std::string amz_date = AmzDate();
  SigningInput input{req.method, path, query, req.headers, req.payload_sha256};
  input.headers.emplace_back("host", host_header_);
  input.headers.emplace_back("x-amz-date", amz_date);
  input.headers.emplace_back("x-amz-content-sha256", req.payload_sha256);
  const Credentials credentials = SigningCredentials();
  Signature sig =
      SignV4(input, credentials.access_key, credentials.secret_key, config_.region, amz_date);

  curl_slist* headers = nullptr;
  for (const auto& [name, value] : input.headers) {
    headers = curl_slist_append(headers, fmt::format("{}: {}", name, value).c_str());
  }
  headers = curl_slist_append(headers, ("Authorization: " + sig.authorization).c_str());
  headers = curl_slist_append(headers, "Expect:");  // no 100-continue round trip
  if (req.method == "POST") headers = curl_slist_append(headers, "Content-Type: application/xml");

  CURL* curl = pool_->Take();
  if (curl == nullptr) {
    curl_slist_free_all(headers);
    return Status(StatusCode::kInternal, "s3: curl_easy_init failed");
  }
  Transfer t{&resp, req.sink, req.to_sink, curl, req.body};
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_PATH_AS_IS, 1L);
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(std::min(config_.connect_timeout, timeout).count()));
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, static_cast<long>(std::max<int64_t>(timeout.count(), 1)));
  curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, OnHeader);
  curl_easy_setopt(curl, CURLOPT_HEADERDATA, &t);
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, OnBody);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &t);
  curl_easy_setopt(curl, CURLOPT_READFUNCTION, OnRead);
  curl_easy_setopt(curl, CURLOPT_READDATA, &t);
  curl_easy_setopt(curl, CURLOPT_TCP_NODELAY, 1L);
  if (req.method == "PUT") {
    curl_easy_setopt(curl, CURLOPT_UPLOAD, 1L);
    curl_easy_setopt(curl, CURLOPT_INFILESIZE_LARGE, static_cast<curl_off_t>(req.body.size()));
  } else if (req.method == "POST") {
    curl_easy_setopt(curl, CURLOPT_POST, 1L);
    curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(req.body.size()));
  } else if (req.method == "HEAD") {
    curl_easy_setopt(curl, CURLOPT_NOBODY, 1L);
  } else if (req.method != "GET") {
    curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, req.method.c_str());
  }
  CURLcode rc = curl_easy_perform(curl);
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &resp.http);
  pool_->Give(curl);
  curl_slist_free_all(headers);

  if (resp.sink_overflow) {
    return Status(StatusCode::kRpcMalformed,
                  fmt::format("s3 {} {}: the server sent more than the {} bytes asked for", req.method, req.key,
                              req.sink.size()));
  }
  if (rc != CURLE_OK) {
    retryable = true;
    return Status(StatusCode::kIoError,
                  fmt::format("s3 {} {} at {}: {}", req.method, req.key, config_.endpoint, curl_easy_strerror(rc)));
  }
  return Status::Ok();
}

Result<HttpResponse> Client::Perform(HttpRequest& req) {
  if (req.payload_sha256.empty()) {
    req.payload_sha256 = req.body.empty()
                             ? std::string(kEmptyPayloadSha256)
                             : Sha256Hex({reinterpret_cast<const char*>(req.body.data()), req.body.size()});
  }
  const RetryPolicy& policy = config_.retry;
  Clock::time_point start = Clock::now();
  Clock::time_point deadline = start + policy.budget;
  std::string what = req.has_key ? fmt::format("{} {}/{}", req.method, config_.bucket, req.key)
                                 : fmt::format("{} {}", req.method, config_.bucket);
  Status last;
  int attempt = 0;
  while (true) {
    ++attempt;
    auto left = std::chrono::duration_cast<milliseconds>(deadline - Clock::now());
    HttpResponse resp;
    bool retryable = false;
    Status st = PerformOnce(req, resp, std::min(left, config_.request_timeout), retryable);
    if (st.ok()) {
      if (resp.http >= 200 && resp.http < 300) return resp;
      last = HttpError(what, resp.http, resp.body);
      retryable = RetryableHttp(resp.http);
    } else {
      last = st;
    }
    if (!retryable) return last;
    Clock::time_point now = Clock::now();
    milliseconds pause = Backoff(policy, attempt);
    if (attempt >= policy.max_attempts || now + pause >= deadline) break;
    LOG_DEBUG("{} (attempt {}); retrying in {} ms", last.message(), attempt, pause.count());
    std::this_thread::sleep_for(pause);
  }
  auto elapsed = std::chrono::duration_cast<milliseconds>(Clock::now() - start);
  return Status(last.code(), fmt::format("{} (gave up after {} attempts in {} ms)", last.message(), attempt,
                                         elapsed.count()));
}

Status Client::CreateBucket() {
  HttpRequest req("PUT", std::string(), false);
  auto resp = Perform(req);
  if (!resp.ok() && resp.status().code() == StatusCode::kExists &&
      resp.status().message().find("BucketAlreadyOwnedByYou") != std::string::npos) {
    return Status::Ok();
  }
  return resp.status();
}

Status Client::PutObject(std::string_view key, std::span<const std::byte> data) {
  HttpRequest req("PUT", std::string(key), true);
  req.body = data;
  return Perform(req).status();
}

Status Client::PutObject(std::string_view key, std::string_view data) { return PutObject(key, Bytes(data)); }

Status Client::PutObjectFromFile(std::string_view key, const std::string& path, uint64_t offset, uint64_t length) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return Status::FromErrno(errno, "s3 put: open " + path);
  std::vector<std::byte> buf(length);
  ASSIGN_OR_RETURN(size_t got, PreadFull(fd.get(), buf.data(), buf.size(), offset));
  if (got != length) {
    return Status(StatusCode::kInvalidArgument,
                  fmt::format("s3 put: {} has only {} bytes at offset {}, {} asked for", path, got, offset, length));
  }
  return PutObject(key, std::span<const std::byte>(buf));
}

Result<size_t> Client::GetObject(std::string_view key, uint64_t offset, std::span<std::byte> out) {
  if (out.empty()) return size_t{0};
  HttpRequest req("GET", std::string(key), true);
  req.sink = out;
  req.to_sink = true;
  req.headers.emplace_back("range", fmt::format("bytes={}-{}", offset, offset + out.size() - 1));
  auto resp = Perform(req);
  if (!resp.ok()) {
    if (resp.status().code() == StatusCode::kRange) return size_t{0};  // at or past the end
    return resp.status();
  }
  if (resp->http == 200 && offset != 0) {
    return Status(StatusCode::kRpcMalformed, fmt::format("s3 GET {}: range ignored by the server", key));
  }
  return resp->sink_bytes;
}

Result<std::string> Client::GetObject(std::string_view key) {
  HttpRequest req("GET", std::string(key), true);
  ASSIGN_OR_RETURN(HttpResponse resp, Perform(req));
  return std::move(resp.body);
}

Result<ObjectInfo> Client::HeadObject(std::string_view key) {
  HttpRequest req("HEAD", std::string(key), true);
  ASSIGN_OR_RETURN(HttpResponse resp, Perform(req));
  ObjectInfo info;
  std::string length = resp.Header("content-length");
  auto [p, ec] = std::from_chars(length.data(), length.data() + length.size(), info.size);
  if (ec != std::errc() || length.empty()) {
    return Status(StatusCode::kRpcMalformed, fmt::format("s3 HEAD {}: no Content-Length", key));
  }
  info.etag = Unquote(resp.Header("etag"));
  std::string modified = resp.Header("last-modified");
  if (!modified.empty()) info.mtime = curl_getdate(modified.c_str(), nullptr);
  return info;
}

Status Client::DeleteObject(std::string_view key) {
  HttpRequest req("DELETE", std::string(key), true);
  auto resp = Perform(req);
  if (!resp.ok() && resp.status().code() == StatusCode::kNotFound) return Status::Ok();
  return resp.status();
}

Result<std::vector<DeleteFailure>> Client::DeleteObjects(const std::vector<std::string>& keys) {
  if (keys.empty()) return std::vector<DeleteFailure>{};
  if (keys.size() > kMaxDeleteKeys) {
    return Status(
        StatusCode::kInvalidArgument,
        fmt::format("s3 delete of {} keys: at most {} per request", keys.size(), kMaxDeleteKeys));
  }
  const std::string body = DeleteObjectsBody(keys);
  HttpRequest req("POST", std::string(), false);
  req.query = {{"delete", ""}};
  req.body = Bytes(body);
  // S3 wants the body's MD5 on this call (base64 of the 16 bytes).
  unsigned char md5[EVP_MAX_MD_SIZE];
  unsigned int md5_len = 0;
  if (EVP_Digest(body.data(), body.size(), md5, &md5_len, EVP_md5(), nullptr) != 1) {
    return Status(StatusCode::kInternal, "s3 delete: MD5 of the request failed");
  }
  std::string b64(((md5_len + 2) / 3) * 4 + 1, '\0');
  b64.resize(static_cast<size_t>(EVP_EncodeBlock(reinterpret_cast<unsigned char*>(b64.data()), md5,
                                                 static_cast<int>(md5_len))));
  req.headers.emplace_back("content-md5", b64);
  ASSIGN_OR_RETURN(HttpResponse resp, Perform(req));
  return ParseDeleteResult(resp.body);
}

Result<ListPage> Client::ListObjects(std::string_view prefix, std::string_view continuation_token, int max_keys,
                                     std::string_view delimiter) {
  HttpRequest req("GET", std::string(), false);
  req.query = {{"list-type", "2"}, {"prefix", std::string(prefix)}, {"max-keys", std::to_string(max_keys)}};
  if (!continuation_token.empty()) req.query.emplace_back("continuation-token", std::string(continuation_token));
  if (!delimiter.empty()) req.query.emplace_back("delimiter", std::string(delimiter));
  ASSIGN_OR_RETURN(HttpResponse resp, Perform(req));
  return ParseListObjects(resp.body);
}

Result<std::string> Client::CreateMultipartUpload(std::string_view key) {
  HttpRequest req("POST", std::string(key), true);
  req.query = {{"uploads", ""}};
  ASSIGN_OR_RETURN(HttpResponse resp, Perform(req));
  return ParseInitiateMultipart(resp.body);
}

Result<std::string> Client::UploadPart(std::string_view key, std::string_view upload_id, int part_number,
                                       std::span<const std::byte> data) {
  HttpRequest req("PUT", std::string(key), true);
  req.body = data;
  req.query = {{"partNumber", std::to_string(part_number)}, {"uploadId", std::string(upload_id)}};
  ASSIGN_OR_RETURN(HttpResponse resp, Perform(req));
  std::string etag = Unquote(resp.Header("etag"));
  if (etag.empty()) {
    return Status(StatusCode::kRpcMalformed, fmt::format("s3 upload part {} of {}: no ETag", part_number, key));
  }
  return etag;
}

Status Client::CompleteMultipartUpload(std::string_view key, std::string_view upload_id,
                                       const std::vector<CompletedPart>& parts) {
  std::string body = CompleteMultipartBody(parts);
  HttpRequest req("POST", std::string(key), true);
  req.query = {{"uploadId", std::string(upload_id)}};
  req.body = Bytes(body);
  ASSIGN_OR_RETURN(HttpResponse resp, Perform(req));
  return ParseCompleteMultipart(resp.body).WithContext(key);
}

Status Client::AbortMultipartUpload(std::string_view key, std::string_view upload_id) {
  HttpRequest req("DELETE", std::string(key), true);
  req.query = {{"uploadId", std::string(upload_id)}};
  return Perform(req).status();
}

Result<std::vector<UploadRef>> Client::ListMultipartUploads(std::string_view prefix) {
  HttpRequest req("GET", std::string(), false);
  req.query = {{"uploads", ""}};
  if (!prefix.empty()) req.query.emplace_back("prefix", std::string(prefix));
  ASSIGN_OR_RETURN(HttpResponse resp, Perform(req));
  return ParseListMultipartUploads(resp.body);
}

Status Client::UploadFile(std::string_view key, const std::string& path) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return Status::FromErrno(errno, "s3 upload: open " + path);
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return Status::FromErrno(errno, "s3 upload: stat " + path);
  uint64_t size = static_cast<uint64_t>(st.st_size);
  if (size <= config_.part_size) return PutObjectFromFile(key, path, 0, size);

  ASSIGN_OR_RETURN(std::string upload_id, CreateMultipartUpload(key));
  std::vector<CompletedPart> parts;
  std::vector<std::byte> buf(config_.part_size);
  Status st_upload;
  for (uint64_t offset = 0; offset < size && st_upload.ok(); offset += config_.part_size) {
    size_t len = static_cast<size_t>(std::min<uint64_t>(config_.part_size, size - offset));
    auto got = PreadFull(fd.get(), buf.data(), len, offset);
    if (!got.ok()) {
      st_upload = got.status();
    } else if (*got != len) {
      st_upload = Status(StatusCode::kIoError, fmt::format("s3 upload: {} shrank while being read", path));
    } else {
      int number = static_cast<int>(parts.size()) + 1;
      auto etag = UploadPart(key, upload_id, number, std::span<const std::byte>(buf.data(), len));
      if (etag.ok()) parts.push_back({number, std::move(*etag)});
      else st_upload = etag.status();
    }
  }
  if (st_upload.ok()) st_upload = CompleteMultipartUpload(key, upload_id, parts);
  if (!st_upload.ok()) {
    Status aborted = AbortMultipartUpload(key, upload_id);
    if (!aborted.ok()) LOG_WARN("s3 upload {}: abort of upload {} failed: {}", key, upload_id, aborted.ToString());
    return st_upload.WithContext(fmt::format("s3 upload {} as {}", path, key));
  }
  return Status::Ok();
}

}  // namespace t0fs::s3
