// PyClient: one session with a t0fs meta service (libt0fs Client) as the
// _t0fs binding exposes it; t0fs.Client (python/t0fs/client.py) builds the
// os-like API on it. Methods take normalised absolute t0fs paths (the Python
// layer normalises) and report errors with them. Thread-safe as libt0fs is;
// every libt0fs call runs with the GIL released.
#pragma once

#include <fcntl.h>
#include <pybind11/pybind11.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "common/secret.h"
#include "py_batch.h"
#include "py_convert.h"
#include "py_errors.h"
#include "py_file.h"
#include "t0fs/admin.h"
#include "t0fs/client.h"

namespace t0fs::python {

inline client::Caller CurrentCaller() {
  return {static_cast<uint32_t>(::geteuid()), static_cast<uint32_t>(::getegid())};
}

// "/a/b/c" -> ("/a/b", "c").
inline std::pair<std::string, std::string> SplitParent(const std::string& path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos || slash + 1 == path.size()) {
    Raise(Status(StatusCode::kInvalidArgument, "does not name a file"), path);
  }
  return {slash == 0 ? "/" : path.substr(0, slash), path.substr(slash + 1)};
}

class PyClient {
 public:
  struct Options {
    std::string meta, secret, secret_file, name;
    double retry_timeout = 60, rpc_timeout = 60;  // seconds
    bool local_bypass = true;
  };

  static std::unique_ptr<PyClient> Connect(const Options& o) {
    client::ClientOptions options;
    options.meta = o.meta;
    options.secret = o.secret;
    options.secret_file = o.secret_file;
    options.name = o.name;
    options.local_bypass = o.local_bypass;
    options.retry_timeout.value = std::chrono::milliseconds(static_cast<int64_t>(o.retry_timeout * 1000));
    options.rpc_timeout.value = std::chrono::milliseconds(static_cast<int64_t>(o.rpc_timeout * 1000));
    auto connected = ValueOrRaise(WithoutGil([&] { return client::Client::Connect(options); }), "");
    auto made = std::make_unique<PyClient>(std::shared_ptr<client::Client>(std::move(connected)));
    // For objectives (an admin call of meta's), opened at their first use.
    made->admin_options_.meta = o.meta;
    made->admin_options_.secret =
        o.secret.empty() ? ValueOrRaise(LoadSecret(o.secret_file), o.secret_file) : o.secret;
    return made;
  }

  explicit PyClient(std::shared_ptr<client::Client> client)
      : client_(std::move(client)), generation_(ForkGeneration()) {}
  ~PyClient() {
    if (InForkedChild(generation_)) {
      // The parent's session: its threads are not in this process.
      if (client_) (void)new std::shared_ptr<client::Client>(std::move(client_));
      (void)admin_.release();
      return;
    }
    Close();
  }
  PyClient(const PyClient&) = delete;
  PyClient& operator=(const PyClient&) = delete;

  // Drops this object's reference to the session; the session ends when the
  // files opened through it are closed too.
  void Close() {
    py::gil_scoped_release release;
    client_.reset();
  }
  bool closed() const { return client_ == nullptr; }

  py::tuple Stat(const std::string& path) { return StatTuple(Resolve(path)); }

  // open(2) flags; with O_CREAT, `perm` for a new file (O_EXCL: must be new).
  std::unique_ptr<PyFile> Open(const std::string& path, int flags, uint32_t perm) {
    client::Client& c = Get();
    auto file = ValueOrRaise(WithoutGil([&] {
                               return (flags & O_CREAT) ? c.CreatePath(path, perm, flags)
                                                        : c.OpenPath(path, flags);
                             }),
                             path);
    return std::make_unique<PyFile>(client_, std::move(file), path);
  }

  // Entries without "." and "..": (name, ino, mode, stat tuple or None).
  py::list ReadDir(const std::string& path, bool with_attrs) {
    client::Attr dir = Resolve(path);
    if (!S_ISDIR(dir.mode)) Raise(Status(StatusCode::kNotDirectory), path);
    client::Client& c = Get();
    auto entries = ValueOrRaise(WithoutGil([&]() -> Result<std::vector<client::DirEntry>> {
                                  std::vector<client::DirEntry> all;
                                  for (uint64_t cookie = 0;;) {
                                    ASSIGN_OR_RETURN(client::DirPage page,
                                                     c.ReadDir(dir.ino, cookie, 1024, with_attrs));
                                    for (client::DirEntry& entry : page.entries) {
                                      cookie = entry.cookie;
                                      if (entry.name != "." && entry.name != "..") {
                                        all.push_back(std::move(entry));
                                      }
                                    }
                                    if (page.eof || page.entries.empty()) return all;
                                  }
                                }),
                                path);
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
    ValueOrRaise(WithoutGil([&] { return c.Mkdir(dir.ino, name, perm, CurrentCaller()); }), path);
  }

