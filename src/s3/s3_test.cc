// Unit tests of src/s3 without a server: SigV4 against the AWS
// documentation's example vectors, the XML of S3 responses, the
// credential file rules, and retries against an endpoint nobody listens on.
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>

#include <gtest/gtest.h>

#include "s3/s3.h"
#include "s3/sigv4.h"
#include "s3/xml.h"

namespace t0fs::s3 {
namespace {

// The example credentials of the AWS SigV4 documentation ("Examples of
// Signature Calculations in AWS Signature Version 4", Amazon S3 API reference).
constexpr std::string_view kDocAccessKey = "AKIAIOSFODNN7EXAMPLE";
constexpr std::string_view kDocSecretKey = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";
constexpr std::string_view kDocDate = "20130524T000000Z";

TEST(SigV4, GetObjectExample) {
  SigningInput in{"GET", "/test.txt", "", {}, std::string(kEmptyPayloadSha256)};
  in.headers = {{"Host", "examplebucket.s3.amazonaws.com"},
                {"Range", "bytes=0-9"},
                {"x-amz-content-sha256", std::string(kEmptyPayloadSha256)},
                {"x-amz-date", std::string(kDocDate)}};
  Signature sig = SignV4(in, kDocAccessKey, kDocSecretKey, "us-east-1", kDocDate);
  EXPECT_EQ(sig.canonical_request,
            "GET\n/test.txt\n\nhost:examplebucket.s3.amazonaws.com\nrange:bytes=0-9\n"
            "x-amz-content-sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855\n"
            "x-amz-date:20130524T000000Z\n\nhost;range;x-amz-content-sha256;x-amz-date\n"
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sig.string_to_sign,
            "AWS4-HMAC-SHA256\n20130524T000000Z\n20130524/us-east-1/s3/aws4_request\n"
            "7344ae5b7ee6c3e7e6b0fe0640412a37625d1fbfff95c48bbb2dc43964946972");
  EXPECT_EQ(sig.signature, "f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41");
  EXPECT_EQ(sig.authorization,
            "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request,"
            "SignedHeaders=host;range;x-amz-content-sha256;x-amz-date,"
            "Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41");
}

TEST(SigV4, PutObjectExample) {
  std::string payload_hash = Sha256Hex("Welcome to Amazon S3.");
  EXPECT_EQ(payload_hash, "44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072");
  SigningInput in{"PUT", UriEncode("/test$file.text", false), "", {}, payload_hash};
  EXPECT_EQ(in.canonical_uri, "/test%24file.text");
  in.headers = {{"Date", "Fri, 24 May 2013 00:00:00 GMT"},
                {"Host", "examplebucket.s3.amazonaws.com"},
                {"x-amz-content-sha256", payload_hash},
                {"x-amz-date", std::string(kDocDate)},
                {"x-amz-storage-class", "REDUCED_REDUNDANCY"}};
  Signature sig = SignV4(in, kDocAccessKey, kDocSecretKey, "us-east-1", kDocDate);
  EXPECT_EQ(sig.signed_headers, "date;host;x-amz-content-sha256;x-amz-date;x-amz-storage-class");
  EXPECT_EQ(sig.signature, "98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd");
}

TEST(SigV4, GetBucketLifecycleExample) {
  SigningInput in{"GET", "/", CanonicalQuery({{"lifecycle", ""}}), {}, std::string(kEmptyPayloadSha256)};
  EXPECT_EQ(in.canonical_query, "lifecycle=");
  in.headers = {{"Host", "examplebucket.s3.amazonaws.com"},
                {"x-amz-content-sha256", std::string(kEmptyPayloadSha256)},
                {"x-amz-date", std::string(kDocDate)}};
  Signature sig = SignV4(in, kDocAccessKey, kDocSecretKey, "us-east-1", kDocDate);
  EXPECT_EQ(sig.signature, "fea454ca298b7da1c68078a5d1bdbfbbe0d65c699e0f91ac7a200a0136783543");
}

TEST(SigV4, ListObjectsExample) {
  SigningInput in{"GET", "/", CanonicalQuery({{"prefix", "J"}, {"max-keys", "2"}}), {},
                  std::string(kEmptyPayloadSha256)};
  EXPECT_EQ(in.canonical_query, "max-keys=2&prefix=J");
  in.headers = {{"Host", "examplebucket.s3.amazonaws.com"},
                {"x-amz-content-sha256", std::string(kEmptyPayloadSha256)},
                {"x-amz-date", std::string(kDocDate)}};
  Signature sig = SignV4(in, kDocAccessKey, kDocSecretKey, "us-east-1", kDocDate);
  EXPECT_EQ(sig.signature, "34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7");
}

TEST(SigV4, Encoding) {
  EXPECT_EQ(UriEncode("a b/c~d_e.f-g+h=i", false), "a%20b/c~d_e.f-g%2Bh%3Di");
  EXPECT_EQ(UriEncode("a/b", true), "a%2Fb");
  EXPECT_EQ(UriEncode("\xc3\xa9", false), "%C3%A9");
  EXPECT_EQ(CanonicalQuery({{"uploadId", "x/y z"}, {"partNumber", "3"}}), "partNumber=3&uploadId=x%2Fy%20z");
  // Header values: trimmed, inner runs of spaces folded.
  SigningInput in{"GET", "/", "", {{"X-Amz-Meta-A", "  a   b  "}, {"host", "h"}}, "p"};
  EXPECT_NE(SignV4(in, "k", "s", "r", kDocDate).canonical_request.find("x-amz-meta-a:a b\n"), std::string::npos);
}

TEST(S3Xml, ListObjects) {
  auto page = ParseListObjects(R"(<?xml version="1.0" encoding="UTF-8"?>
<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">
  <Name>b</Name><Prefix>ck/</Prefix><KeyCount>2</KeyCount><MaxKeys>2</MaxKeys><IsTruncated>true</IsTruncated>
  <NextContinuationToken>tok&amp;1</NextContinuationToken>
  <Contents><Key>ck/a&amp;b &lt;1&gt;</Key><LastModified>2009-10-12T17:50:30.000Z</LastModified>
    <ETag>&quot;fba9dede5f27731c9771645a39863328&quot;</ETag><Size>434234</Size><StorageClass>STANDARD</StorageClass></Contents>
  <Contents><Key>ck/&#233;</Key><LastModified>2009-10-12T17:50:31.000Z</LastModified><ETag>"x"</ETag><Size>0</Size></Contents>
  <CommonPrefixes><Prefix>ck/sub/</Prefix></CommonPrefixes>
</ListBucketResult>)");
  ASSERT_TRUE(page.ok()) << page.status().ToString();
  ASSERT_EQ(page->objects.size(), 2u);
  EXPECT_EQ(page->objects[0].key, "ck/a&b <1>");
  EXPECT_EQ(page->objects[0].size, 434234u);
  EXPECT_EQ(page->objects[0].etag, "fba9dede5f27731c9771645a39863328");
  EXPECT_EQ(page->objects[0].mtime, 1255369830);
  EXPECT_EQ(page->objects[1].key, "ck/\xc3\xa9");
  EXPECT_EQ(page->objects[1].size, 0u);
  ASSERT_EQ(page->common_prefixes.size(), 1u);
  EXPECT_EQ(page->common_prefixes[0], "ck/sub/");
  EXPECT_TRUE(page->truncated);
  EXPECT_EQ(page->next_continuation_token, "tok&1");

  auto empty = ParseListObjects("<ListBucketResult><Name>b</Name><Prefix/><IsTruncated>false</IsTruncated>"
                                "</ListBucketResult>");
  ASSERT_TRUE(empty.ok()) << empty.status().ToString();
  EXPECT_TRUE(empty->objects.empty());
  EXPECT_FALSE(empty->truncated);
}

TEST(S3Xml, MalformedIsRpcMalformed) {
  for (std::string_view bad : {
           "",
           "not xml at all",
           "<html><body>proxy error</body></html>",
           "<ListBucketResult><IsTruncated>false</IsTruncated>",
           "<ListBucketResult><Contents><Key>a</Key><Size>12x</Size></Contents><IsTruncated>false</IsTruncated>"
           "</ListBucketResult>",
           "<ListBucketResult><Contents><Key>a</Key><Size>1</Size></Contents><IsTruncated>maybe</IsTruncated>"
           "</ListBucketResult>",
           "<ListBucketResult><Contents><Key>a</Key><Size>1</Size></Contents><IsTruncated>true</IsTruncated>"
           "</ListBucketResult>",
           "<ListBucketResult><Contents><Key>a</Key><Size>1</Size><IsTruncated>false</IsTruncated>"
           "</ListBucketResult>",
           "<?xml version=\"1.0\"",
       }) {
    auto page = ParseListObjects(bad);
    ASSERT_FALSE(page.ok()) << bad;
    EXPECT_EQ(page.status().code(), StatusCode::kRpcMalformed) << bad;
  }
  EXPECT_EQ(ParseInitiateMultipart("<InitiateMultipartUploadResult></InitiateMultipartUploadResult>").status().code(),
            StatusCode::kRpcMalformed);
  EXPECT_EQ(ParseError("<Error><Message>m</Message></Error>").status().code(), StatusCode::kRpcMalformed);
}

TEST(S3Xml, Error) {
  auto e = ParseError(R"(<?xml version="1.0" encoding="UTF-8"?><Error><Code>SignatureDoesNotMatch</Code>)"
                      R"(<Message>The request signature we calculated does not match</Message>)"
                      R"(<RequestId>tx1</RequestId></Error>)");
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  EXPECT_EQ(e->code, "SignatureDoesNotMatch");
  EXPECT_EQ(e->message, "The request signature we calculated does not match");
}

TEST(S3Xml, DeleteObjects) {
  EXPECT_EQ(DeleteObjectsBody({"a", "b<&>"}),
            "<Delete><Quiet>true</Quiet><Object><Key>a</Key></Object>"
            "<Object><Key>b&lt;&amp;&gt;</Key></Object></Delete>");
  auto none = ParseDeleteResult(
      R"(<?xml version="1.0" encoding="UTF-8"?><DeleteResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"></DeleteResult>)");
  ASSERT_TRUE(none.ok()) << none.status().ToString();
  EXPECT_TRUE(none->empty());
  // A key already gone is what was asked; another error is a failure.
  auto some = ParseDeleteResult(
      "<DeleteResult><Error><Key>gone</Key><Code>NoSuchKey</Code><Message>m</Message></Error>"
      "<Error><Key>k&amp;2</Key><Code>AccessDenied</Code><Message>Access "
      "Denied</Message></Error></DeleteResult>");
  ASSERT_TRUE(some.ok()) << some.status().ToString();
  ASSERT_EQ(some->size(), 1u);
  EXPECT_EQ((*some)[0].key, "k&2");
  EXPECT_EQ((*some)[0].code, "AccessDenied");
  EXPECT_EQ(ParseDeleteResult("<Other/>").status().code(), StatusCode::kRpcMalformed);
}

TEST(S3Xml, Multipart) {
  auto id = ParseInitiateMultipart(
      R"(<?xml version="1.0" encoding="UTF-8"?><InitiateMultipartUploadResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">)"
      R"(<Bucket>b</Bucket><Key>k</Key><UploadId>2~abc</UploadId></InitiateMultipartUploadResult>)");
  ASSERT_TRUE(id.ok()) << id.status().ToString();
  EXPECT_EQ(*id, "2~abc");

