// _t0fs: the native part of the `t0fs` Python package, a thin binding of
// libt0fs (t0fs/client.h). The pure-Python package (python/t0fs/) builds the
// pythonic API on it: modes, io.RawIOBase files, os-like functions.
//
// Contracts kept here, in one place:
// - Every call into libt0fs runs with the GIL released; Python objects are
//   only touched with the GIL held.
// - A failed call raises OSError(errno, strerror, path[, None, path2]), so
//   Python picks the subclass (FileNotFoundError, FileExistsError, ...).
// - Reads go straight into the caller's buffer (buffer protocol, C-contiguous
//   and writable), writes straight from it: no copy in this layer.
// - Fork: a Client and its Files belong to the process that connected. In a
//   forked child (DataLoader workers) they raise instead of touching the
//   parent's threads and sockets, and their destructors leak rather than
//   join threads that do not exist in the child.
#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <utility>

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "t0fs/client.h"

namespace py = pybind11;

namespace t0fs::python {
namespace {

// Bumped in every forked child; objects remember the value they were made in.
std::atomic<uint64_t> g_fork_generation{0};

void CheckSameProcess(uint64_t generation) {
  if (generation != g_fork_generation.load(std::memory_order_relaxed)) {
    throw std::runtime_error(
        "this t0fs client was connected in another process (before a fork); "
        "connect again in this process");
  }
}

// Carries a failed Status out of a GIL-released region to the translator.
struct StatusError {
  Status status;
  std::string path;
  std::string path2;
};

[[noreturn]] void Raise(const Status& status, std::string path, std::string path2 = "") {
  throw StatusError{status, std::move(path), std::move(path2)};
}

void RaiseOSError(const StatusError& error) {
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

// A contiguous buffer of a Python object (bytes, bytearray, memoryview,
// numpy array, torch tensor via numpy), held for the duration of a call.
class BufferView {
 public:
  BufferView(py::handle obj, bool writable) {
    int flags = PyBUF_C_CONTIGUOUS | (writable ? PyBUF_WRITABLE : 0);
    if (PyObject_GetBuffer(obj.ptr(), &view_, flags) != 0) throw py::error_already_set();
  }
  ~BufferView() { PyBuffer_Release(&view_); }
  BufferView(const BufferView&) = delete;
  BufferView& operator=(const BufferView&) = delete;

  std::byte* data() const { return static_cast<std::byte*>(view_.buf); }
  size_t size() const { return static_cast<size_t>(view_.len); }

 private:
  Py_buffer view_{};
};

int64_t Nanos(const Timespec& t) { return t.sec * 1000000000 + t.nsec; }

// os.stat_result's full sequence: 10 visible fields, the integer, float and
// nanosecond times, st_blksize, st_blocks, st_rdev.
py::tuple StatTuple(const client::Attr& a) {
  auto secs = [](const Timespec& t) { return static_cast<double>(t.sec) + t.nsec * 1e-9; };
  return py::make_tuple(a.mode, a.ino.value(), 0, a.nlink, a.uid, a.gid, a.size, a.atime.sec,
                        a.mtime.sec, a.ctime.sec, secs(a.atime), secs(a.mtime), secs(a.ctime),
                        Nanos(a.atime), Nanos(a.mtime), Nanos(a.ctime), 4096, (a.size + 511) / 512,
                        a.rdev);
}

client::Caller CurrentCaller() {
  return {static_cast<uint32_t>(::geteuid()), static_cast<uint32_t>(::getegid())};
}

// "/a/b/c" -> ("/a/b", "c"); the Python layer passes normalised absolute paths.
std::pair<std::string, std::string> SplitParent(const std::string& path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos || slash + 1 == path.size()) {
    Raise(Status(StatusCode::kInvalidArgument, "does not name a file"), path);
  }
  return {slash == 0 ? "/" : path.substr(0, slash), path.substr(slash + 1)};
}

class PyClient;

// One open t0fs file. Reads and writes may run from several threads at once
// (libt0fs allows it); Close waits for them (the mutex guards file_ against
// use after close: shared for I/O, exclusive for Close).
class PyFile {
 public:
  PyFile(std::shared_ptr<client::Client> owner, std::unique_ptr<client::File> file, std::string path)
      : owner_(std::move(owner)), file_(std::move(file)), path_(std::move(path)),
        generation_(g_fork_generation.load()) {}
  ~PyFile() {
    if (generation_ != g_fork_generation.load()) {
      (void)file_.release();  // the parent's; its threads are not here
      (void)new std::shared_ptr<client::Client>(std::move(owner_));
      return;
    }
    py::gil_scoped_release release;
    std::unique_lock lock(mu_);
    if (file_) (void)file_->Close();
    file_.reset();
    owner_.reset();
  }