  void MakeDirs(const std::string& path, uint32_t perm) {
    client::Client& c = Get();
    OkOrRaise(WithoutGil([&] { return c.MakeDirs(path, perm); }), path);
  }

  void Unlink(const std::string& path) {
    auto [parent, name] = SplitParent(path);
    client::Attr dir = Resolve(parent, path);
    client::Client& c = Get();
    OkOrRaise(WithoutGil([&] { return c.Unlink(dir.ino, name); }), path);
  }

  void Rmdir(const std::string& path) {
    auto [parent, name] = SplitParent(path);
    client::Attr dir = Resolve(parent, path);
    client::Client& c = Get();
    OkOrRaise(WithoutGil([&] { return c.Rmdir(dir.ino, name); }), path);
  }

  // flags: RENAME_NOREPLACE (1), RENAME_EXCHANGE (2); 0 replaces, as rename(2).
  void Rename(const std::string& from, const std::string& to, uint32_t flags) {
    auto [from_parent, from_name] = SplitParent(from);
    auto [to_parent, to_name] = SplitParent(to);
    client::Attr from_dir = Resolve(from_parent, from);
    client::Attr to_dir = Resolve(to_parent, to);
    client::Client& c = Get();
    Status status = WithoutGil([&] { return c.Rename(from_dir.ino, from_name, to_dir.ino, to_name, flags); });
    if (!status.ok()) Raise(status, from, to);
  }

  void Truncate(const std::string& path, uint64_t size) {
    client::SetAttrArgs args;
    args.mask = client::kSetSize;
    args.size = size;
    SetAttr(path, args);
  }

  void Chmod(const std::string& path, uint32_t perm) {
    client::SetAttrArgs args;
    args.mask = client::kSetMode;
    args.mode = perm & 07777;
    SetAttr(path, args);
  }

  void Symlink(const std::string& target, const std::string& path) {
    auto [parent, name] = SplitParent(path);
    client::Attr dir = Resolve(parent, path);
    client::Client& c = Get();
    ValueOrRaise(WithoutGil([&] { return c.Symlink(dir.ino, name, target, CurrentCaller()); }), path);
  }

  std::string ReadLink(const std::string& path) {
    client::Attr attr = Resolve(path);
    client::Client& c = Get();
    return ValueOrRaise(WithoutGil([&] { return c.ReadLink(attr.ino); }), path);
  }

  // A hard link `to` of the file `from`.
  void Link(const std::string& from, const std::string& to) {
    client::Attr attr = Resolve(from);
    auto [parent, name] = SplitParent(to);
    client::Attr dir = Resolve(parent, to);
    client::Client& c = Get();
    auto linked = WithoutGil([&] { return c.Link(attr.ino, dir.ino, name); });
    if (!linked.ok()) Raise(linked.status(), from, to);
  }

  py::bytes GetXattr(const std::string& path, const std::string& name) {
    client::Attr attr = Resolve(path);
    client::Client& c = Get();
    return py::bytes(ValueOrRaise(WithoutGil([&] { return c.GetXattr(attr.ino, name); }), path));
  }

  // flags: XATTR_CREATE (1), XATTR_REPLACE (2).
  void SetXattr(const std::string& path, const std::string& name, const std::string& value,
                uint32_t flags) {
    client::Attr attr = Resolve(path);
    client::Client& c = Get();
    OkOrRaise(WithoutGil([&] { return c.SetXattr(attr.ino, name, value, flags); }), path);
  }

  std::vector<std::string> ListXattr(const std::string& path) {
    client::Attr attr = Resolve(path);
    client::Client& c = Get();
    return ValueOrRaise(WithoutGil([&] { return c.ListXattr(attr.ino); }), path);
  }

