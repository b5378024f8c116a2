// ReadDir: "." (cookie 1), ".." (cookie 2), then entries by their seq.
//
// An entry's seq comes from its directory's counter (entry_seq), which only
// grows, so "entries with seq > cookie - 2" is a cursor that survives inserts
// and removals between pages: an entry that exists for the whole listing is
// returned exactly once. No id grows globally with every entry.
#include <fmt/format.h>

#include "meta/store/posix_store.h"
#include "meta/store/store_util.h"

namespace t0fs::meta {
namespace {

constexpr uint64_t kDotCookie = 1;
constexpr uint64_t kDotDotCookie = 2;
constexpr uint64_t kFirstEntryCookie = 3;  // cookie = seq + 2

}  // namespace

Result<std::vector<DirEntry>> PosixStore::ReadDir(InodeId dir, uint64_t cookie, size_t max,
                                                  bool with_attrs, bool* eof) {
  if (max == 0) return Status(StatusCode::kInvalidArgument, "readdir of 0 entries");
  std::vector<DirEntry> out;
  bool at_end = false;
  RETURN_IF_ERROR(Read([&](ReadTxn& txn) -> Status {
    out.clear();
    at_end = false;
    ASSIGN_OR_RETURN(InodeRow self, internal::LoadInode(txn, dir));
    if (!internal::IsDir(self.attr.mode)) {
      return Status(StatusCode::kNotDirectory, fmt::format("inode {} is not a directory", dir));
    }
    if (cookie < kDotCookie) {
      out.push_back(DirEntry{".", self.attr.ino, self.attr.mode, kDotCookie, std::nullopt});
      if (with_attrs) out.back().attr = self.attr;
    }
    if (cookie < kDotDotCookie) {
      if (out.size() == max) return Status::Ok();  // ".." on the next page
      ASSIGN_OR_RETURN(InodeId up, internal::ParentOf(txn, dir));
      ASSIGN_OR_RETURN(InodeRow parent, internal::LoadInode(txn, up));
      out.push_back(DirEntry{"..", parent.attr.ino, parent.attr.mode, kDotDotCookie, std::nullopt});
      if (with_attrs) out.back().attr = parent.attr;
    }
    uint64_t after_seq = cookie >= kFirstEntryCookie ? cookie - 2 : 0;
    // An entry whose inode is missing (a damaged store, reported by Check)
    // is left out, as a join would; the listing goes on past it.
    for (;;) {
      // One entry more than fits, to know whether the listing is complete.
      const size_t want = max - out.size() + 1;
      ASSIGN_OR_RETURN(std::vector<DirItem> items, txn.ListDir(dir, after_seq, want, true));
      for (DirItem& item : items) {
        if (out.size() == max) return Status::Ok();
        after_seq = item.dentry.seq;
        if (!item.inode) continue;
        const InodeAttr& attr = item.inode->attr;
        out.push_back(DirEntry{std::move(item.dentry.name), attr.ino, attr.mode,
                               item.dentry.seq + 2, std::nullopt});
        if (with_attrs) out.back().attr = attr;
      }
      if (items.size() < want) {
        at_end = true;
        return Status::Ok();
      }
    }
  }));
  if (eof != nullptr) *eof = at_end;
  return out;
}

}  // namespace t0fs::meta