  auto uploads = ParseListMultipartUploads(
      R"(<ListMultipartUploadsResult><Bucket>b</Bucket><KeyMarker></KeyMarker><UploadIdMarker/>)"
      R"(<Upload><Key>k1</Key><UploadId>u1</UploadId></Upload><Upload><Key>k2</Key><UploadId>u2</UploadId></Upload>)"
      R"(<IsTruncated>false</IsTruncated></ListMultipartUploadsResult>)");
  ASSERT_TRUE(uploads.ok()) << uploads.status().ToString();
  ASSERT_EQ(uploads->size(), 2u);
  EXPECT_EQ((*uploads)[0].key, "k1");
  EXPECT_EQ((*uploads)[1].upload_id, "u2");

  EXPECT_TRUE(ParseCompleteMultipart("<CompleteMultipartUploadResult><Location>l</Location><ETag>\"e-2\"</ETag>"
                                     "</CompleteMultipartUploadResult>")
                  .ok());
  // The error that arrives after a 200 status line.
  Status late = ParseCompleteMultipart("<Error><Code>InternalError</Code><Message>try again</Message></Error>");
  EXPECT_EQ(late.code(), StatusCode::kTryAgain);
  Status bad_part = ParseCompleteMultipart("<Error><Code>InvalidPart</Code><Message>m</Message></Error>");
  EXPECT_EQ(bad_part.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad_part.message().find("InvalidPart"), std::string::npos);

