#include "s3/xml.h"

#include <charconv>
#include <cstdio>
#include <ctime>

#include <fmt/format.h>

namespace t0fs::s3 {
namespace {

Status Malformed(std::string_view what) {
  return Status(StatusCode::kRpcMalformed, fmt::format("s3 response: {}", what));
}

bool IsNameEnd(char c) { return c == '>' || c == ' ' || c == '/' || c == '\t' || c == '\n' || c == '\r'; }

// The content of each <name ...>...</name> (or <name/>) directly in `xml`.
Result<std::vector<std::string_view>> Elements(std::string_view xml, std::string_view name) {
  std::vector<std::string_view> out;
  std::string open = "<" + std::string(name);
  std::string close = "</" + std::string(name) + ">";
  size_t pos = 0;
  while ((pos = xml.find(open, pos)) != std::string_view::npos) {
    size_t after = pos + open.size();
    if (after >= xml.size() || !IsNameEnd(xml[after])) {
      pos = after;
      continue;
    }
    size_t tag_end = xml.find('>', after);
    if (tag_end == std::string_view::npos) return Malformed(fmt::format("unterminated <{}>", name));
    if (xml[tag_end - 1] == '/') {
      out.emplace_back();
      pos = tag_end + 1;
      continue;
    }
    size_t end = xml.find(close, tag_end + 1);
    if (end == std::string_view::npos) return Malformed(fmt::format("<{}> not closed", name));
    out.push_back(xml.substr(tag_end + 1, end - tag_end - 1));
    pos = end + close.size();
  }
  return out;
}

std::string Unescape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '&') {
      out.push_back(text[i]);
      continue;
    }
    size_t semi = text.find(';', i);
    if (semi == std::string_view::npos) {
      out.push_back('&');
      continue;
    }
    std::string_view entity = text.substr(i + 1, semi - i - 1);
    if (entity == "amp") out.push_back('&');
    else if (entity == "lt") out.push_back('<');
    else if (entity == "gt") out.push_back('>');
    else if (entity == "quot") out.push_back('"');
    else if (entity == "apos") out.push_back('\'');
    else if (entity.size() > 1 && entity[0] == '#') {
      unsigned code = 0;
      bool hex = entity[1] == 'x' || entity[1] == 'X';
      std::string_view digits = entity.substr(hex ? 2 : 1);
      auto [p, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), code, hex ? 16 : 10);
      if (ec != std::errc() || p != digits.data() + digits.size() || code > 0x10FFFF) {
        out.append(text.substr(i, semi - i + 1));
      } else if (code < 0x80) {
        out.push_back(static_cast<char>(code));
      } else if (code < 0x800) {
        out.push_back(static_cast<char>(0xC0 | (code >> 6)));
        out.push_back(static_cast<char>(0x80 | (code & 0x3F)));
      } else if (code < 0x10000) {
        out.push_back(static_cast<char>(0xE0 | (code >> 12)));
        out.push_back(static_cast<char>(0x80 | ((code >> 6) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | (code & 0x3F)));
      } else {
        out.push_back(static_cast<char>(0xF0 | (code >> 18)));
        out.push_back(static_cast<char>(0x80 | ((code >> 12) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | ((code >> 6) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | (code & 0x3F)));
      }
    } else {
      out.append(text.substr(i, semi - i + 1));
    }
    i = semi;
  }
  return out;
}

// The text of the first <name> in `xml`; empty when absent.
Result<std::string> Text(std::string_view xml, std::string_view name) {
  ASSIGN_OR_RETURN(auto found, Elements(xml, name));
  if (found.empty()) return std::string();
  return Unescape(found.front());
}

// The content of the root element `name`, after an optional <?xml ...?>.
Result<std::string_view> Root(std::string_view xml, std::string_view name) {
  size_t pos = xml.find_first_not_of(" \t\r\n");
  if (pos != std::string_view::npos && xml.substr(pos, 5) == "<?xml") {
    size_t end = xml.find("?>", pos);
    if (end == std::string_view::npos) return Malformed("unterminated XML declaration");
    pos = xml.find_first_not_of(" \t\r\n", end + 2);
  }
  if (pos == std::string_view::npos) return Malformed(fmt::format("empty body where <{}> was expected", name));
  std::string_view rest = xml.substr(pos);
  std::string open = "<" + std::string(name);
  if (rest.substr(0, open.size()) != open || rest.size() == open.size() || !IsNameEnd(rest[open.size()])) {
    return Malformed(fmt::format("expected <{}>, got '{}'", name, rest.substr(0, 40)));
  }
  ASSIGN_OR_RETURN(auto roots, Elements(rest, name));
  if (roots.empty()) return Malformed(fmt::format("<{}> not closed", name));
  return roots.front();
}

Result<uint64_t> Number(std::string_view xml, std::string_view name) {
  ASSIGN_OR_RETURN(std::string text, Text(xml, name));
  uint64_t v = 0;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || p != text.data() + text.size() || text.empty()) {
    return Malformed(fmt::format("<{}> is not a number: '{}'", name, text.substr(0, 40)));
  }
  return v;
}

}  // namespace

std::optional<int64_t> ParseIsoTime(std::string_view text) {
  std::tm tm{};
  int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
  std::string s(text);
  if (std::sscanf(s.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d", &year, &month, &day, &hour, &minute, &second) != 6) {
    return std::nullopt;
  }
  tm.tm_year = year - 1900;
  tm.tm_mon = month - 1;
  tm.tm_mday = day;
  tm.tm_hour = hour;
  tm.tm_min = minute;
  tm.tm_sec = second;
  return static_cast<int64_t>(timegm(&tm));
}

std::string XmlEscape(std::string_view text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default: out.push_back(c);
    }
  }
  return out;
}