  py::bytes PRead(size_t count, uint64_t offset) {
    py::object out = py::reinterpret_steal<py::object>(PyBytes_FromStringAndSize(nullptr, count));
    if (!out) throw py::error_already_set();
    auto* data = reinterpret_cast<std::byte*>(PyBytes_AS_STRING(out.ptr()));
    size_t done = ReadAt(std::span<std::byte>(data, count), offset);
    if (done != count) {
      PyObject* raw = out.release().ptr();
      if (_PyBytes_Resize(&raw, static_cast<Py_ssize_t>(done)) != 0) throw py::error_already_set();
      out = py::reinterpret_steal<py::object>(raw);
    }
    return py::reinterpret_steal<py::bytes>(out.release());
  }

  size_t PReadInto(py::handle buffer, uint64_t offset) {
    BufferView view(buffer, true);
    return ReadAt(std::span<std::byte>(view.data(), view.size()), offset);
  }

  size_t PWrite(py::handle buffer, uint64_t offset) {
    BufferView view(buffer, false);
    Result<size_t> written = Status();
    {
      py::gil_scoped_release release;
      std::shared_lock lock(mu_);
      client::File& file = Open();
      written = file.Write(offset, std::span<const std::byte>(view.data(), view.size()));
    }
    if (!written.ok()) Raise(written.status(), path_);
    return *written;
  }

  void Flush() { Run([](client::File& f) { return f.Flush(); }); }
  void Fsync(bool datasync) { Run([datasync](client::File& f) { return f.Fsync(datasync); }); }
  void Truncate(uint64_t size) { Run([size](client::File& f) { return f.Truncate(size); }); }

  void Close() {
    CheckSameProcess(generation_);
    Status status;
    {
      py::gil_scoped_release release;
      std::unique_lock lock(mu_);
      if (!file_) return;
      status = file_->Close();
      file_.reset();
    }
    if (!status.ok()) Raise(status, path_);
  }

  bool closed() {
    std::shared_lock lock(mu_);
    return file_ == nullptr;
  }
  uint64_t size() {
    py::gil_scoped_release release;
    std::shared_lock lock(mu_);
    return Open().size();
  }
  uint64_t ino() {
    std::shared_lock lock(mu_);
    return Open().ino().value();
  }
  py::tuple Stat() {
    client::Attr attr;
    {
      py::gil_scoped_release release;
      std::shared_lock lock(mu_);
      attr = Open().attr();
    }
    return StatTuple(attr);
  }
  const std::string& path() const { return path_; }

 private:
  // The file, or EBADF once closed. Called with mu_ held.
  client::File& Open() {
    CheckSameProcess(generation_);
    if (!file_) Raise(Status(StatusCode::kBadHandle, "file is closed"), path_);
    return *file_;
  }

  size_t ReadAt(std::span<std::byte> buf, uint64_t offset) {
    Result<size_t> read = Status();
    {
      py::gil_scoped_release release;
      std::shared_lock lock(mu_);
      client::File& file = Open();
      read = file.Read(offset, buf);
    }
    if (!read.ok()) Raise(read.status(), path_);
    return *read;
  }

