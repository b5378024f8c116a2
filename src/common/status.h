// Status and Result<T>: the one error channel of t0fs.
//
// A Status is a code from the table below plus an optional message that names
// what failed (a path, a chunk, a node). Codes are grouped by subsystem and are
// stable: they travel on the wire (rpc frames carry the numeric code), so a
// value is never reused or renumbered. ToErrno() is the single mapping from a
// code to a POSIX errno, used by the FUSE adapter and the native API.
//
// Thread safety: Status and Result are values; const methods may be called
// from several threads, mutation needs external synchronization.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace t0fs {

// X(name, number, errno, text). Numbers: 0 ok, 1xx generic/POSIX-like,
// 2xx rpc, 3xx meta, 4xx data, 5xx client, 6xx fuse.
#define T0FS_STATUS_CODES(X)                                           \
  X(kOk, 0, 0, "ok")                                                   \
  X(kInvalidArgument, 100, EINVAL, "invalid argument")                 \
  X(kNotFound, 101, ENOENT, "not found")                               \
  X(kExists, 102, EEXIST, "already exists")                            \
  X(kNotDirectory, 103, ENOTDIR, "not a directory")                    \
  X(kIsDirectory, 104, EISDIR, "is a directory")                       \
  X(kNotEmpty, 105, ENOTEMPTY, "directory not empty")                  \
  X(kPermissionDenied, 106, EACCES, "permission denied")               \
  X(kNotPermitted, 107, EPERM, "operation not permitted")              \
  X(kNameTooLong, 108, ENAMETOOLONG, "name too long")                  \
  X(kNoData, 109, ENODATA, "no such attribute")                        \
  X(kRange, 110, ERANGE, "result too large")                           \
  X(kFileTooBig, 111, EFBIG, "file too big")                           \
  X(kNoSpace, 112, ENOSPC, "no space left")                            \
  X(kIoError, 113, EIO, "i/o error")                                   \
  X(kBadHandle, 114, EBADF, "bad file handle")                         \
  X(kTooManyLinks, 115, EMLINK, "too many links")                      \
  X(kStale, 116, ESTALE, "stale file handle")                          \
  X(kNotSupported, 117, ENOTSUP, "not supported")                      \
  X(kUnimplemented, 118, ENOSYS, "not implemented")                    \
  X(kBusy, 119, EBUSY, "busy")                                         \
  X(kCrossDevice, 120, EXDEV, "cross-device link")                     \
  X(kTryAgain, 121, EAGAIN, "try again")                               \
  X(kInterrupted, 122, EINTR, "interrupted")                           \
  X(kReadOnly, 123, EROFS, "read-only file system")                    \
  X(kLoop, 124, ELOOP, "too many levels of symbolic links")            \
  X(kInternal, 125, EIO, "internal error")                             \
  X(kCorruption, 126, EIO, "data corruption detected")                 \
  X(kTooBig, 127, E2BIG, "argument list too long")                     \
  X(kRpcConnect, 200, EIO, "cannot connect")                           \
  X(kRpcClosed, 201, EIO, "connection closed")                         \
  X(kRpcTimeout, 202, ETIMEDOUT, "timed out")                          \
  X(kRpcMalformed, 203, EIO, "malformed frame")                        \
  X(kRpcUnknownMethod, 204, ENOSYS, "unknown rpc method")              \
  X(kRpcUnauthenticated, 205, EACCES, "not authenticated")             \
  X(kRpcTooLarge, 206, EIO, "frame too large")                         \
  X(kMetaNoSession, 300, ESTALE, "no such client session")             \
  X(kMetaNoNode, 301, ENOENT, "no such node")                          \
  X(kMetaNoVolumes, 302, ENOSPC, "no data volume available")           \
  X(kMetaSchema, 303, EIO, "metadata schema mismatch")                 \
  X(kMetaDatabase, 304, EIO, "metadata database error")                \
  X(kMetaNodesDown, 305, EIO, "no data node is up")                    \
  X(kMetaNodesLost, 306, EIO, "data nodes lost")                       \
  X(kDataNoChunk, 400, EIO, "chunk not found")                         \
  X(kDataNoVolume, 401, EIO, "volume not found")                       \
  X(kDataChecksum, 402, EIO, "checksum mismatch")                      \
  X(kDataWrongCluster, 403, EIO, "volume belongs to another cluster")  \
  X(kDataBadCapability, 404, EACCES, "invalid chunk capability")       \
  X(kDataCapabilityExpired, 405, ESTALE, "chunk capability expired")   \
  X(kClientNoLocalNode, 500, EIO, "no local data service")             \
  X(kFuseProtocol, 600, EIO, "fuse protocol error")

enum class StatusCode : uint16_t {
#define T0FS_STATUS_ENUM(name, number, err, text) name = number,
  T0FS_STATUS_CODES(T0FS_STATUS_ENUM)
#undef T0FS_STATUS_ENUM
};

// The errno a code maps to (0 for kOk). The one place codes become errnos.
int ToErrno(StatusCode code);
// Short text of a code ("not found").
std::string_view CodeText(StatusCode code);
// The code for a raw number read off the wire; kRpcMalformed if unknown.
StatusCode CodeFromWire(uint32_t number);
// The code that best describes an errno (for wrapping failed syscalls).
StatusCode CodeFromErrno(int err);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message);
  explicit Status(StatusCode code) : code_(code) {}

  static Status Ok() { return Status(); }
  // A failed syscall: code from errno, message "what: strerror".
  static Status FromErrno(int err, std::string_view what);

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const;
  // "not found: /a/b" style text for logs and error output.
  std::string ToString() const;
  // Adds context in front of the message: "open chunk 42: <old message>".
  Status WithContext(std::string_view context) const;

  friend bool operator==(const Status& a, StatusCode c) { return a.code_ == c; }

 private:
  StatusCode code_ = StatusCode::kOk;
  std::shared_ptr<const std::string> message_;  // null when empty; shared so copies are cheap
};

// A value or a non-ok Status. Modelled on std::expected (not in g++ 12).
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}  // NOLINT: implicit by design
  Result(Status status) : v_(std::move(status)) {}  // NOLINT: must not be ok
  Result(StatusCode code, std::string message) : v_(Status(code, std::move(message))) {}

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }
  T& value() & { return std::get<0>(v_); }
  const T& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  // The error; Status::Ok() when a value is held.
  Status status() const { return ok() ? Status::Ok() : std::get<1>(v_); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace t0fs

#define T0FS_CONCAT_INNER(a, b) a##b
#define T0FS_CONCAT(a, b) T0FS_CONCAT_INNER(a, b)

// Returns the status from the enclosing function if it is not ok.
#define RETURN_IF_ERROR(expr)                 \
  do {                                        \
    ::t0fs::Status _st = (expr);              \
    if (!_st.ok()) return _st;                \
  } while (0)

// Same, for coroutines.
#define CO_RETURN_IF_ERROR(expr)              \
  do {                                        \
    ::t0fs::Status _st = (expr);              \
    if (!_st.ok()) co_return _st;             \
  } while (0)

// `ASSIGN_OR_RETURN(auto x, F())`: binds the value or returns the error.
#define ASSIGN_OR_RETURN(lhs, expr) \
  ASSIGN_OR_RETURN_IMPL(T0FS_CONCAT(_res_, __LINE__), lhs, expr)
#define ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                          \
  if (!tmp.ok()) return tmp.status();         \
  lhs = std::move(tmp).value()
