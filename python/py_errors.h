// Errors, the GIL and process ownership for the _t0fs binding
// (python/t0fs_module.cc; everything here is in that one translation unit).
//
// A failed libt0fs call becomes OSError(errno, strerror, path[, None,
// path2]), so Python picks the subclass (FileNotFoundError, ...). Calls throw
// StatusError, possibly where the GIL is released and no Python object may be
// touched; the translator the module registers turns it into the OSError
// with the GIL held.
//
// A Client and its Files belong to the process that connected: objects
// remember the fork generation they were made in, and in a forked child
// (DataLoader workers) they raise instead of using the parent's threads and
// sockets, which do not exist there.
#pragma once

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <utility>

#include <pybind11/pybind11.h>

#include "common/status.h"

namespace t0fs::python {

namespace py = pybind11;

// Bumped in every forked child (pthread_atfork, registered by the module).
inline std::atomic<uint64_t> g_fork_generation{0};

inline uint64_t ForkGeneration() { return g_fork_generation.load(std::memory_order_relaxed); }
inline bool InForkedChild(uint64_t generation) { return generation != ForkGeneration(); }

inline void CheckSameProcess(uint64_t generation) {
  if (InForkedChild(generation)) {
    throw std::runtime_error(
        "this t0fs client was connected in another process (before a fork); "
        "connect again in this process");
  }
}

// Carries a failed Status out of a GIL-released region to the translator.
struct StatusError {
  Status status;
  std::string path;   // the OSError's filename; empty for none
  std::string path2;  // filename2 (rename's target)
};

[[noreturn]] inline void Raise(const Status& status, std::string path, std::string path2 = "") {
  throw StatusError{status, std::move(path), std::move(path2)};
}

inline void OkOrRaise(const Status& status, const std::string& path) {
  if (!status.ok()) Raise(status, path);
}

template <class T>
T ValueOrRaise(Result<T> result, const std::string& path) {
  if (!result.ok()) Raise(result.status(), path);
  return std::move(result).value();
}

// Runs `fn` (libt0fs calls only, no Python objects) with the GIL released.
template <class Fn>
auto WithoutGil(Fn&& fn) {
  py::gil_scoped_release release;
  return fn();
}

// Sets the Python error for `error`; GIL held.
inline void SetOSError(const StatusError& error) {
  int err = ToErrno(error.status.code());
  if (err == 0) err = EIO;
  std::string text = std::strerror(err);
  // The t0fs message adds what the errno cannot say (which node, which
  // chunk); a message that only repeats the path would be noise.
  const std::string& message = error.status.message();
  if (!message.empty() && message != error.path) text += " (t0fs: " + error.status.ToString() + ")";
  py::object os_error = py::module_::import("builtins").attr("OSError");
  py::object exc = error.path.empty()    ? os_error(err, text)
                   : error.path2.empty() ? os_error(err, text, error.path)
                                         : os_error(err, text, error.path, py::none(), error.path2);
  PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(exc.ptr())), exc.ptr());
}

}  // namespace t0fs::python