  void RemoveXattr(const std::string& path, const std::string& name) {
    client::Attr attr = Resolve(path);
    client::Client& c = Get();
    OkOrRaise(WithoutGil([&] { return c.RemoveXattr(attr.ino, name); }), path);
  }

  py::dict Layout(const std::string& path) {
    client::Attr attr = Resolve(path);
    client::Client& c = Get();
    auto layout = ValueOrRaise(WithoutGil([&] { return c.GetLayout(attr.ino); }), path);
    return LayoutDict(path, attr, layout, client::PassthroughEligibility(layout, c.local_node()));
  }

  py::dict StatFs() {
    client::Client& c = Get();
    return StatFsDict(ValueOrRaise(WithoutGil([&] { return c.GetStatFs(); }), "/"));
  }

  // A BatchIo of this session (see py_batch.h).
  std::unique_ptr<PyBatch> OpenBatch(uint32_t workers, uint32_t node_depth) {
    Get();
    return std::make_unique<PyBatch>(
        client_, client::BatchIoOptions{.workers = workers, .node_depth = node_depth});
  }

  // The objective of `path` as `t0fs objective get` prints it.
  std::string GetObjective(const std::string& path) {
    client::Attr attr = Resolve(path);
    client::AdminClient& admin = Admin();
    auto objective = ValueOrRaise(WithoutGil([&] { return admin.GetObjective(attr.ino); }), path);
    return client::DescribeObjective(objective);
  }

  // `settings` ("replicas=2 protect=object within=30m", as `t0fs objective
  // set` takes them) over the current objective of `path` (and, recursive,
  // of everything below a directory): (the objective recorded, inodes
  // changed).
  py::tuple SetObjective(const std::string& path, const std::string& settings, bool recursive) {
    std::vector<std::string> items;
    for (size_t at = 0; at < settings.size();) {
      const size_t end = std::min(settings.find_first_of(" \t\n", at), settings.size());
      if (end > at) items.push_back(settings.substr(at, end - at));
      at = end + 1;
    }
    if (items.empty())
      Raise(Status(StatusCode::kInvalidArgument, "no settings (e.g. replicas=2)"), path);
    // Bad settings are refused before anything is contacted.
    OkOrRaise(client::ParseObjective(items, client::Objective()).status(), path);
    client::Attr attr = Resolve(path);
    client::AdminClient& admin = Admin();
    auto set = ValueOrRaise(
        WithoutGil([&]() -> Result<client::AdminClient::ObjectiveSet> {
          ASSIGN_OR_RETURN(client::Objective current, admin.GetObjective(attr.ino));
          ASSIGN_OR_RETURN(client::Objective wanted, client::ParseObjective(items, current));
          return admin.SetObjective(attr.ino, wanted, recursive);
        }),
        path);
    return py::make_tuple(client::DescribeObjective(set.objective), set.changed);
  }

  py::dict Counters() { return CountersDict(Get().counters()); }
  std::string ClusterId() { return Get().cluster_id(); }
  uint64_t LocalNode() { return Get().local_node().value(); }

 private:
  client::Client& Get() {
    CheckSameProcess(generation_);
    if (!client_) throw std::runtime_error("the t0fs client is closed");
    return *client_;
  }

  client::AdminClient& Admin() {
    Get();
    if (!admin_) {
      admin_ = ValueOrRaise(client::AdminClient::Open(admin_options_), admin_options_.meta);
    }
    return *admin_;
  }

  // Attributes of `path`; errors name `report` (the path the caller gave).
  client::Attr Resolve(const std::string& path, const std::string& report = "") {
    client::Client& c = Get();
    return ValueOrRaise(WithoutGil([&] { return c.ResolvePath(path); }), report.empty() ? path : report);
  }

  void SetAttr(const std::string& path, client::SetAttrArgs args) {
    client::Attr attr = Resolve(path);
    if (args.mask & client::kSetMode) args.mode |= attr.mode & S_IFMT;
    client::Client& c = Get();
    ValueOrRaise(WithoutGil([&] { return c.SetAttr(attr.ino, args); }), path);
  }

  std::shared_ptr<client::Client> client_;
  uint64_t generation_;
  client::AdminClient::Options admin_options_;
  std::unique_ptr<client::AdminClient> admin_;  // opened by the first objective call
};

}  // namespace t0fs::python
