#include "meta/object_manifest.h"

#include <fmt/chrono.h>
#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <ctime>
#include <deque>
#include <nlohmann/json.hpp>
#include <utility>

#include "common/object_key.h"

namespace t0fs::meta {
namespace {

constexpr size_t kEntriesPerRead = 1024;
constexpr uint64_t kChunksPerRead = 4096;

std::string Utc(Timespec t) {
  return fmt::format("{:%Y-%m-%dT%H:%M:%SZ}", fmt::gmtime(static_cast<std::time_t>(t.sec)));
}

std::string Dump(const nlohmann::json& j) {
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// The line of the file `attr` at `path`, or nothing when the bucket holds
// none of its chunks.
Result<std::optional<nlohmann::json>> FileLine(MetaStore& store, std::string_view prefix,
                                               const std::string& path, const InodeAttr& attr,
                                               ManifestCounts& counts) {
  nlohmann::json chunks = nlohmann::json::array();
  bool complete = true;
  for (uint64_t first = 0;;) {
    ASSIGN_OR_RETURN(std::vector<ChunkLayout> layout,
                     store.GetLayout(attr.ino, first, kChunksPerRead));
    if (layout.empty()) break;
    for (const ChunkLayout& c : layout) {
      uint64_t committed = 0;
      for (const Replica& r : c.replicas) committed = std::max(committed, r.version);
      if (c.object_version != committed)
        complete = false;  // (committed 0: never written, nothing to hold)
      if (c.object_version == 0 || c.replicas.empty())
        continue;  // (no replica: no id to name it by)
      const ChunkId id = c.replicas.front().chunk;
      chunks.push_back({{"index", c.index},
                        {"offset", c.index * attr.chunk_size},
                        {"version", c.object_version},
                        {"current", c.object_version == committed},
                        {"key", ObjectKey(prefix, id, c.object_version)}});
    }
    first = layout.back().index + 1;
  }
  if (chunks.empty()) return std::optional<nlohmann::json>();
  ++counts.files;
  counts.chunks += chunks.size();
  if (complete) ++counts.complete;
  return std::optional<nlohmann::json>(nlohmann::json{{"path", path},
                                                      {"inode", attr.ino.value()},
                                                      {"size", attr.size},
                                                      {"chunk_size", attr.chunk_size},
                                                      {"mtime", Utc(attr.mtime)},
                                                      {"complete", complete},
                                                      {"chunks", std::move(chunks)}});
}

}  // namespace

Result<std::string> BuildObjectManifest(MetaStore& store, std::string_view cluster_id,
                                        std::string_view prefix, Timespec now,
                                        ManifestCounts* counts) {
  ManifestCounts found;
  std::string lines;
  // Breadth first, one page of entries at a time: a short read of the
  // store each, never the whole namespace held.
  std::deque<std::pair<InodeId, std::string>> dirs{{kRootInode, ""}};
  while (!dirs.empty()) {
    auto [dir, dir_path] = std::move(dirs.front());
    dirs.pop_front();
    bool eof = false;
    for (uint64_t cookie = 0; !eof;) {
      auto entries = store.ReadDir(dir, cookie, kEntriesPerRead, /*with_attrs=*/true, &eof);
      if (!entries.ok() && entries.status().code() == StatusCode::kNotFound)
        break;  // removed meanwhile
      if (!entries.ok()) return entries.status();
      if (entries->empty()) break;
      cookie = entries->back().cookie;
      for (const DirEntry& e : *entries) {
        if (e.name == "." || e.name == ".." || !e.attr) continue;
        std::string path = dir_path + "/" + e.name;
        if (S_ISDIR(e.attr->mode)) {
          dirs.emplace_back(e.ino, std::move(path));
        } else if (S_ISREG(e.attr->mode) && e.attr->protect.kind == ProtectKind::kObject) {
          auto line = FileLine(store, prefix, path, *e.attr, found);
          if (!line.ok() && line.status().code() == StatusCode::kNotFound)
            continue;  // removed meanwhile
          if (!line.ok()) return line.status();
          if (*line) lines += Dump(**line) + '\n';
        }
      }
    }
  }
  nlohmann::json header{{"t0fs_object_manifest", 1},
                        {"cluster", cluster_id},
                        {"prefix", prefix},
                        {"written", Utc(now)},
                        {"files", found.files}};
  if (counts != nullptr) *counts = found;
  return Dump(header) + '\n' + lines;
}

}  // namespace t0fs::meta