  template <class Op>
  void Run(Op op) {
    Status status;
    {
      py::gil_scoped_release release;
      std::shared_lock lock(mu_);
      status = op(Open());
    }
    if (!status.ok()) Raise(status, path_);
  }

  std::shared_ptr<client::Client> owner_;  // keeps the session alive while the file is open
  std::shared_mutex mu_;                   // guards file_ (see class comment)
  std::unique_ptr<client::File> file_;
  std::string path_;
  uint64_t generation_;
};

// One session with meta. All methods take normalised absolute t0fs paths.
class PyClient {
 public:
  static std::unique_ptr<PyClient> Connect(const std::string& meta, const std::string& secret,
                                           const std::string& secret_file, const std::string& name,
                                           double retry_timeout, double rpc_timeout, bool local_bypass) {
    client::ClientOptions options;
    options.meta = meta;
    options.secret = secret;
    options.secret_file = secret_file;
    options.name = name;
    options.local_bypass = local_bypass;
    options.retry_timeout.value = std::chrono::milliseconds(static_cast<int64_t>(retry_timeout * 1000));
    options.rpc_timeout.value = std::chrono::milliseconds(static_cast<int64_t>(rpc_timeout * 1000));
    Result<std::unique_ptr<client::Client>> connected = Status();
    {
      py::gil_scoped_release release;
      connected = client::Client::Connect(options);
    }
    if (!connected.ok()) Raise(connected.status(), "");
    return std::make_unique<PyClient>(std::shared_ptr<client::Client>(std::move(*connected)));
  }

  explicit PyClient(std::shared_ptr<client::Client> client)
      : client_(std::move(client)), generation_(g_fork_generation.load()) {}
  ~PyClient() {
    if (generation_ != g_fork_generation.load()) {
      (void)new std::shared_ptr<client::Client>(std::move(client_));  // see the file comment
      return;
    }
    py::gil_scoped_release release;
    client_.reset();
  }

  // Drops this object's reference to the session; it ends when the last
  // file opened through it is closed too.
  void Close() {
    py::gil_scoped_release release;
    client_.reset();
  }
  bool closed() const { return client_ == nullptr; }

  py::tuple Stat(const std::string& path) { return StatTuple(Resolve(path)); }

  std::unique_ptr<PyFile> Open(const std::string& path, int flags, uint32_t perm) {
    client::Client& c = Get();
    Result<std::unique_ptr<client::File>> file = Status();
    {
      py::gil_scoped_release release;
      if (flags & O_CREAT) {
        file = c.CreatePath(path, perm, flags);
      } else {
        file = c.OpenPath(path, flags);
      }
    }
    if (!file.ok()) Raise(file.status(), path);
    return std::make_unique<PyFile>(client_, std::move(*file), path);
  }

  // Entries of a directory without "." and "..": (name, ino, mode, stat
  // tuple or None).
  py::list ReadDir(const std::string& path, bool with_attrs) {
    client::Client& c = Get();
    client::Attr dir = Resolve(path);
    if (!S_ISDIR(dir.mode)) Raise(Status(StatusCode::kNotDirectory), path);
    std::vector<client::DirEntry> entries;
    Status status;
    {
      py::gil_scoped_release release;
      for (uint64_t cookie = 0;;) {
        auto page = c.ReadDir(dir.ino, cookie, 1024, with_attrs);
        if (!page.ok()) {
          status = page.status();
          break;
        }
        for (client::DirEntry& entry : page->entries) {
          cookie = entry.cookie;
          if (entry.name != "." && entry.name != "..") entries.push_back(std::move(entry));
        }
        if (page->eof || page->entries.empty()) break;
      }
    }
    if (!status.ok()) Raise(status, path);
    py::list out;
    for (const client::DirEntry& entry : entries) {
      py::object attr = entry.attr ? py::object(StatTuple(*entry.attr)) : py::none();
      out.append(py::make_tuple(py::str(entry.name), entry.ino.value(), entry.mode, attr));
    }
    return out;
  }

