// Conversions between libt0fs values and Python objects for the _t0fs
// binding: caller buffers in (no copy), stat tuples and dicts out. All of it
// runs with the GIL held.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include <pybind11/pybind11.h>

#include "t0fs/client.h"

namespace t0fs::python {

namespace py = pybind11;

// A C-contiguous buffer of a Python object (bytes, bytearray, memoryview,
// numpy array), held for the duration of a call. While it is held the
// exporter cannot resize it, so the memory stays valid with the GIL released.
class BufferView {
 public:
  BufferView(py::handle obj, bool writable) {
    int flags = PyBUF_C_CONTIGUOUS | (writable ? PyBUF_WRITABLE : 0);
    if (PyObject_GetBuffer(obj.ptr(), &view_, flags) != 0) throw py::error_already_set();
  }
  ~BufferView() { PyBuffer_Release(&view_); }
  BufferView(const BufferView&) = delete;
  BufferView& operator=(const BufferView&) = delete;

  std::span<std::byte> bytes() const {
    return {static_cast<std::byte*>(view_.buf), static_cast<size_t>(view_.len)};
  }

 private:
  Py_buffer view_{};
};

inline int64_t Nanos(const Timespec& t) { return t.sec * 1000000000 + t.nsec; }
inline double Seconds(const Timespec& t) { return static_cast<double>(t.sec) + t.nsec * 1e-9; }

// os.stat_result's full sequence: the 10 visible fields (st_dev 0), the
// float and nanosecond times, st_blksize, st_blocks, st_rdev.
inline py::tuple StatTuple(const client::Attr& a) {
  return py::make_tuple(a.mode, a.ino.value(), 0, a.nlink, a.uid, a.gid, a.size, a.atime.sec,
                        a.mtime.sec, a.ctime.sec, Seconds(a.atime), Seconds(a.mtime), Seconds(a.ctime),
                        Nanos(a.atime), Nanos(a.mtime), Nanos(a.ctime), 4096, (a.size + 511) / 512,
                        a.rdev);
}

inline const char* ReplicaStateName(client::ReplicaState state) {
  switch (state) {
    case client::ReplicaState::kHealthy: return "healthy";
    case client::ReplicaState::kStale: return "stale";
    case client::ReplicaState::kPending: return "pending";
    case client::ReplicaState::kOffloaded:
      return "offloaded";
  }
  return "unknown";
}

inline const char* PassthroughName(client::PassthroughMode mode) {
  switch (mode) {
    case client::PassthroughMode::kNone: return "none";
    case client::PassthroughMode::kRead: return "read";
    case client::PassthroughMode::kReadWrite: return "read-write";
  }
  return "none";
}

inline py::dict LayoutDict(const std::string& path, const client::Attr& attr, const client::LayoutInfo& layout,
                           const client::PassthroughVerdict& verdict) {
  py::list chunks;
  for (const client::ChunkInfo& chunk : layout.chunks) {
    py::list replicas;
    for (const client::ReplicaInfo& r : chunk.replicas) {
      py::dict replica;
      replica["node"] = r.node.value();
      replica["volume"] = r.volume.value();
      replica["chunk"] = r.chunk.value();
      replica["version"] = r.version;
      replica["local"] = r.local;
      replica["state"] = ReplicaStateName(r.state);
      replicas.append(replica);
    }
    py::dict entry;
    entry["index"] = chunk.index;
    entry["offset"] = chunk.index * layout.chunk_size;
    entry["replicas"] = replicas;
    chunks.append(entry);
  }
  py::dict out;
  out["path"] = path;
  out["ino"] = attr.ino.value();
  out["size"] = layout.size;
  out["chunk_size"] = layout.chunk_size;
  out["chunks"] = chunks;
  out["passthrough"] = PassthroughName(verdict.mode);
  out["passthrough_reason"] = verdict.reason;
  return out;
}

inline py::dict StatFsDict(const client::StatFs& fs) {
  py::dict out;
  out["total_bytes"] = fs.total_bytes;
  out["free_bytes"] = fs.free_bytes;
  out["files"] = fs.files;
  out["block_size"] = fs.block_size;
  out["max_name"] = fs.max_name;
  return out;
}

inline py::dict CountersDict(const client::IoCounters& n) {
  py::dict out;
  out["local_read_bytes"] = n.local_read_bytes;
  out["local_write_bytes"] = n.local_write_bytes;
  out["remote_read_bytes"] = n.remote_read_bytes;
  out["remote_write_bytes"] = n.remote_write_bytes;
  out["local_reads"] = n.local_reads;
  out["remote_reads"] = n.remote_reads;
  out["checksum_errors"] = n.checksum_errors;
  out["replica_failovers"] = n.replica_failovers;
  out["replica_write_failures"] = n.replica_write_failures;
  out["stage_back_requests"] = n.stage_back_requests;
  return out;
}

}  // namespace t0fs::python
