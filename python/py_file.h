// PyFile: one open t0fs file (libt0fs File) as the _t0fs binding exposes it;
// t0fs.File (python/t0fs/file.py) makes it an io.RawIOBase.
//
// Reads and writes may run from several threads at once (libt0fs allows it);
// Close waits for them: mu_ guards file_ against use after close (shared for
// I/O, exclusive for Close). Lock order: the GIL is released before mu_ is
// taken, and mu_ is released before the GIL is taken back.
#pragma once

#include <memory>
#include <mutex>
#include <shared_mutex>
#include <span>
#include <string>
#include <type_traits>
#include <utility>

#include <pybind11/pybind11.h>

#include "py_convert.h"
#include "py_errors.h"
#include "t0fs/client.h"

namespace t0fs::python {

class PyFile {
 public:
  // `owner` keeps the session alive while the file is open.
  PyFile(std::shared_ptr<client::Client> owner, std::shared_ptr<client::File> file,
         std::string path)
      : owner_(std::move(owner)),
        file_(std::move(file)),
        path_(std::move(path)),
        generation_(ForkGeneration()) {}
  ~PyFile() {
    if (InForkedChild(generation_)) {
      Abandon();
      return;
    }
    py::gil_scoped_release release;
    std::unique_lock lock(mu_);
    if (file_) (void)file_->Close();  // a destructor has nobody to tell; close() reports
    file_.reset();
    owner_.reset();
  }
  PyFile(const PyFile&) = delete;
  PyFile& operator=(const PyFile&) = delete;

  // Up to `count` bytes at `offset`, in a new bytes object (short at EOF).
  py::bytes PRead(size_t count, uint64_t offset) {
    PyObject* raw = PyBytes_FromStringAndSize(nullptr, static_cast<Py_ssize_t>(count));
    if (raw == nullptr) throw py::error_already_set();
    auto out = py::reinterpret_steal<py::bytes>(raw);
    size_t done = ReadAt({reinterpret_cast<std::byte*>(PyBytes_AS_STRING(raw)), count}, offset);
    if (done == count) return out;
    raw = out.release().ptr();  // not shared yet, so it may shrink in place
    if (_PyBytes_Resize(&raw, static_cast<Py_ssize_t>(done)) != 0) throw py::error_already_set();
    return py::reinterpret_steal<py::bytes>(raw);
  }

  // Reads into the caller's writable buffer; returns the bytes read.
  size_t PReadInto(py::handle buffer, uint64_t offset) {
    BufferView view(buffer, true);
    return ReadAt(view.bytes(), offset);
  }

  // Writes all of the caller's buffer at `offset` (at the end with O_APPEND).
  size_t PWrite(py::handle buffer, uint64_t offset) {
    BufferView view(buffer, false);
    return ValueOrRaise(WithFile([&](client::File& f) { return f.Write(offset, view.bytes()); }), path_);
  }

  void Flush() { OkOrRaise(WithFile([](client::File& f) { return f.Flush(); }), path_); }
  void Fsync(bool datasync) {
    OkOrRaise(WithFile([datasync](client::File& f) { return f.Fsync(datasync); }), path_);
  }
  void Truncate(uint64_t size) {
    OkOrRaise(WithFile([size](client::File& f) { return f.Truncate(size); }), path_);
  }

  // Commits and releases the file; idempotent. In a forked child it only
  // forgets the parent's file.
  void Close() {
    if (InForkedChild(generation_)) {
      Abandon();
      return;
    }
    Status status = WithoutGil([&] {
      std::unique_lock lock(mu_);
      if (!file_) return Status::Ok();
      Status closed = file_->Close();
      file_.reset();
      return closed;
    });
    OkOrRaise(status, path_);
  }

  bool closed() {
    if (InForkedChild(generation_)) return file_ == nullptr;
    std::shared_lock lock(mu_);
    return file_ == nullptr;
  }
  uint64_t size() {
    return WithFile([](client::File& f) { return f.size(); });
  }
  uint64_t ino() {
    return WithFile([](client::File& f) { return f.ino().value(); });
  }
  py::tuple Stat() { return StatTuple(WithFile([](client::File& f) { return f.attr(); })); }
  const std::string& path() const { return path_; }

  // The open file for a BatchIo request, which must keep it alive until
  // the request completes (closing it meanwhile fails the requests not yet
  // started); null once closed, which BatchIo completes with -EBADF.
  std::shared_ptr<client::File> Share() {
    CheckSameProcess(generation_);
    std::shared_lock lock(mu_);
    return file_;
  }

 private:
  // Runs `op` on the open file with the GIL released; EBADF once closed.
  template <class Op>
  std::invoke_result_t<Op, client::File&> WithFile(Op op) {
    CheckSameProcess(generation_);
    return WithoutGil([&] {
      std::shared_lock lock(mu_);
      if (!file_) Raise(Status(StatusCode::kBadHandle, "file is closed"), path_);
      return op(*file_);
    });
  }

  size_t ReadAt(std::span<std::byte> buf, uint64_t offset) {
    return ValueOrRaise(WithFile([&](client::File& f) { return f.Read(offset, buf); }), path_);
  }

  // The parent's file and session, seen from a forked child: never closed or
  // destroyed here (their threads are not in this process), so leaked.
  // Takes no lock: a parent's thread may have held mu_ at the fork.
  void Abandon() {
    if (file_) (void)new std::shared_ptr<client::File>(std::move(file_));
    if (owner_) (void)new std::shared_ptr<client::Client>(std::move(owner_));
  }

  std::shared_ptr<client::Client> owner_;
  std::shared_mutex mu_;  // guards file_ (see the top of this file)
  // Shared with BatchIo requests in flight (py_batch.h), which outlive a
  // close(): Close ends the file, the last owner destroys it.
  std::shared_ptr<client::File> file_;
  std::string path_;
  uint64_t generation_;
};

}  // namespace t0fs::python
