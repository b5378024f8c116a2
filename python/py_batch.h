// PyBatch: libt0fs's BatchIo (t0fs/batch_io.h) as the _t0fs binding exposes
// it; t0fs.Batch (python/t0fs/batch.py) builds the pythonic API on it
// (depth, completions with data and OSError, read_many).
//
// Buffers: a request reads into (or writes from) the caller's own Python
// buffer, without a copy. BatchIo wants registered memory starting on a page
// boundary, so each request registers the span from its buffer's start
// rounded down to a page to its end, and addresses the caller's bytes at
// the offset inside it; BatchIo touches only the request's range, never the
// bytes before it. The registration and the Py_buffer (which pins the
// object: a bytearray cannot be resized while it is exported) are held until
// the request's completion is reaped, so the memory stays valid with the GIL
// released. The File of each request is shared with the PyFile, so closing
// the file only fails the requests that have not started.
//
// Thread safety: pending_ is guarded by the GIL (every method runs with it
// held, except inside BatchIo::Wait and Close); BatchIo itself is
// thread-safe, so two threads may wait at once and reap different requests.
#pragma once

#include <pybind11/pybind11.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <span>
#include <unordered_map>
#include <utility>
#include <vector>

#include "py_errors.h"
#include "py_file.h"
#include "t0fs/batch_io.h"
#include "t0fs/client.h"

namespace t0fs::python {

class PyBatch {
 public:
  PyBatch(std::shared_ptr<client::Client> owner, const client::BatchIoOptions& options)
      : owner_(std::move(owner)), generation_(ForkGeneration()) {
    client::Client& c = *owner_;
    batch_ = ValueOrRaise(WithoutGil([&] { return c.OpenBatchIo(options); }), "");
  }
  ~PyBatch() {
    if (InForkedChild(generation_)) {
      // The parent's BatchIo: its workers are not in this process.
      (void)batch_.release();
      for (auto& [id, req] : pending_) (void)new Pending(std::move(req));
      pending_.clear();
      if (owner_) (void)new std::shared_ptr<client::Client>(std::move(owner_));
      return;
    }
    try {
      Close();
    } catch (const StatusError&) {  // a destructor has nobody to tell; close() reports
    }
  }
  PyBatch(const PyBatch&) = delete;
  PyBatch& operator=(const PyBatch&) = delete;

  // Starts one request: a read into `buffer` (writable) or a write of it, at
  // `offset` of `file`; returns its id (the completion's). A request BatchIo
  // refuses (closed file, write of a read-only file) completes with -errno;
  // a buffer that is not contiguous (or not writable for a read) raises.
  uint64_t Submit(PyFile& file, bool write, uint64_t offset, py::handle buffer) {
    client::BatchIo& batch = Get();
    Pending req;
    req.file = file.Share();  // before the buffer: nothing to release if it throws
    req.view = std::make_unique<Py_buffer>();
    int flags = PyBUF_C_CONTIGUOUS | (write ? 0 : PyBUF_WRITABLE);
    if (PyObject_GetBuffer(buffer.ptr(), req.view.get(), flags) != 0) throw py::error_already_set();
    auto* start = static_cast<std::byte*>(req.view->buf);
    const auto length = static_cast<uint64_t>(req.view->len);
    // An empty buffer's pointer may be anything; register a page of ours.
    std::span<std::byte> registered;
    uint64_t inside = 0;
    if (length == 0) {
      registered = EmptyPage();
    } else {
      auto* page = reinterpret_cast<std::byte*>(reinterpret_cast<uintptr_t>(start) & ~(kPage - 1));
      inside = static_cast<uint64_t>(start - page);
      registered = {page, inside + length};
    }
    auto index = batch.RegisterBuffer(registered);
    if (!index.ok()) {
      PyBuffer_Release(req.view.get());
      Raise(index.status(), file.path());
    }
    req.buffer = *index;
    const uint64_t id = next_id_++;
    client::BatchRequest request{.file = req.file.get(),
                                 .op = write ? client::BatchOp::kWrite : client::BatchOp::kRead,
                                 .offset = offset,
                                 .length = length,
                                 .buffer = req.buffer,
                                 .buffer_offset = inside,
                                 .user_data = id};
    Status submitted = WithoutGil([&] { return batch.Submit(std::span(&request, 1)); });
    if (!submitted.ok()) {
      (void)batch.UnregisterBuffer(req.buffer);
      PyBuffer_Release(req.view.get());
      Raise(submitted, file.path());
    }
    pending_.emplace(id, std::move(req));
    return id;
  }