  void Mkdir(const std::string& path, uint32_t perm) {
    auto [parent, name] = SplitParent(path);
    client::Attr dir = Resolve(parent, path);
    client::Client& c = Get();
    Result<client::Attr> made = Status();
    {
      py::gil_scoped_release release;
      made = c.Mkdir(dir.ino, name, perm, CurrentCaller());
    }
    if (!made.ok()) Raise(made.status(), path);
  }

  void MakeDirs(const std::string& path, uint32_t perm) {
    client::Client& c = Get();
    Status status;
    {
      py::gil_scoped_release release;
      status = c.MakeDirs(path, perm);
    }
    if (!status.ok()) Raise(status, path);
  }

  void Unlink(const std::string& path) {
    auto [parent, name] = SplitParent(path);
    client::Attr dir = Resolve(parent, path);
    Check(path, [&](client::Client& c) { return c.Unlink(dir.ino, name); });
  }

  void Rmdir(const std::string& path) {
    auto [parent, name] = SplitParent(path);
    client::Attr dir = Resolve(parent, path);
    Check(path, [&](client::Client& c) { return c.Rmdir(dir.ino, name); });
  }

  // flags: RENAME_NOREPLACE (1), RENAME_EXCHANGE (2); 0 replaces, as rename(2).
  void Rename(const std::string& from, const std::string& to, uint32_t flags) {
    auto [from_parent, from_name] = SplitParent(from);
    auto [to_parent, to_name] = SplitParent(to);
    client::Attr from_dir = Resolve(from_parent, from);
    client::Attr to_dir = Resolve(to_parent, to);
    client::Client& c = Get();
    Status status;
    {
      py::gil_scoped_release release;
      status = c.Rename(from_dir.ino, from_name, to_dir.ino, to_name, flags);
    }
    if (!status.ok()) Raise(status, from, to);
  }

  void Truncate(const std::string& path, uint64_t size) {
    client::Attr attr = Resolve(path);
    client::SetAttrArgs args;
    args.mask = client::kSetSize;
    args.size = size;
    client::Client& c = Get();
    Result<client::Attr> set = Status();
    {
      py::gil_scoped_release release;
      set = c.SetAttr(attr.ino, args);
    }
    if (!set.ok()) Raise(set.status(), path);
  }

  void Chmod(const std::string& path, uint32_t perm) {
    client::Attr attr = Resolve(path);
    client::SetAttrArgs args;
    args.mask = client::kSetMode;
    args.mode = (attr.mode & S_IFMT) | (perm & 07777);
    client::Client& c = Get();
    Result<client::Attr> set = Status();
    {
      py::gil_scoped_release release;
      set = c.SetAttr(attr.ino, args);
    }
    if (!set.ok()) Raise(set.status(), path);
  }

  py::dict Layout(const std::string& path) {
    client::Attr attr = Resolve(path);
    client::Client& c = Get();
    Result<client::LayoutInfo> layout = Status();
    {
      py::gil_scoped_release release;
      layout = c.GetLayout(attr.ino);
    }
    if (!layout.ok()) Raise(layout.status(), path);
    static const char* const kStates[] = {"healthy", "stale", "pending"};
    py::list chunks;
    for (const client::ChunkInfo& chunk : layout->chunks) {
      py::list replicas;
      for (const client::ReplicaInfo& r : chunk.replicas) {
        py::dict replica;
        replica["node"] = r.node.value();
        replica["volume"] = r.volume.value();
        replica["chunk"] = r.chunk.value();
        replica["version"] = r.version;
        replica["local"] = r.local;
        replica["state"] = r.state < 3 ? py::str(kStates[r.state]) : py::str(std::to_string(r.state));
        replicas.append(replica);
      }
      py::dict entry;
      entry["index"] = chunk.index;
      entry["offset"] = chunk.index * layout->chunk_size;
      entry["replicas"] = replicas;
      chunks.append(entry);
    }
    client::PassthroughVerdict verdict = client::PassthroughEligibility(*layout, c.local_node());
    py::dict out;
    out["path"] = path;
    out["ino"] = attr.ino.value();
    out["size"] = layout->size;
    out["chunk_size"] = layout->chunk_size;
    out["chunks"] = chunks;
    out["passthrough"] = verdict.mode == client::PassthroughMode::kNone      ? "none"
                         : verdict.mode == client::PassthroughMode::kRead    ? "read"
                                                                              : "read-write";
    out["passthrough_reason"] = verdict.reason;
    return out;
  }

