#include "common/status.h"

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

namespace t0fs {

int ToErrno(StatusCode code) {
  switch (code) {
#define T0FS_STATUS_ERRNO(name, number, err, text) \
  case StatusCode::name:                           \
    return err;
    T0FS_STATUS_CODES(T0FS_STATUS_ERRNO)
#undef T0FS_STATUS_ERRNO
  }
  return EIO;
}

std::string_view CodeText(StatusCode code) {
  switch (code) {
#define T0FS_STATUS_TEXT(name, number, err, text) \
  case StatusCode::name:                          \
    return text;
    T0FS_STATUS_CODES(T0FS_STATUS_TEXT)
#undef T0FS_STATUS_TEXT
  }
  return "unknown status";
}

StatusCode CodeFromWire(uint32_t number) {
  switch (number) {
#define T0FS_STATUS_WIRE(name, num, err, text) \
  case num:                                    \
    return StatusCode::name;
    T0FS_STATUS_CODES(T0FS_STATUS_WIRE)
#undef T0FS_STATUS_WIRE
  }
  return StatusCode::kRpcMalformed;
}

StatusCode CodeFromErrno(int err) {
  switch (err) {
    case 0: return StatusCode::kOk;
    case EINVAL: return StatusCode::kInvalidArgument;
    case ENOENT: return StatusCode::kNotFound;
    case EEXIST: return StatusCode::kExists;
    case ENOTDIR: return StatusCode::kNotDirectory;
    case EISDIR: return StatusCode::kIsDirectory;
    case ENOTEMPTY: return StatusCode::kNotEmpty;
    case EACCES: return StatusCode::kPermissionDenied;
    case EPERM: return StatusCode::kNotPermitted;
    case ENAMETOOLONG: return StatusCode::kNameTooLong;
    case ENODATA: return StatusCode::kNoData;
    case ERANGE: return StatusCode::kRange;
    case EFBIG: return StatusCode::kFileTooBig;
    case ENOSPC: case EDQUOT: return StatusCode::kNoSpace;
    case EBADF: return StatusCode::kBadHandle;
    case EMLINK: return StatusCode::kTooManyLinks;
    case ESTALE: return StatusCode::kStale;
    case ENOTSUP: return StatusCode::kNotSupported;
    case ENOSYS: return StatusCode::kUnimplemented;
    case EBUSY: return StatusCode::kBusy;
    case EXDEV: return StatusCode::kCrossDevice;
    case EAGAIN: return StatusCode::kTryAgain;
    case EINTR: return StatusCode::kInterrupted;
    case EROFS: return StatusCode::kReadOnly;
    case ELOOP: return StatusCode::kLoop;
    case E2BIG: return StatusCode::kTooBig;
    case ETIMEDOUT: return StatusCode::kRpcTimeout;
    case ECONNREFUSED: case EHOSTUNREACH: case ENETUNREACH: return StatusCode::kRpcConnect;
    case ECONNRESET: case EPIPE: return StatusCode::kRpcClosed;
    default: return StatusCode::kIoError;
  }
}

Status::Status(StatusCode code, std::string message) : code_(code) {
  if (!message.empty()) message_ = std::make_shared<const std::string>(std::move(message));
}

Status Status::FromErrno(int err, std::string_view what) {
  return Status(CodeFromErrno(err), fmt::format("{}: {}", what, std::strerror(err)));
}

const std::string& Status::message() const {
  static const std::string kEmpty;
  return message_ ? *message_ : kEmpty;
}

std::string Status::ToString() const {
  if (!message_) return std::string(CodeText(code_));
  return fmt::format("{}: {}", CodeText(code_), *message_);
}

Status Status::WithContext(std::string_view context) const {
  if (ok()) return *this;
  if (!message_) return Status(code_, std::string(context));
  return Status(code_, fmt::format("{}: {}", context, *message_));
}

}  // namespace t0fs
