// src/s3 against a real Ceph RGW (tests/lib/ceph.sh, driven by s3.sh).
// Environment: CEPH_S3_ENDPOINT, CEPH_S3_CREDENTIALS, S3_BUCKET, S3_BIG_FILE
// (a file the script made, uploaded in parts and read back byte for byte).
#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>
#include <thread>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "s3/s3.h"

namespace t0fs::s3 {
namespace {

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

Config BaseConfig() {
  Config config;
  config.endpoint = Env("CEPH_S3_ENDPOINT");
  config.bucket = Env("S3_BUCKET");
  config.credentials_file = Env("CEPH_S3_CREDENTIALS");
  return config;
}

std::unique_ptr<Client> OpenClient() {
  auto client = Client::Open(BaseConfig());
  EXPECT_TRUE(client.ok()) << client.status().ToString();
  if (!client.ok()) std::abort();
  EXPECT_TRUE((*client)->CreateBucket().ok());
  return std::move(*client);
}

std::string Pattern(size_t len, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::string out(len, '\0');
  for (char& c : out) c = static_cast<char>(rng());
  return out;
}

double MiBps(uint64_t bytes, std::chrono::steady_clock::duration d) {
  return static_cast<double>(bytes) / (1 << 20) / std::chrono::duration<double>(d).count();
}

TEST(S3Rgw, CreateBucketTwice) {
  auto client = OpenClient();
  EXPECT_TRUE(client->CreateBucket().ok());
}

TEST(S3Rgw, PutGetHeadDelete) {
  auto client = OpenClient();
  std::string data = Pattern(100000, 1);
  ASSERT_TRUE(client->PutObject("obj/a b+c", data).ok());
  auto whole = client->GetObject("obj/a b+c");
  ASSERT_TRUE(whole.ok()) << whole.status().ToString();
  EXPECT_EQ(*whole, data);

  auto head = client->HeadObject("obj/a b+c");
  ASSERT_TRUE(head.ok()) << head.status().ToString();
  EXPECT_EQ(head->size, data.size());
  EXPECT_EQ(head->etag.size(), 32u);  // the MD5 of a single PUT
  EXPECT_GT(head->mtime, 1600000000);

  std::vector<std::byte> buf(1000);
  auto mid = client->GetObject("obj/a b+c", 5000, buf);
  ASSERT_TRUE(mid.ok()) << mid.status().ToString();
  ASSERT_EQ(*mid, 1000u);
  EXPECT_EQ(std::string(reinterpret_cast<char*>(buf.data()), 1000), data.substr(5000, 1000));
  auto tail = client->GetObject("obj/a b+c", data.size() - 10, buf);
  ASSERT_TRUE(tail.ok()) << tail.status().ToString();
  EXPECT_EQ(*tail, 10u);
  EXPECT_EQ(std::string(reinterpret_cast<char*>(buf.data()), 10), data.substr(data.size() - 10));
  auto past = client->GetObject("obj/a b+c", data.size(), buf);
  ASSERT_TRUE(past.ok()) << past.status().ToString();
  EXPECT_EQ(*past, 0u);

  ASSERT_TRUE(client->PutObject("obj/empty", std::string_view()).ok());
  auto empty_head = client->HeadObject("obj/empty");
  ASSERT_TRUE(empty_head.ok());
  EXPECT_EQ(empty_head->size, 0u);

  ASSERT_TRUE(client->DeleteObject("obj/a b+c").ok());
  EXPECT_EQ(client->HeadObject("obj/a b+c").status().code(), StatusCode::kNotFound);
  auto gone = client->GetObject("obj/a b+c");
  EXPECT_EQ(gone.status().code(), StatusCode::kNotFound);
  EXPECT_NE(gone.status().message().find("NoSuchKey"), std::string::npos) << gone.status().ToString();
  EXPECT_TRUE(client->DeleteObject("obj/a b+c").ok());  // S3: deleting nothing is fine
  EXPECT_TRUE(client->DeleteObject("obj/empty").ok());
}

// One request deletes many keys (XML-escaped ones too); a key that does not
// exist counts as deleted; more than S3 allows per request is refused.
TEST(S3Rgw, DeleteObjectsInOneRequest) {
  auto client = OpenClient();
  std::vector<std::string> keys;
  for (int i = 0; i < 30; ++i) {
    keys.push_back(fmt::format("multi/{} <&> \"'{}", i, i));
    ASSERT_TRUE(client->PutObject(keys.back(), Pattern(100 + i, i)).ok()) << keys.back();
  }
  ASSERT_TRUE(client->PutObject("multi/kept", "kept").ok());
  keys.push_back("multi/never-written");
  auto failures = client->DeleteObjects(keys);
  ASSERT_TRUE(failures.ok()) << failures.status().ToString();
  EXPECT_TRUE(failures->empty()) << failures->front().key << ": " << failures->front().code;
  auto left = client->ListObjects("multi/");
  ASSERT_TRUE(left.ok()) << left.status().ToString();
  ASSERT_EQ(left->objects.size(), 1u);
  EXPECT_EQ(left->objects[0].key, "multi/kept");
  EXPECT_TRUE(client->DeleteObjects({}).ok());
  EXPECT_EQ(
      client->DeleteObjects(std::vector<std::string>(s3::kMaxDeleteKeys + 1, "x")).status().code(),
      StatusCode::kInvalidArgument);
  EXPECT_TRUE(client->DeleteObject("multi/kept").ok());
}

TEST(S3Rgw, ListWithPrefixAndContinuation) {
  auto client = OpenClient();
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(client->PutObject(fmt::format("list/k{}", i), "x").ok());
  ASSERT_TRUE(client->PutObject("list/sub/deep", "y").ok());
  ASSERT_TRUE(client->PutObject("other", "z").ok());
  std::vector<std::string> keys;
  std::string token;
  int pages = 0;
  do {
    auto page = client->ListObjects("list/", token, 2);
    ASSERT_TRUE(page.ok()) << page.status().ToString();
    for (const ListEntry& e : page->objects) keys.push_back(e.key);
    token = page->truncated ? page->next_continuation_token : "";
    ++pages;
  } while (!token.empty());
  EXPECT_EQ(pages, 3);
  EXPECT_EQ(keys, (std::vector<std::string>{"list/k0", "list/k1", "list/k2", "list/k3", "list/k4", "list/sub/deep"}));
  auto delim = client->ListObjects("list/", "", 1000, "/");
  ASSERT_TRUE(delim.ok());
  EXPECT_EQ(delim->objects.size(), 5u);
  EXPECT_EQ(delim->common_prefixes, std::vector<std::string>{"list/sub/"});
}

TEST(S3Rgw, MultipartFileReadBackByteForByte) {
  std::string path = Env("S3_BIG_FILE");
  ASSERT_FALSE(path.empty());
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string expect = ss.str();
  ASSERT_GT(expect.size(), 16u << 20);

  auto client = OpenClient();
  auto t0 = std::chrono::steady_clock::now();
  Status up = client->UploadFile("big/object", path);
  auto t1 = std::chrono::steady_clock::now();
  ASSERT_TRUE(up.ok()) << up.ToString();
  auto head = client->HeadObject("big/object");
  ASSERT_TRUE(head.ok());
  EXPECT_EQ(head->size, expect.size());
  EXPECT_NE(head->etag.find('-'), std::string::npos) << head->etag;  // a multipart ETag: md5-of-md5s "-N"

  std::vector<std::byte> got(expect.size());
  auto t2 = std::chrono::steady_clock::now();
  constexpr size_t kRange = 8u << 20;
  for (size_t off = 0; off < got.size(); off += kRange) {
    size_t len = std::min(kRange, got.size() - off);
    auto n = client->GetObject("big/object", off, std::span<std::byte>(got.data() + off, len));
    ASSERT_TRUE(n.ok()) << n.status().ToString();
    ASSERT_EQ(*n, len);
  }
  auto t3 = std::chrono::steady_clock::now();
  ASSERT_EQ(std::memcmp(got.data(), expect.data(), expect.size()), 0);
  std::printf("THROUGHPUT client upload %.1f MiB/s, ranged download %.1f MiB/s (%zu bytes)\n",
              MiBps(expect.size(), t1 - t0), MiBps(expect.size(), t3 - t2), expect.size());
}

TEST(S3Rgw, AbortLeavesNoParts) {
  auto client = OpenClient();
  auto id = client->CreateMultipartUpload("abort/me");
  ASSERT_TRUE(id.ok()) << id.status().ToString();
  std::string part = Pattern(kMinPartSize, 7);
  auto etag = client->UploadPart("abort/me", *id, 1,
                                 std::span<const std::byte>(reinterpret_cast<const std::byte*>(part.data()), part.size()));
  ASSERT_TRUE(etag.ok()) << etag.status().ToString();
  auto before = client->ListMultipartUploads("abort/");
  ASSERT_TRUE(before.ok()) << before.status().ToString();
  ASSERT_EQ(before->size(), 1u);
  EXPECT_EQ((*before)[0].upload_id, *id);
  ASSERT_TRUE(client->AbortMultipartUpload("abort/me", *id).ok());
  auto after = client->ListMultipartUploads("abort/");
  ASSERT_TRUE(after.ok());
  EXPECT_TRUE(after->empty());
  EXPECT_EQ(client->HeadObject("abort/me").status().code(), StatusCode::kNotFound);
}

TEST(S3Rgw, WrongCredentialsArePermissionDenied) {
  auto good = LoadCredentials(Env("CEPH_S3_CREDENTIALS"));
  ASSERT_TRUE(good.ok());
  const std::string wrong_secret = "WRONGwrongWRONGwrongWRONGwrongWRONGwrong";
  auto bad_secret = Client::Open(BaseConfig(), Credentials{good->access_key, wrong_secret});
  ASSERT_TRUE(bad_secret.ok());
  Status st = (*bad_secret)->PutObject("denied", "x");
  EXPECT_EQ(st.code(), StatusCode::kPermissionDenied) << st.ToString();
  EXPECT_NE(st.message().find("SignatureDoesNotMatch"), std::string::npos) << st.ToString();
  EXPECT_EQ(st.message().find(wrong_secret), std::string::npos);
  EXPECT_EQ(st.message().find(good->secret_key), std::string::npos);

  auto bad_key = Client::Open(BaseConfig(), Credentials{"NOSUCHKEY0000000", good->secret_key});
  ASSERT_TRUE(bad_key.ok());
  auto head = (*bad_key)->ListObjects("");
  EXPECT_EQ(head.status().code(), StatusCode::kPermissionDenied) << head.status().ToString();
  EXPECT_NE(head.status().message().find("InvalidAccessKeyId"), std::string::npos) << head.status().ToString();
  EXPECT_EQ(head.status().message().find(good->secret_key), std::string::npos);
}

// Keys are rotated by rewriting the credentials file: a client opened from
// it signs with the new keys at its next request; a file made unreadable
// keeps the keys held.
TEST(S3Rgw, CredentialsFileReadAgainWhenItChanges) {
  auto good = LoadCredentials(Env("CEPH_S3_CREDENTIALS"));
  ASSERT_TRUE(good.ok());
  const std::string path = Env("S3_BIG_FILE") + ".creds";
  auto write = [&](const std::string& secret, mode_t mode) {
    std::string tmp = path + ".tmp";
    int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::fchmod(fd, mode), 0);
    std::string text = fmt::format("access_key = {}\nsecret_key = {}\n", good->access_key, secret);
    ASSERT_EQ(::write(fd, text.data(), text.size()), static_cast<ssize_t>(text.size()));
    ::close(fd);
    ASSERT_EQ(::rename(tmp.c_str(), path.c_str()), 0);
  };
  write("WRONGwrongWRONGwrongWRONGwrongWRONGwrong", 0600);
  Config config = BaseConfig();
  config.credentials_file = path;
  auto client = Client::Open(config);
  ASSERT_TRUE(client.ok()) << client.status().ToString();
  EXPECT_EQ((*client)->PutObject("rotated", "x").code(), StatusCode::kPermissionDenied);
  write(good->secret_key, 0600);
  EXPECT_TRUE((*client)->PutObject("rotated", "x").ok());
  // A file LoadCredentials refuses (readable by others): the keys held stay.
  write("WRONGwrongWRONGwrongWRONGwrongWRONGwrong", 0644);
  EXPECT_TRUE((*client)->DeleteObject("rotated").ok());
  ::unlink(path.c_str());
}

TEST(S3Rgw, UnreachableEndpointGivesUp) {
  Config config = BaseConfig();
  config.endpoint = "http://127.0.0.1:" + Env("S3_DEAD_PORT");
  config.retry.budget = std::chrono::milliseconds(3000);
  config.retry.max_attempts = 100;
  config.retry.initial_backoff = std::chrono::milliseconds(50);
  config.retry.max_backoff = std::chrono::milliseconds(500);
  auto client = Client::Open(config);
  ASSERT_TRUE(client.ok());
  Status st = (*client)->PutObject("k", "x");
  // Retried, then given up with the count and time in the message (no timing
  // is asserted: tests never hold a threshold on a shared machine).
  EXPECT_EQ(st.code(), StatusCode::kIoError) << st.ToString();
  EXPECT_NE(st.message().find("gave up after"), std::string::npos) << st.ToString();
  std::printf("unreachable: %s\n", st.ToString().c_str());
}

TEST(S3Rgw, SeveralThreadsShareOneClient) {
  auto client = OpenClient();
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 20; ++i) {
        std::string key = fmt::format("mt/{}/{}", t, i);
        std::string data = Pattern(1000 + i, t * 100 + i);
        if (!client->PutObject(key, data).ok()) ++failures;
        auto got = client->GetObject(key);
        if (!got.ok() || *got != data) ++failures;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
  auto page = client->ListObjects("mt/");
  ASSERT_TRUE(page.ok());
  EXPECT_EQ(page->objects.size(), 80u);
}

}  // namespace
}  // namespace t0fs::s3