  py::dict StatFs() {
    client::Client& c = Get();
    Result<client::StatFs> fs = Status();
    {
      py::gil_scoped_release release;
      fs = c.GetStatFs();
    }
    if (!fs.ok()) Raise(fs.status(), "/");
    py::dict out;
    out["total_bytes"] = fs->total_bytes;
    out["free_bytes"] = fs->free_bytes;
    out["files"] = fs->files;
    out["block_size"] = fs->block_size;
    out["max_name"] = fs->max_name;
    return out;
  }

  py::dict Counters() {
    client::IoCounters n = Get().counters();
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
    return out;
  }

  std::string ClusterId() { return Get().cluster_id(); }
  uint64_t LocalNode() { return Get().local_node().value(); }

 private:
  client::Client& Get() {
    CheckSameProcess(generation_);
    if (!client_) throw std::runtime_error("the t0fs client is closed");
    return *client_;
  }

  // Attributes of `path`; errors name `report` (the path the caller gave).
  client::Attr Resolve(const std::string& path, const std::string& report = "") {
    client::Client& c = Get();
    Result<client::Attr> attr = Status();
    {
      py::gil_scoped_release release;
      attr = c.ResolvePath(path);
    }
    if (!attr.ok()) Raise(attr.status(), report.empty() ? path : report);
    return *attr;
  }

  template <class Op>
  void Check(const std::string& path, Op op) {
    client::Client& c = Get();
    Status status;
    {
      py::gil_scoped_release release;
      status = op(c);
    }
    if (!status.ok()) Raise(status, path);
  }

  std::shared_ptr<client::Client> client_;
  uint64_t generation_;
};

}  // namespace
}  // namespace t0fs::python

PYBIND11_MODULE(_t0fs, m) {
  using namespace t0fs::python;
  m.doc() = "Native binding of libt0fs; use the `t0fs` package instead.";
  pthread_atfork(nullptr, nullptr, [] { g_fork_generation.fetch_add(1); });
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const StatusError& e) {
      RaiseOSError(e);
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
      .def("close", &PyFile::Close, "Flushes and releases the file; idempotent.")
      .def("stat", &PyFile::Stat)
      .def_property_readonly("closed", &PyFile::closed)
      .def_property_readonly("size", &PyFile::size)
      .def_property_readonly("ino", &PyFile::ino)
      .def_property_readonly("path", &PyFile::path);

  py::class_<PyClient>(m, "Client", "A session with a t0fs meta service; see t0fs.Client.")
      .def_static("connect", &PyClient::Connect, py::arg("meta"), py::arg("secret") = "",
                  py::arg("secret_file") = "", py::arg("name") = "python",
                  py::arg("retry_timeout") = 60.0, py::arg("rpc_timeout") = 60.0,
                  py::arg("local_bypass") = true)
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
      .def("layout", &PyClient::Layout, py::arg("path"))
      .def("statfs", &PyClient::StatFs)
      .def("counters", &PyClient::Counters)
      .def_property_readonly("cluster_id", &PyClient::ClusterId)
      .def_property_readonly("local_node", &PyClient::LocalNode);
}