  EXPECT_EQ(CompleteMultipartBody({{1, "a"}, {2, "b&"}}),
            "<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>\"a\"</ETag></Part>"
            "<Part><PartNumber>2</PartNumber><ETag>\"b&amp;\"</ETag></Part></CompleteMultipartUpload>");
}

class CredentialsFile : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/t0fs-s3-test.XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { std::system(("rm -rf " + dir_).c_str()); }
  std::string Write(const std::string& text, mode_t mode) {
    std::string path = dir_ + "/creds" + std::to_string(n_++);
    std::ofstream(path) << text;
    ::chmod(path.c_str(), mode);
    return path;
  }
  std::string dir_;
  int n_ = 0;
};

constexpr std::string_view kSecret = "SECRETsecretSECRET0123456789abcdefSECRET";

TEST_F(CredentialsFile, Good) {
  auto creds = LoadCredentials(Write("# s3\naccess_key = AK1\n\n  secret_key=" + std::string(kSecret) + "  \n", 0600));
  ASSERT_TRUE(creds.ok()) << creds.status().ToString();
  EXPECT_EQ(creds->access_key, "AK1");
  EXPECT_EQ(creds->secret_key, kSecret);
}

TEST_F(CredentialsFile, BadModeRefused) {
  for (mode_t mode : {0644, 0640, 0604, 0660}) {
    auto creds = LoadCredentials(Write("access_key = AK1\nsecret_key = " + std::string(kSecret) + "\n", mode));
    ASSERT_FALSE(creds.ok());
    EXPECT_EQ(creds.status().code(), StatusCode::kPermissionDenied);
    EXPECT_NE(creds.status().message().find("chmod 600"), std::string::npos);
    EXPECT_EQ(creds.status().message().find(kSecret), std::string::npos);
  }
}