std::string Unquote(std::string_view etag) {
  if (etag.size() >= 2 && etag.front() == '"' && etag.back() == '"') etag = etag.substr(1, etag.size() - 2);
  return std::string(etag);
}

Result<ErrorReply> ParseError(std::string_view xml) {
  ASSIGN_OR_RETURN(std::string_view root, Root(xml, "Error"));
  ErrorReply reply;
  ASSIGN_OR_RETURN(reply.code, Text(root, "Code"));
  ASSIGN_OR_RETURN(reply.message, Text(root, "Message"));
  if (reply.code.empty()) return Malformed("<Error> without <Code>");
  return reply;
}

Result<ListPage> ParseListObjects(std::string_view xml) {
  ASSIGN_OR_RETURN(std::string_view root, Root(xml, "ListBucketResult"));
  ListPage page;
  ASSIGN_OR_RETURN(auto contents, Elements(root, "Contents"));
  for (std::string_view entry : contents) {
    ListEntry e;
    ASSIGN_OR_RETURN(e.key, Text(entry, "Key"));
    if (e.key.empty()) return Malformed("<Contents> without <Key>");
    ASSIGN_OR_RETURN(e.size, Number(entry, "Size"));
    ASSIGN_OR_RETURN(std::string etag, Text(entry, "ETag"));
    e.etag = Unquote(etag);
    ASSIGN_OR_RETURN(std::string modified, Text(entry, "LastModified"));
    e.mtime = ParseIsoTime(modified).value_or(0);
    page.objects.push_back(std::move(e));
  }
  ASSIGN_OR_RETURN(auto prefixes, Elements(root, "CommonPrefixes"));
  for (std::string_view p : prefixes) {
    ASSIGN_OR_RETURN(std::string prefix, Text(p, "Prefix"));
    page.common_prefixes.push_back(std::move(prefix));
  }
  // <Contents> and <CommonPrefixes> hold their own <Key>/<Prefix>; the
  // truncation fields sit at the top level only.
  ASSIGN_OR_RETURN(std::string truncated, Text(root, "IsTruncated"));
  if (truncated != "true" && truncated != "false") return Malformed("<IsTruncated> is neither true nor false");
  page.truncated = truncated == "true";
  ASSIGN_OR_RETURN(page.next_continuation_token, Text(root, "NextContinuationToken"));
  if (page.truncated && page.next_continuation_token.empty()) {
    return Malformed("truncated listing without <NextContinuationToken>");
  }
  return page;
}

Result<std::string> ParseInitiateMultipart(std::string_view xml) {
  ASSIGN_OR_RETURN(std::string_view root, Root(xml, "InitiateMultipartUploadResult"));
  ASSIGN_OR_RETURN(std::string id, Text(root, "UploadId"));
  if (id.empty()) return Malformed("<InitiateMultipartUploadResult> without <UploadId>");
  return id;
}

Result<std::vector<UploadRef>> ParseListMultipartUploads(std::string_view xml) {
  ASSIGN_OR_RETURN(std::string_view root, Root(xml, "ListMultipartUploadsResult"));
  ASSIGN_OR_RETURN(auto uploads, Elements(root, "Upload"));
  std::vector<UploadRef> out;
  for (std::string_view u : uploads) {
    UploadRef ref;
    ASSIGN_OR_RETURN(ref.key, Text(u, "Key"));
    ASSIGN_OR_RETURN(ref.upload_id, Text(u, "UploadId"));
    if (ref.upload_id.empty()) return Malformed("<Upload> without <UploadId>");
    out.push_back(std::move(ref));
  }
  return out;
}

Status ParseCompleteMultipart(std::string_view xml) {
  if (auto error = ParseError(xml); error.ok()) {
    StatusCode code = (error->code == "InternalError" || error->code == "SlowDown" ||
                       error->code == "ServiceUnavailable")
                          ? StatusCode::kTryAgain
                          : StatusCode::kInvalidArgument;
    return Status(code, fmt::format("complete multipart upload: {}: {}", error->code, error->message));
  }
  auto root = Root(xml, "CompleteMultipartUploadResult");
  return root.ok() ? Status::Ok() : root.status();
}

std::string CompleteMultipartBody(const std::vector<CompletedPart>& parts) {
  std::string body = "<CompleteMultipartUpload>";
  for (const CompletedPart& part : parts) {
    body += fmt::format("<Part><PartNumber>{}</PartNumber><ETag>\"{}\"</ETag></Part>", part.number,
                        XmlEscape(part.etag));
  }
  body += "</CompleteMultipartUpload>";
  return body;
}

std::string DeleteObjectsBody(const std::vector<std::string>& keys) {
  std::string body = "<Delete><Quiet>true</Quiet>";
  for (const std::string& key : keys)
    body += fmt::format("<Object><Key>{}</Key></Object>", XmlEscape(key));
  body += "</Delete>";
  return body;
}

Result<std::vector<DeleteFailure>> ParseDeleteResult(std::string_view xml) {
  ASSIGN_OR_RETURN(std::string_view root, Root(xml, "DeleteResult"));
  ASSIGN_OR_RETURN(auto errors, Elements(root, "Error"));
  std::vector<DeleteFailure> out;
  for (std::string_view e : errors) {
    DeleteFailure failure;
    ASSIGN_OR_RETURN(failure.key, Text(e, "Key"));
    ASSIGN_OR_RETURN(failure.code, Text(e, "Code"));
    ASSIGN_OR_RETURN(failure.message, Text(e, "Message"));
    if (failure.code == "NoSuchKey") continue;  // gone already: what was asked
    out.push_back(std::move(failure));
  }
  return out;
}

}  // namespace t0fs::s3
