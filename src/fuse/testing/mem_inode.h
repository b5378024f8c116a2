// MemClient's inode and its limits, private to the MemClient files:
// mem_client.cc (the inode table, open and close), mem_client_namespace.cc
// (names, attributes, directories), mem_client_xattr.cc, mem_client_path.cc
// (path walks) and mem_file.cc (the File of an open inode).
#pragma once

#include <sys/stat.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/clock.h"
#include "fuse/testing/mem_client.h"

namespace t0fs::fuse::testing {

inline constexpr size_t kMaxName = 255;
inline constexpr uint64_t kCapacity = uint64_t(1) << 40;  // what statfs reports
// Files live in memory: larger sizes are EFBIG (not an allocation failure).
inline constexpr uint64_t kMaxFileSize = uint64_t(256) << 20;
inline constexpr uint64_t kDotCookie = 1;
inline constexpr uint64_t kDotDotCookie = 2;
inline constexpr uint64_t kFirstEntryCookie = 3;

inline bool ValidName(std::string_view name) {
  return !name.empty() && name != "." && name != ".." && name.find('/') == std::string_view::npos;
}

struct MemClient::Inode {
  client::Attr attr;
  std::vector<std::byte> data;                 // regular files
  std::string target;                          // symlinks
  std::map<std::string, std::string, std::less<>> xattrs;
  // Directories: name -> cookie and cookie -> (name, inode), so a listing
  // resumes after any cookie even while entries come and go.
  std::map<std::string, uint64_t, std::less<>> names;
  std::map<uint64_t, std::pair<std::string, InodeId>> entries;
  uint64_t next_cookie = kFirstEntryCookie;
  InodeId parent;
  uint32_t open_count = 0;

  bool is_dir() const { return S_ISDIR(attr.mode); }
  void Touch(bool content) {
    Timespec now = WallNow();
    attr.ctime = now;
    if (content) attr.mtime = now;
  }
};

}  // namespace t0fs::fuse::testing