TEST_F(CredentialsFile, MissingOrBadKeys) {
  auto no_secret = LoadCredentials(Write("access_key = AK1\n", 0600));
  EXPECT_EQ(no_secret.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(no_secret.status().message().find("no secret_key"), std::string::npos);
  auto no_access = LoadCredentials(Write("secret_key = " + std::string(kSecret) + "\n", 0600));
  EXPECT_EQ(no_access.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(no_access.status().message().find("no access_key"), std::string::npos);
  // A line without '=' is reported by number, never quoted (it may be a key).
  auto garbage = LoadCredentials(Write("access_key = AK1\n" + std::string(kSecret) + "\n", 0600));
  EXPECT_EQ(garbage.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(garbage.status().message().find(kSecret), std::string::npos);
  EXPECT_EQ(LoadCredentials(dir_ + "/absent").status().code(), StatusCode::kNotFound);
}

TEST(S3Client, ConfigChecked) {
  Credentials creds{"AK", std::string(kSecret)};
  Config no_scheme;
  no_scheme.endpoint = "127.0.0.1:1";
  no_scheme.bucket = "b";
  EXPECT_EQ(Client::Open(no_scheme, creds).status().code(), StatusCode::kInvalidArgument);
  Config no_bucket;
  no_bucket.endpoint = "http://127.0.0.1:1";
  EXPECT_EQ(Client::Open(no_bucket, creds).status().code(), StatusCode::kInvalidArgument);
  Config small_parts;
  small_parts.endpoint = "http://h";
  small_parts.bucket = "b";
  small_parts.part_size = 1 << 20;
  EXPECT_EQ(Client::Open(small_parts, creds).status().code(), StatusCode::kInvalidArgument);
}

// Nobody listens on port 1: every attempt is refused at once, so this
// checks the retry loop (count, budget, final code) without a server.
TEST(S3Client, UnreachableEndpointRetriesThenFails) {
  Config config;
  config.endpoint = "http://127.0.0.1:1";
  config.bucket = "b";
  config.retry.max_attempts = 4;
  config.retry.initial_backoff = std::chrono::milliseconds(5);
  config.retry.max_backoff = std::chrono::milliseconds(20);
  config.retry.budget = std::chrono::milliseconds(10000);
  auto client = Client::Open(config, Credentials{"AK", std::string(kSecret)});
  ASSERT_TRUE(client.ok()) << client.status().ToString();
  auto got = (*client)->HeadObject("k");
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), StatusCode::kIoError);
  EXPECT_NE(got.status().message().find("after 4 attempts"), std::string::npos) << got.status().ToString();
  EXPECT_NE(got.status().message().find("127.0.0.1:1"), std::string::npos);
  EXPECT_EQ(got.status().message().find(kSecret), std::string::npos);
}

}  // namespace
}  // namespace t0fs::s3
