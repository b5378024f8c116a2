// POSIX parity: runs the same sequence of system calls in two directories —
// a t0fs mount and a plain local directory — and compares return values,
// errno and resulting content, then the two trees.
//
//   posix_parity MOUNT_DIR PLAIN_DIR [CHUNK_SIZE]
//
// CHUNK_SIZE (bytes, default 1 MiB) is the mount's chunk size, so that the
// I/O cases straddle chunk boundaries. Exit 0 when everything matched.
#include <dirent.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

namespace {

struct Outcome {
  long ret = 0;  // normalised: -1 on error, else the value (fds become 0)
  int err = 0;
  std::string data;  // content or formatted fields to compare
  bool operator==(const Outcome& o) const { return ret == o.ret && err == o.err && data == o.data; }
};

struct Ctx {
  std::string root;
  std::map<std::string, int> fds;
  std::string P(const std::string& rel) const { return root + "/" + rel; }
};

Outcome Sys(long r) { return Outcome{r < 0 ? -1 : r, r < 0 ? errno : 0, {}}; }
Outcome Fd(Ctx& c, const std::string& name, int fd) {
  if (fd >= 0) c.fds[name] = fd;
  return Outcome{fd < 0 ? -1 : 0, fd < 0 ? errno : 0, {}};
}

std::string Hex(const std::string& s, size_t max = 64) {
  std::string out;
  char buf[4];
  for (size_t i = 0; i < std::min(s.size(), max); ++i) {
    std::snprintf(buf, sizeof buf, "%02x", static_cast<unsigned char>(s[i]));
    out += buf;
  }
  if (s.size() > max) out += "...(" + std::to_string(s.size()) + " bytes)";
  return out;
}

class Parity {
 public:
  Parity(std::string a, std::string b) : a_{std::move(a), {}}, b_{std::move(b), {}} {}
  ~Parity() {
    for (Ctx* c : {&a_, &b_}) {
      for (auto& [name, fd] : c->fds) ::close(fd);
    }
  }

  void Step(const std::string& name, const std::function<Outcome(Ctx&)>& f) {
    ++steps_;
    errno = 0;
    Outcome ra = f(a_);
    errno = 0;
    Outcome rb = f(b_);
    if (!(ra == rb)) {
      ++failures_;
      std::fprintf(stderr, "MISMATCH %s\n  t0fs : ret=%ld errno=%d (%s) data=%s\n  plain: ret=%ld errno=%d (%s) data=%s\n",
                   name.c_str(), ra.ret, ra.err, std::strerror(ra.err), Hex(ra.data).c_str(), rb.ret, rb.err,
                   std::strerror(rb.err), Hex(rb.data).c_str());
    }
  }

  void Close(const std::string& name) {
    Step("close " + name, [&](Ctx& c) {
      auto it = c.fds.find(name);
      if (it == c.fds.end()) return Outcome{-2, 0, "no such fd"};
      int r = ::close(it->second);
      c.fds.erase(it);
      return Sys(r);
    });
  }

  int failures() const { return failures_; }
  int steps() const { return steps_; }
  Ctx& a() { return a_; }
  Ctx& b() { return b_; }

