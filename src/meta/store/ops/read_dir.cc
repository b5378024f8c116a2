// ReadDir: "." (cookie 1), ".." (cookie 2), then entries by their seq.
//
// An entry's seq comes from its directory's counter (entry_seq), which only
// grows, so "entries with seq > cookie - 2" is a cursor that survives inserts
// and removals between pages: an entry that exists for the whole listing is
// returned exactly once. No id grows globally with every entry.
#include <fmt/format.h>

#include "meta/store/sqlite_store.h"
#include "meta/store/store_util.h"

namespace t0fs::meta {
namespace {

constexpr uint64_t kDotCookie = 1;
constexpr uint64_t kDotDotCookie = 2;
constexpr uint64_t kFirstEntryCookie = 3;  // cookie = seq + 2

}  // namespace

Result<std::vector<DirEntry>> SqliteStore::ReadDir(InodeId dir, uint64_t cookie, size_t max,
                                                   bool with_attrs, bool* eof) {
  if (max == 0) return Status(StatusCode::kInvalidArgument, "readdir of 0 entries");
  std::vector<DirEntry> out;
  bool at_end = false;
  RETURN_IF_ERROR(Read([&]() -> Status {
    ASSIGN_OR_RETURN(InodeAttr self, LoadAttr(dir));
    if (!internal::IsDir(self.mode)) {
      return Status(StatusCode::kNotDirectory, fmt::format("inode {} is not a directory", dir));
    }
    if (cookie < kDotCookie) {
      out.push_back(DirEntry{".", self.ino, self.mode, kDotCookie, std::nullopt});
      if (with_attrs) out.back().attr = self;
    }
    if (cookie < kDotDotCookie) {
      if (out.size() == max) return Status::Ok();  // ".." on the next page
      ASSIGN_OR_RETURN(InodeId up, ParentOf(dir));
      ASSIGN_OR_RETURN(InodeAttr parent, LoadAttr(up));
      out.push_back(DirEntry{"..", parent.ino, parent.mode, kDotDotCookie, std::nullopt});
      if (with_attrs) out.back().attr = parent;
    }
    uint64_t after_seq = cookie >= kFirstEntryCookie ? cookie - 2 : 0;
    // One row more than fits, to know whether the listing is complete.
    uint64_t want = max - out.size() + 1;
    ASSIGN_OR_RETURN(
        auto q,
        db_.Query(
            "SELECT d.seq, d.name, i.ino, i.mode, i.uid, i.gid, i.size, i.nlink, i.rdev, i.atime_s, "
            "i.atime_ns, i.mtime_s, i.mtime_ns, i.ctime_s, i.ctime_ns, i.chunk_size, i.generation, "
            "i.replicas, i.placement, i.placement_nodes "
            "FROM dentries d JOIN inodes i ON i.ino = d.ino WHERE d.parent = ? AND d.seq > ? "
            "ORDER BY d.seq LIMIT ?",
            dir, after_seq, want));
    at_end = true;
    for (;;) {
      ASSIGN_OR_RETURN(bool row, q->Step());
      if (!row) break;
      if (out.size() == max) {
        at_end = false;
        break;
      }
      InodeAttr attr = internal::AttrFromRow(*q, 2);
      out.push_back(DirEntry{q->Bytes(1), attr.ino, attr.mode, q->U64(0) + 2, std::nullopt});
      if (with_attrs) out.back().attr = attr;
    }
    return Status::Ok();
  }));
  if (eof != nullptr) *eof = at_end;
  return out;
}

}  // namespace t0fs::meta
