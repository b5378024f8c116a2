// The XML of S3 responses and requests: just enough of XML for S3's flat,
// namespace-free documents (no DTDs, no CDATA, elements of one name never
// nested in themselves). Anything that does not fit is kRpcMalformed, never
// an exception or an assert: this parses outside input.
//
// Thread safety: pure functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "s3/s3.h"

namespace t0fs::s3 {

// S3's <Error><Code>..</Code><Message>..</Message>...</Error>.
struct ErrorReply {
  std::string code;       // "NoSuchKey", "SignatureDoesNotMatch"
  std::string message;
};

Result<ErrorReply> ParseError(std::string_view xml);
Result<ListPage> ParseListObjects(std::string_view xml);            // ListBucketResult (V2)
Result<std::string> ParseInitiateMultipart(std::string_view xml);   // the UploadId
Result<std::vector<UploadRef>> ParseListMultipartUploads(std::string_view xml);
// CompleteMultipartUpload answers 200 and then either a result or an
// <Error> (the error can come after the status line): Ok, or the error as
// kTryAgain (InternalError, SlowDown) or kInvalidArgument (InvalidPart...).
Status ParseCompleteMultipart(std::string_view xml);
std::string CompleteMultipartBody(const std::vector<CompletedPart>& parts);
// The body of a quiet multi-object delete, and its answer: the keys not
// deleted (a quiet answer lists only those).
std::string DeleteObjectsBody(const std::vector<std::string>& keys);
Result<std::vector<DeleteFailure>> ParseDeleteResult(std::string_view xml);

// "2009-10-12T17:50:30.000Z" -> seconds since the epoch.
std::optional<int64_t> ParseIsoTime(std::string_view text);
std::string XmlEscape(std::string_view text);
// Strips the quotes S3 puts around an ETag.
std::string Unquote(std::string_view etag);

}  // namespace t0fs::s3