 private:
  Ctx a_, b_;
  int failures_ = 0;
  int steps_ = 0;
};

std::string Pattern(size_t len, uint32_t seed) {
  std::mt19937 rng(seed);
  std::string s(len, '\0');
  for (char& ch : s) ch = static_cast<char>(rng());
  return s;
}

Outcome PWrite(Ctx& c, const std::string& fd, const std::string& data, off_t off) {
  return Sys(::pwrite(c.fds[fd], data.data(), data.size(), off));
}

Outcome PRead(Ctx& c, const std::string& fd, size_t len, off_t off) {
  std::string buf(len, '\0');
  ssize_t n = ::pread(c.fds[fd], buf.data(), len, off);
  Outcome o = Sys(n);
  if (n >= 0) o.data = buf.substr(0, static_cast<size_t>(n));
  return o;
}

// The stat fields that must agree between the two file systems.
std::string StatFields(const struct stat& st, bool with_times) {
  std::string s = "mode=" + std::to_string(st.st_mode) + " uid=" + std::to_string(st.st_uid) +
                  " gid=" + std::to_string(st.st_gid);
  if (!S_ISDIR(st.st_mode)) s += " size=" + std::to_string(st.st_size);
  s += " nlink=" + std::to_string(st.st_nlink);
  if (with_times) {
    s += " atime=" + std::to_string(st.st_atim.tv_sec) + "." + std::to_string(st.st_atim.tv_nsec);
    s += " mtime=" + std::to_string(st.st_mtim.tv_sec) + "." + std::to_string(st.st_mtim.tv_nsec);
  }
  return s;
}

Outcome Stat(Ctx& c, const std::string& rel, bool with_times = false) {
  struct stat st {};
  int r = ::lstat(c.P(rel).c_str(), &st);
  Outcome o = Sys(r);
  if (r == 0) o.data = StatFields(st, with_times);
  return o;
}

Outcome FStat(Ctx& c, const std::string& fd) {
  struct stat st {};
  int r = ::fstat(c.fds[fd], &st);
  Outcome o = Sys(r);
  if (r == 0) o.data = StatFields(st, false);
  return o;
}

Outcome ReadAll(Ctx& c, const std::string& rel) {
  int fd = ::open(c.P(rel).c_str(), O_RDONLY);
  if (fd < 0) return Sys(-1);
  std::string out;
  char buf[65536];
  ssize_t n;
  while ((n = ::read(fd, buf, sizeof buf)) > 0) out.append(buf, static_cast<size_t>(n));
  Outcome o = Sys(n < 0 ? -1 : 0);
  ::close(fd);
  o.data = out;
  return o;
}

Outcome ListDir(Ctx& c, const std::string& rel) {
  DIR* d = ::opendir(c.P(rel).c_str());
  if (d == nullptr) return Sys(-1);
  std::vector<std::string> names;
  while (dirent* e = ::readdir(d)) names.emplace_back(e->d_name);
  ::closedir(d);
  std::sort(names.begin(), names.end());
  std::set<std::string> unique(names.begin(), names.end());
  Outcome o;
  o.ret = static_cast<long>(names.size());
  o.data = unique.size() == names.size() ? "" : "DUPLICATES ";
  for (auto& n : names) o.data += n + "/";
  return o;
}

void TestOpenFlags(Parity& p) {
  p.Step("open O_CREAT|O_EXCL new", [](Ctx& c) { return Fd(c, "f1", ::open(c.P("f1").c_str(), O_CREAT | O_EXCL | O_RDWR, 0644)); });
  p.Step("open O_CREAT|O_EXCL existing", [](Ctx& c) { return Fd(c, "x", ::open(c.P("f1").c_str(), O_CREAT | O_EXCL | O_RDWR, 0644)); });
  p.Step("write f1", [](Ctx& c) { return PWrite(c, "f1", "hello world", 0); });
  p.Close("f1");
  p.Step("open O_TRUNC", [](Ctx& c) { return Fd(c, "f1", ::open(c.P("f1").c_str(), O_RDWR | O_TRUNC)); });
  p.Step("fstat after O_TRUNC", [](Ctx& c) { return FStat(c, "f1"); });
  p.Step("write after trunc", [](Ctx& c) { return PWrite(c, "f1", "abc", 0); });
  p.Close("f1");
  p.Step("open O_APPEND", [](Ctx& c) { return Fd(c, "f1", ::open(c.P("f1").c_str(), O_WRONLY | O_APPEND)); });
  p.Step("append 1", [](Ctx& c) { return Sys(::write(c.fds["f1"], "DEF", 3)); });
  p.Step("append 2 ignores offset", [](Ctx& c) { return PWrite(c, "f1", "GHI", 0); });
  p.Close("f1");
  p.Step("content after appends", [](Ctx& c) { return ReadAll(c, "f1"); });
  p.Step("open missing", [](Ctx& c) { return Fd(c, "x", ::open(c.P("missing").c_str(), O_RDONLY)); });
  p.Step("open dir for write", [](Ctx& c) {
    ::mkdir(c.P("d0").c_str(), 0755);
    return Fd(c, "x", ::open(c.P("d0").c_str(), O_WRONLY));
  });
  p.Step("open O_DIRECTORY on file", [](Ctx& c) { return Fd(c, "x", ::open(c.P("f1").c_str(), O_RDONLY | O_DIRECTORY)); });
  p.Step("read on write-only fd", [](Ctx& c) {
    int fd = ::open(c.P("f1").c_str(), O_WRONLY);
    char buf[4];
    Outcome o = Sys(::read(fd, buf, 4));
    ::close(fd);
    return o;
  });
}

void TestChunkBoundaries(Parity& p, size_t cs) {
  p.Step("create big", [](Ctx& c) { return Fd(c, "big", ::open(c.P("big").c_str(), O_CREAT | O_RDWR, 0644)); });
  const std::string a = Pattern(cs + 4097, 1);
  p.Step("pwrite across boundary 1", [&](Ctx& c) { return PWrite(c, "big", a, static_cast<off_t>(cs / 2)); });
  const std::string b = Pattern(3 * cs, 2);
  p.Step("pwrite spanning 3 chunks", [&](Ctx& c) { return PWrite(c, "big", b, static_cast<off_t>(cs - 10)); });
  const std::string small = Pattern(100, 3);
  p.Step("pwrite at boundary-50", [&](Ctx& c) { return PWrite(c, "big", small, static_cast<off_t>(2 * cs - 50)); });
  for (off_t off : {off_t(0), off_t(cs - 1), off_t(cs), off_t(2 * cs - 4096), off_t(3 * cs + 5)}) {
    p.Step("pread at " + std::to_string(off), [&](Ctx& c) { return PRead(c, "big", cs + 333, off); });
  }
  p.Step("pread past EOF", [&](Ctx& c) { return PRead(c, "big", 100, static_cast<off_t>(10 * cs)); });
  p.Step("fstat big", [](Ctx& c) { return FStat(c, "big"); });
  p.Step("fsync big", [](Ctx& c) { return Sys(::fsync(c.fds["big"])); });
  p.Step("fdatasync big", [](Ctx& c) { return Sys(::fdatasync(c.fds["big"])); });
  p.Close("big");
  p.Step("read back big", [](Ctx& c) { return ReadAll(c, "big"); });
}

void TestSparseAndTruncate(Parity& p, size_t cs) {
  p.Step("create sparse", [](Ctx& c) { return Fd(c, "sp", ::open(c.P("sparse").c_str(), O_CREAT | O_RDWR, 0644)); });
  p.Step("write far", [&](Ctx& c) { return PWrite(c, "sp", "tail", static_cast<off_t>(5 * cs + 123)); });
  p.Step("hole reads zeros", [&](Ctx& c) { return PRead(c, "sp", 2 * cs, static_cast<off_t>(cs / 3)); });
  p.Step("ftruncate down mid-chunk", [&](Ctx& c) { return Sys(::ftruncate(c.fds["sp"], static_cast<off_t>(cs + 7))); });
  p.Step("fstat after down", [](Ctx& c) { return FStat(c, "sp"); });
  p.Step("write in kept prefix", [&](Ctx& c) { return PWrite(c, "sp", Pattern(5000, 4), static_cast<off_t>(cs - 100)); });
  p.Step("ftruncate down again", [&](Ctx& c) { return Sys(::ftruncate(c.fds["sp"], static_cast<off_t>(cs + 1))); });
  p.Step("ftruncate up", [&](Ctx& c) { return Sys(::ftruncate(c.fds["sp"], static_cast<off_t>(4 * cs))); });
  p.Step("extended region is zeros", [&](Ctx& c) { return PRead(c, "sp", 2 * cs, static_cast<off_t>(cs - 200)); });
  p.Close("sp");
  p.Step("truncate by path", [&](Ctx& c) { return Sys(::truncate(c.P("sparse").c_str(), static_cast<off_t>(cs / 2 + 3))); });
  p.Step("read after path truncate", [](Ctx& c) { return ReadAll(c, "sparse"); });
  p.Step("truncate to zero", [](Ctx& c) { return Sys(::truncate(c.P("sparse").c_str(), 0)); });
  p.Step("truncate up from zero", [&](Ctx& c) { return Sys(::truncate(c.P("sparse").c_str(), static_cast<off_t>(cs + 9))); });
  p.Step("read zeros", [](Ctx& c) { return ReadAll(c, "sparse"); });
  p.Step("truncate dir", [](Ctx& c) { return Sys(::truncate(c.P("d0").c_str(), 0)); });
  p.Step("truncate missing", [](Ctx& c) { return Sys(::truncate(c.P("nope").c_str(), 0)); });
}

void TestRename(Parity& p) {
  auto make = [](Ctx& c, const std::string& rel, const std::string& content) {
    int fd = ::open(c.P(rel).c_str(), O_CREAT | O_WRONLY | O_TRUNC, 0644);
    if (fd < 0) return Sys(-1);
    Outcome o = Sys(::write(fd, content.data(), content.size()));
    ::close(fd);
    return o;
  };
  p.Step("setup rename tree", [&](Ctx& c) {
    ::mkdir(c.P("r").c_str(), 0755);
    ::mkdir(c.P("r/d1").c_str(), 0755);
    ::mkdir(c.P("r/d2").c_str(), 0755);
    ::mkdir(c.P("r/full").c_str(), 0755);
    ::mkdir(c.P("r/d1/sub").c_str(), 0755);
    make(c, "r/full/x", "x");
    make(c, "r/a", "AAA");
    make(c, "r/b", "BBBB");
    return make(c, "r/d1/inner", "inner");
  });
  p.Step("rename file over file", [](Ctx& c) { return Sys(::rename(c.P("r/a").c_str(), c.P("r/b").c_str())); });
  p.Step("old name gone", [](Ctx& c) { return Stat(c, "r/a"); });
  p.Step("new name has content", [](Ctx& c) { return ReadAll(c, "r/b"); });
  p.Step("rename dir over empty dir", [](Ctx& c) { return Sys(::rename(c.P("r/d2").c_str(), c.P("r/d1/sub").c_str())); });
  p.Step("rename dir over non-empty dir", [](Ctx& c) { return Sys(::rename(c.P("r/d1").c_str(), c.P("r/full").c_str())); });
  p.Step("rename file over dir", [](Ctx& c) { return Sys(::rename(c.P("r/b").c_str(), c.P("r/full").c_str())); });
  p.Step("rename dir over file", [](Ctx& c) { return Sys(::rename(c.P("r/full").c_str(), c.P("r/b").c_str())); });
  p.Step("rename dir into own subdir", [](Ctx& c) { return Sys(::rename(c.P("r/d1").c_str(), c.P("r/d1/sub/x").c_str())); });
  p.Step("rename missing", [](Ctx& c) { return Sys(::rename(c.P("r/zzz").c_str(), c.P("r/yyy").c_str())); });
  p.Step("rename to same name", [](Ctx& c) { return Sys(::rename(c.P("r/b").c_str(), c.P("r/b").c_str())); });
  p.Step("rename over own hard link", [](Ctx& c) {
    ::link(c.P("r/b").c_str(), c.P("r/b2").c_str());
    return Sys(::rename(c.P("r/b").c_str(), c.P("r/b2").c_str()));
  });
  p.Step("both links still there", [](Ctx& c) {
    Outcome o = Stat(c, "r/b");
    o.data += "|" + Stat(c, "r/b2").data;
    return o;
  });
  p.Step("rename dir across parents", [](Ctx& c) { return Sys(::rename(c.P("r/d1").c_str(), c.P("r/full/moved").c_str())); });
  p.Step("parent nlink after move", [](Ctx& c) {
    Outcome o = Stat(c, "r");
    o.data += "|" + Stat(c, "r/full").data;
    return o;
  });
  p.Step("RENAME_NOREPLACE onto existing", [](Ctx& c) {
    return Sys(::renameat2(AT_FDCWD, c.P("r/b").c_str(), AT_FDCWD, c.P("r/b2").c_str(), RENAME_NOREPLACE));
  });
  p.Step("RENAME_NOREPLACE onto new", [](Ctx& c) {
    return Sys(::renameat2(AT_FDCWD, c.P("r/b2").c_str(), AT_FDCWD, c.P("r/c").c_str(), RENAME_NOREPLACE));
  });
  p.Step("RENAME_EXCHANGE file and dir", [](Ctx& c) {
    return Sys(::renameat2(AT_FDCWD, c.P("r/c").c_str(), AT_FDCWD, c.P("r/full").c_str(), RENAME_EXCHANGE));
  });
  p.Step("after exchange", [](Ctx& c) {
    Outcome o = Stat(c, "r/c");
    o.data += "|" + Stat(c, "r/full").data + "|" + ReadAll(c, "r/full").data;
    return o;
  });
  p.Step("RENAME_EXCHANGE with missing", [](Ctx& c) {
    return Sys(::renameat2(AT_FDCWD, c.P("r/c").c_str(), AT_FDCWD, c.P("r/none").c_str(), RENAME_EXCHANGE));
  });
  p.Step("list r", [](Ctx& c) { return ListDir(c, "r"); });
}

void TestLinks(Parity& p) {
  p.Step("setup links", [](Ctx& c) {
    ::mkdir(c.P("l").c_str(), 0755);
    int fd = ::open(c.P("l/target").c_str(), O_CREAT | O_WRONLY, 0600);
    Outcome o = Sys(::write(fd, "data", 4));
    ::close(fd);
    return o;
  });
  p.Step("link", [](Ctx& c) { return Sys(::link(c.P("l/target").c_str(), c.P("l/hard").c_str())); });
  p.Step("link onto existing", [](Ctx& c) { return Sys(::link(c.P("l/target").c_str(), c.P("l/hard").c_str())); });
  p.Step("link a directory", [](Ctx& c) { return Sys(::link(c.P("l").c_str(), c.P("l/dirlink").c_str())); });
  p.Step("nlink 2", [](Ctx& c) { return Stat(c, "l/target"); });
  p.Step("unlink one", [](Ctx& c) { return Sys(::unlink(c.P("l/target").c_str())); });
  p.Step("other still reads", [](Ctx& c) { return ReadAll(c, "l/hard"); });
  p.Step("nlink 1", [](Ctx& c) { return Stat(c, "l/hard"); });
  p.Step("symlink", [](Ctx& c) { return Sys(::symlink("hard", c.P("l/sym").c_str())); });
  p.Step("symlink existing", [](Ctx& c) { return Sys(::symlink("x", c.P("l/sym").c_str())); });
  p.Step("readlink", [](Ctx& c) {
    char buf[256];
    ssize_t n = ::readlink(c.P("l/sym").c_str(), buf, sizeof buf);
    Outcome o = Sys(n);
    if (n >= 0) o.data.assign(buf, static_cast<size_t>(n));
    return o;
  });
  p.Step("readlink on file", [](Ctx& c) {
    char buf[16];
    return Sys(::readlink(c.P("l/hard").c_str(), buf, sizeof buf));
  });
  p.Step("read through symlink", [](Ctx& c) { return ReadAll(c, "l/sym"); });
  p.Step("lstat symlink", [](Ctx& c) { return Stat(c, "l/sym"); });
  p.Step("dangling symlink open", [](Ctx& c) {
    ::symlink("nowhere", c.P("l/dangling").c_str());
    return Fd(c, "x", ::open(c.P("l/dangling").c_str(), O_RDONLY));
  });
  p.Step("unlink missing", [](Ctx& c) { return Sys(::unlink(c.P("l/missing").c_str())); });
  p.Step("unlink a dir", [](Ctx& c) { return Sys(::unlink(c.P("l").c_str())); });
  p.Step("rmdir non-empty", [](Ctx& c) { return Sys(::rmdir(c.P("l").c_str())); });
  p.Step("rmdir a file", [](Ctx& c) { return Sys(::rmdir(c.P("l/hard").c_str())); });
  p.Step("mkdir existing", [](Ctx& c) { return Sys(::mkdir(c.P("l").c_str(), 0755)); });
  p.Step("mkdir under file", [](Ctx& c) { return Sys(::mkdir(c.P("l/hard/x").c_str(), 0755)); });
  p.Step("rmdir empty", [](Ctx& c) {
    ::mkdir(c.P("l/empty").c_str(), 0755);
    return Sys(::rmdir(c.P("l/empty").c_str()));
  });
  p.Step("mknod fifo", [](Ctx& c) { return Sys(::mknod(c.P("l/fifo").c_str(), S_IFIFO | 0640, 0)); });
  p.Step("stat fifo", [](Ctx& c) { return Stat(c, "l/fifo"); });
  p.Step("long name", [](Ctx& c) { return Fd(c, "x", ::open(c.P("l/" + std::string(256, 'n')).c_str(), O_CREAT | O_RDWR, 0644)); });
}

void TestAttributes(Parity& p) {
  p.Step("setup attrs", [](Ctx& c) {
    int fd = ::open(c.P("attr").c_str(), O_CREAT | O_WRONLY, 0644);
    return Sys(::close(fd));
  });
  p.Step("chmod", [](Ctx& c) { return Sys(::chmod(c.P("attr").c_str(), 0751)); });
  p.Step("chown", [](Ctx& c) { return Sys(::chown(c.P("attr").c_str(), 1234, 5678)); });
  p.Step("chown keep uid", [](Ctx& c) { return Sys(::chown(c.P("attr").c_str(), static_cast<uid_t>(-1), 42)); });
  p.Step("utimens", [](Ctx& c) {
    timespec ts[2] = {{1000000000, 123456789}, {1200000000, 987654321}};
    return Sys(::utimensat(AT_FDCWD, c.P("attr").c_str(), ts, 0));
  });
  p.Step("stat after attrs (with times)", [](Ctx& c) { return Stat(c, "attr", true); });
  p.Step("utimens omit atime", [](Ctx& c) {
    timespec ts[2] = {{0, UTIME_OMIT}, {1300000000, 5}};
    return Sys(::utimensat(AT_FDCWD, c.P("attr").c_str(), ts, 0));
  });
  p.Step("stat after omit", [](Ctx& c) { return Stat(c, "attr", true); });
  p.Step("chmod missing", [](Ctx& c) { return Sys(::chmod(c.P("missing").c_str(), 0600)); });
  p.Step("mtime moves on write", [](Ctx& c) {
    struct stat before {}, after {};
    ::stat(c.P("attr").c_str(), &before);
    int fd = ::open(c.P("attr").c_str(), O_WRONLY);
    ssize_t n = ::write(fd, "x", 1);
    ::close(fd);
    ::stat(c.P("attr").c_str(), &after);
    bool later = after.st_mtim.tv_sec > before.st_mtim.tv_sec ||
                 (after.st_mtim.tv_sec == before.st_mtim.tv_sec && after.st_mtim.tv_nsec >= before.st_mtim.tv_nsec);
    return Outcome{n, 0, later ? "later" : "EARLIER"};
  });
}

void TestXattrs(Parity& p) {
  p.Step("setup xattr file", [](Ctx& c) { return Sys(::close(::open(c.P("xa").c_str(), O_CREAT | O_WRONLY, 0644))); });
  p.Step("setxattr", [](Ctx& c) { return Sys(::setxattr(c.P("xa").c_str(), "user.one", "value1", 6, 0)); });
  p.Step("setxattr binary", [](Ctx& c) { return Sys(::setxattr(c.P("xa").c_str(), "user.bin", "a\0b\xff", 4, 0)); });
  p.Step("XATTR_CREATE existing", [](Ctx& c) { return Sys(::setxattr(c.P("xa").c_str(), "user.one", "v", 1, XATTR_CREATE)); });
  p.Step("XATTR_REPLACE missing", [](Ctx& c) { return Sys(::setxattr(c.P("xa").c_str(), "user.none", "v", 1, XATTR_REPLACE)); });
  p.Step("XATTR_REPLACE existing", [](Ctx& c) { return Sys(::setxattr(c.P("xa").c_str(), "user.one", "value2", 6, XATTR_REPLACE)); });
  p.Step("getxattr size probe", [](Ctx& c) { return Sys(::getxattr(c.P("xa").c_str(), "user.bin", nullptr, 0)); });
  p.Step("getxattr", [](Ctx& c) {
    char buf[64];
    ssize_t n = ::getxattr(c.P("xa").c_str(), "user.bin", buf, sizeof buf);
    Outcome o = Sys(n);
    if (n > 0) o.data.assign(buf, static_cast<size_t>(n));
    return o;
  });
  p.Step("getxattr too small", [](Ctx& c) {
    char buf[2];
    return Sys(::getxattr(c.P("xa").c_str(), "user.one", buf, sizeof buf));
  });
  p.Step("getxattr missing", [](Ctx& c) {
    char buf[8];
    return Sys(::getxattr(c.P("xa").c_str(), "user.nope", buf, sizeof buf));
  });
  p.Step("listxattr", [](Ctx& c) {
    char buf[256];
    ssize_t n = ::listxattr(c.P("xa").c_str(), buf, sizeof buf);
    Outcome o = Sys(n);
    std::vector<std::string> names;
    for (ssize_t pos = 0; pos < n; pos += static_cast<ssize_t>(std::strlen(buf + pos)) + 1) {
      std::string name(buf + pos);
      if (name.rfind("user.", 0) == 0) names.push_back(name);
    }
    std::sort(names.begin(), names.end());
    o.ret = 0;
    for (auto& name : names) o.data += name + ",";
    return o;
  });
  p.Step("removexattr", [](Ctx& c) { return Sys(::removexattr(c.P("xa").c_str(), "user.one")); });
  p.Step("removexattr missing", [](Ctx& c) { return Sys(::removexattr(c.P("xa").c_str(), "user.one")); });
}

void TestBigDirectory(Parity& p) {
  p.Step("create 3000 entries", [](Ctx& c) {
    ::mkdir(c.P("many").c_str(), 0755);
    for (int idx = 0; idx < 3000; ++idx) {
      std::string name = c.P("many/entry-" + std::to_string(idx));
      int fd = ::open(name.c_str(), O_CREAT | O_WRONLY, 0644);
      if (fd < 0) return Sys(-1);
      ::close(fd);
    }
    return Outcome{};
  });
  p.Step("readdir 3000", [](Ctx& c) { return ListDir(c, "many"); });
  p.Step("remove every third", [](Ctx& c) {
    for (int idx = 0; idx < 3000; idx += 3) {
      if (::unlink(c.P("many/entry-" + std::to_string(idx)).c_str()) != 0) return Sys(-1);
    }
    return Outcome{};
  });
  p.Step("readdir after removals", [](Ctx& c) { return ListDir(c, "many"); });
}

void TestUnlinkedOpenFile(Parity& p) {
  p.Step("open for unlink", [](Ctx& c) { return Fd(c, "u", ::open(c.P("unl").c_str(), O_CREAT | O_RDWR, 0644)); });
  const std::string data = Pattern(300000, 9);
  p.Step("write before unlink", [&](Ctx& c) { return PWrite(c, "u", data, 0); });
  p.Step("unlink while open", [](Ctx& c) { return Sys(::unlink(c.P("unl").c_str())); });
  p.Step("name is gone", [](Ctx& c) { return Stat(c, "unl"); });
  p.Step("still readable", [&](Ctx& c) { return PRead(c, "u", data.size(), 0); });
  p.Step("still writable", [](Ctx& c) { return PWrite(c, "u", "more", 300000); });
  p.Step("fstat unlinked", [](Ctx& c) { return FStat(c, "u"); });
  p.Close("u");
}

void TestMmap(Parity& p) {
  p.Step("mmap write and read back", [](Ctx& c) {
    int fd = ::open(c.P("mm").c_str(), O_CREAT | O_RDWR, 0644);
    if (fd < 0 || ::ftruncate(fd, 3 * 4096) != 0) return Sys(-1);
    void* map = ::mmap(nullptr, 3 * 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (map == MAP_FAILED) return Sys(-1);
    std::memcpy(static_cast<char*>(map) + 4000, "through mmap", 12);
    ::msync(map, 3 * 4096, MS_SYNC);
    ::munmap(map, 3 * 4096);
    ::close(fd);
    return ReadAll(c, "mm");
  });
}

// Compares the final trees: names, types, modes, sizes, contents, targets.
void CompareTrees(Parity& p, const std::string& rel) {
  p.Step("tree " + rel, [&](Ctx& c) {
    Outcome o = ListDir(c, rel);
    return o;
  });
  DIR* d = ::opendir(p.a().P(rel).c_str());
  if (d == nullptr) return;
  std::vector<std::string> names;
  while (dirent* e = ::readdir(d)) {
    std::string n = e->d_name;
    if (n != "." && n != "..") names.push_back(n);
  }
  ::closedir(d);
  std::sort(names.begin(), names.end());
  for (const std::string& name : names) {
    std::string child = rel.empty() ? name : rel + "/" + name;
    p.Step("stat " + child, [&](Ctx& c) { return Stat(c, child); });
    struct stat st {};
    ::lstat(p.a().P(child).c_str(), &st);
    if (S_ISDIR(st.st_mode)) {
      if (name != "many") CompareTrees(p, child);
    } else if (S_ISREG(st.st_mode)) {
      p.Step("content " + child, [&](Ctx& c) { return ReadAll(c, child); });
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s MOUNT_DIR PLAIN_DIR [CHUNK_SIZE]\n", argv[0]);
    return 2;
  }
  size_t cs = argc > 3 ? std::stoul(argv[3]) : (1u << 20);
  ::umask(022);
  Parity p(argv[1], argv[2]);
  TestOpenFlags(p);
  TestChunkBoundaries(p, cs);
  TestSparseAndTruncate(p, cs);
  TestRename(p);
  TestLinks(p);
  TestAttributes(p);
  TestXattrs(p);
  TestBigDirectory(p);
  TestUnlinkedOpenFile(p);
  TestMmap(p);
  CompareTrees(p, "");
  std::printf("posix parity: %d steps, %d mismatches\n", p.steps(), p.failures());
  return p.failures() == 0 ? 0 : 1;
}
