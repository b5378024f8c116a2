// _t0fs: the native part of the `t0fs` Python package, a thin binding of
// libt0fs (t0fs/client.h); docs/python.md is the user's view. The package
// (python/t0fs/) builds the pythonic API on it: modes, io.RawIOBase files,
// os-like functions. One translation unit (pybind11 is costly to compile):
//
//   py_errors.h   Status -> OSError, the GIL, ownership across fork
//   py_convert.h  buffers in, stat tuples and dicts out
//   py_file.h     PyFile: an open file
//   py_client.h   PyClient: a session
//   py_batch.h    PyBatch: batched reads and writes (BatchIo)
//
// Contracts: every libt0fs call runs with the GIL released; reads go
// straight into the caller's buffer and writes straight from it; a failed
// call raises OSError(errno, strerror, path); objects of a forked child's
// parent raise RuntimeError instead of using its connections.
#include <pthread.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <exception>

#include "py_batch.h"
#include "py_client.h"
#include "py_errors.h"
#include "py_file.h"

namespace py = pybind11;
using t0fs::python::PyBatch;
using t0fs::python::PyClient;
using t0fs::python::PyFile;

PYBIND11_MODULE(_t0fs, m) {
  m.doc() = "Native binding of libt0fs; use the `t0fs` package (docs/python.md).";
  pthread_atfork(nullptr, nullptr, [] { t0fs::python::g_fork_generation.fetch_add(1); });
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const t0fs::python::StatusError& e) {
      t0fs::python::SetOSError(e);
    }
  });

  py::class_<PyFile>(m, "File", "An open t0fs file (libt0fs File); see t0fs.File.")
      .def("pread", &PyFile::PRead, py::arg("count"), py::arg("offset"),
           "Up to `count` bytes at `offset` (short at end of file).")
      .def("preadinto", &PyFile::PReadInto, py::arg("buffer"), py::arg("offset"),
           "Reads into a writable contiguous buffer at `offset`; returns the bytes read.")
      .def("pwrite", &PyFile::PWrite, py::arg("data"), py::arg("offset"),
           "Writes all of a contiguous buffer at `offset`; returns the bytes written.")
      .def("flush", &PyFile::Flush, "Commits size and versions to meta (close-to-open).")
      .def("fsync", &PyFile::Fsync, py::arg("datasync") = false, "Makes data and commit durable.")
      .def("truncate", &PyFile::Truncate, py::arg("size"))
      .def("close", &PyFile::Close, "Commits and releases the file; idempotent.")
      .def("stat", &PyFile::Stat, "os.stat_result fields of the open file.")
      .def_property_readonly("closed", &PyFile::closed)
      .def_property_readonly("size", &PyFile::size, "Size as this client sees it.")
      .def_property_readonly("ino", &PyFile::ino)
      .def_property_readonly("path", &PyFile::path);

  py::class_<PyBatch>(m, "Batch", "Batched reads and writes (libt0fs BatchIo); see t0fs.Batch.")
      .def("submit", &PyBatch::Submit, py::arg("file"), py::arg("write"), py::arg("offset"),
           py::arg("buffer"),
           "Starts a read into (or a write of) a contiguous buffer, held until reaped; returns its "
           "id.")
      .def("wait", &PyBatch::Wait, py::arg("min"), py::arg("max"), py::arg("timeout"),
           "Up to `max` (id, bytes or -errno) once `min` are done, none is in flight, or the "
           "timeout (seconds; negative: none) passed.")
      .def("close", &PyBatch::Close,
           "Waits for the requests in flight and releases them; idempotent.")
      .def_property_readonly("pending", &PyBatch::pending)
      .def_property_readonly("closed", &PyBatch::closed);

  py::class_<PyClient>(m, "Client", "A session with a t0fs meta service; see t0fs.Client.")
      .def_static(
          "connect",
          [](std::string meta, std::string secret, std::string secret_file, std::string name,
             double retry_timeout, double rpc_timeout, bool local_bypass) {
            return PyClient::Connect({std::move(meta), std::move(secret), std::move(secret_file),
                                      std::move(name), retry_timeout, rpc_timeout, local_bypass});
          },
          py::arg("meta"), py::arg("secret") = "", py::arg("secret_file") = "",
          py::arg("name") = "python", py::arg("retry_timeout") = 60.0,
          py::arg("rpc_timeout") = 60.0, py::arg("local_bypass") = true,
          "Connects to meta and opens a session.")
      .def("close", &PyClient::Close)
      .def_property_readonly("closed", &PyClient::closed)
      .def("stat", &PyClient::Stat, py::arg("path"))
      .def("open", &PyClient::Open, py::arg("path"), py::arg("flags"), py::arg("perm") = 0644)
      .def("readdir", &PyClient::ReadDir, py::arg("path"), py::arg("with_attrs") = true)
      .def("mkdir", &PyClient::Mkdir, py::arg("path"), py::arg("perm") = 0755)
      .def("makedirs", &PyClient::MakeDirs, py::arg("path"), py::arg("perm") = 0755)
      .def("unlink", &PyClient::Unlink, py::arg("path"))
      .def("rmdir", &PyClient::Rmdir, py::arg("path"))
      .def("rename", &PyClient::Rename, py::arg("src"), py::arg("dst"), py::arg("flags") = 0)
      .def("truncate", &PyClient::Truncate, py::arg("path"), py::arg("size"))
      .def("chmod", &PyClient::Chmod, py::arg("path"), py::arg("perm"))
      .def("symlink", &PyClient::Symlink, py::arg("target"), py::arg("path"))
      .def("readlink", &PyClient::ReadLink, py::arg("path"))
      .def("link", &PyClient::Link, py::arg("src"), py::arg("dst"))
      .def("getxattr", &PyClient::GetXattr, py::arg("path"), py::arg("name"))
      .def("setxattr", &PyClient::SetXattr, py::arg("path"), py::arg("name"), py::arg("value"),
           py::arg("flags") = 0)
      .def("listxattr", &PyClient::ListXattr, py::arg("path"))
      .def("removexattr", &PyClient::RemoveXattr, py::arg("path"), py::arg("name"))
      .def("layout", &PyClient::Layout, py::arg("path"))
      .def("objective", &PyClient::GetObjective, py::arg("path"))
      .def("set_objective", &PyClient::SetObjective, py::arg("path"), py::arg("settings"),
           py::arg("recursive") = true)
      .def("statfs", &PyClient::StatFs)
      .def("batch", &PyClient::OpenBatch, py::arg("workers") = 4, py::arg("node_depth") = 8)
      .def("counters", &PyClient::Counters)
      .def_property_readonly("cluster_id", &PyClient::ClusterId)
      .def_property_readonly("local_node", &PyClient::LocalNode);
}