  // Up to `max` completions as (id, result) with result the bytes moved or
  // -errno, waiting (GIL released) until `min` are there, nothing is in
  // flight, or `timeout` seconds passed (negative: no limit).
  py::list Wait(size_t min, size_t max, double timeout) {
    client::BatchIo& batch = Get();
    std::vector<client::BatchCompletion> done(std::max<size_t>(max, 1));
    const auto limit = timeout < 0
                           ? std::chrono::milliseconds(std::chrono::hours(24 * 365))
                           : std::chrono::milliseconds(static_cast<int64_t>(timeout * 1000));
    size_t got = ValueOrRaise(WithoutGil([&] { return batch.Wait(done, min, limit); }), "");
    py::list out;
    for (size_t done_idx = 0; done_idx < got; ++done_idx) {
      const client::BatchCompletion& completion = done[done_idx];
      Reap(completion.user_data);
      out.append(py::make_tuple(completion.user_data, completion.result));
    }
    return out;
  }

  // Submitted and not yet returned by Wait.
  size_t pending() const { return pending_.size(); }

  // Waits for the requests in flight, then releases their buffers and files.
  // Idempotent.
  void Close() {
    if (!batch_) return;
    CheckSameProcess(generation_);
    Status closed = WithoutGil([&] { return batch_->Close(); });
    for (auto& [id, req] : pending_) Release(req);
    pending_.clear();
    WithoutGil([&] {
      batch_.reset();
      owner_.reset();
      return 0;
    });
    OkOrRaise(closed, "");
  }
  bool closed() const { return batch_ == nullptr; }

 private:
  static constexpr uintptr_t kPage = 4096;

  // One request in flight: what keeps its memory and file valid.
  struct Pending {
    std::unique_ptr<Py_buffer> view;  // released (GIL held) when reaped
    std::shared_ptr<client::File> file;
    uint32_t buffer = 0;  // BatchIo's registration index
  };

  client::BatchIo& Get() {
    CheckSameProcess(generation_);
    if (!batch_) throw std::runtime_error("the t0fs batch is closed");
    return *batch_;
  }

  // The request is complete: its buffer is no longer used (BatchIo drops the
  // registration's users before it posts the completion).
  void Reap(uint64_t id) {
    auto it = pending_.find(id);
    if (it == pending_.end()) return;
    (void)batch_->UnregisterBuffer(it->second.buffer);
    Release(it->second);
    pending_.erase(it);
  }

  // GIL held. The File may be the last reference (its PyFile closed).
  static void Release(Pending& req) {
    if (req.view) PyBuffer_Release(req.view.get());
    req.view.reset();
    if (req.file) {
      py::gil_scoped_release release;
      req.file.reset();
    }
  }

  std::span<std::byte> EmptyPage() {
    if (!empty_page_) {
      empty_page_.reset(static_cast<std::byte*>(std::aligned_alloc(kPage, kPage)));
      if (!empty_page_) throw std::bad_alloc();
    }
    return {empty_page_.get(), kPage};
  }

  struct FreeDeleter {
    void operator()(std::byte* p) const { std::free(p); }
  };

  std::shared_ptr<client::Client> owner_;
  std::unique_ptr<client::BatchIo> batch_;
  std::unordered_map<uint64_t, Pending> pending_;  // by request id; GIL-guarded
  std::unique_ptr<std::byte, FreeDeleter> empty_page_;
  uint64_t next_id_ = 1;
  uint64_t generation_;
};

}  // namespace t0fs::python
