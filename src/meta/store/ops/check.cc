// Check: the consistency checker (fsck) of the metadata store. Read-only.
//
// Each rule is one query whose rows are problems; at most kMaxLinesPerRule
// lines are reported per rule, then a count of the rest.
#include <fmt/format.h>

#include <unordered_map>

#include "meta/store/sqlite_store.h"
#include "meta/store/store_util.h"

namespace t0fs::meta {
namespace {

constexpr size_t kMaxLinesPerRule = 50;

// Type tests inside SQL (S_IFMT 0170000 = 61440, S_IFDIR 0040000 = 16384,
// S_IFREG 0100000 = 32768, S_IFLNK 0120000 = 40960).
struct Rule {
  const char* sql;
  // Formats one row.
  std::string (*line)(const sqlite::Statement& row);
};

std::string Name(const sqlite::Statement& row, int col) {
  return row.Bytes(col);
}

const Rule kRules[] = {
    {"SELECT d.parent, d.name, d.ino FROM dentries d LEFT JOIN inodes i ON i.ino = d.ino "
     "WHERE i.ino IS NULL ORDER BY d.parent, d.name",
     [](const sqlite::Statement& r) {
       return fmt::format("entry '{}' in directory {} points to missing inode {}", Name(r, 1),
                          r.U64(0), r.U64(2));
     }},
    {"SELECT d.parent, d.name FROM dentries d LEFT JOIN inodes p ON p.ino = d.parent "
     "WHERE p.ino IS NULL OR (p.mode & 61440) <> 16384 OR p.nlink = 0 ORDER BY d.parent, d.name",
     [](const sqlite::Statement& r) {
       return fmt::format("entry '{}' is in {}, which is not a live directory", Name(r, 1),
                          r.U64(0));
     }},
    {"SELECT 1 WHERE NOT EXISTS (SELECT 1 FROM inodes WHERE ino = 1 AND (mode & 61440) = 16384)",
     [](const sqlite::Statement&) {
       return std::string("the root directory (inode 1) is missing");
     }},
    {"SELECT parent, name FROM dentries WHERE ino = 1",
     [](const sqlite::Statement& r) {
       return fmt::format("the root has an entry '{}' in directory {}", Name(r, 1), r.U64(0));
     }},
    {"SELECT ino, nlink, n FROM (SELECT i.ino, i.nlink, (SELECT COUNT(*) FROM dentries d "
     "WHERE d.ino = i.ino) AS n FROM inodes i WHERE (i.mode & 61440) <> 16384) AS t "
     "WHERE nlink <> n ORDER BY ino",
     [](const sqlite::Statement& r) {
       return fmt::format("inode {} has nlink {} but {} entries", r.U64(0), r.U64(1), r.U64(2));
     }},
    {"SELECT ino, nlink, n FROM (SELECT i.ino, i.nlink, 2 + (SELECT COUNT(*) FROM dentries d "
     "JOIN inodes c ON c.ino = d.ino WHERE d.parent = i.ino AND (c.mode & 61440) = 16384) AS n, "
     "(SELECT COUNT(*) FROM dentries d WHERE d.ino = i.ino) AS refs FROM inodes i "
     "WHERE (i.mode & 61440) = 16384) AS t WHERE (refs > 0 OR ino = 1) AND nlink <> n ORDER BY ino",
     [](const sqlite::Statement& r) {
       return fmt::format("directory {} has nlink {} but 2 + subdirectories = {}", r.U64(0),
                          r.U64(1), r.U64(2));
     }},
    {"SELECT d.ino, COUNT(*) FROM dentries d JOIN inodes i ON i.ino = d.ino "
     "WHERE (i.mode & 61440) = 16384 GROUP BY d.ino HAVING COUNT(*) > 1 ORDER BY d.ino",
     [](const sqlite::Statement& r) {
       return fmt::format("directory {} has {} parent entries", r.U64(0), r.U64(1));
     }},
    // Listing cookies: an entry's seq lies in 1..its directory's counter, and
    // no two entries of a directory share one.
    {"SELECT d.parent, d.name, d.seq, p.entry_seq FROM dentries d JOIN inodes p ON p.ino = d.parent "
     "WHERE d.seq = 0 OR d.seq > p.entry_seq ORDER BY d.parent, d.name",
     [](const sqlite::Statement& r) {
       return fmt::format("entry '{}' in directory {} has listing position {} outside 1..{}",
                          Name(r, 1), r.U64(0), r.U64(2), r.U64(3));
     }},
    {"SELECT parent, seq, COUNT(*) FROM dentries GROUP BY parent, seq HAVING COUNT(*) > 1 "
     "ORDER BY parent, seq",
     [](const sqlite::Statement& r) {
       return fmt::format("directory {} has {} entries at listing position {}", r.U64(0), r.U64(2),
                          r.U64(1));
     }},
    // A directory records the directory containing it ("..", the rename
    // loop check); the root and removed directories name themselves.
    {"SELECT i.ino, i.parent, d.parent FROM inodes i JOIN dentries d ON d.ino = i.ino "
     "WHERE (i.mode & 61440) = 16384 AND i.parent <> d.parent ORDER BY i.ino",
     [](const sqlite::Statement& r) {
       return fmt::format("directory {} records parent {} but its entry is in directory {}",
                          r.U64(0), r.U64(1), r.U64(2));
     }},
    {"SELECT i.ino, i.parent FROM inodes i WHERE (i.mode & 61440) = 16384 AND i.parent <> i.ino "
     "AND NOT EXISTS (SELECT 1 FROM dentries d WHERE d.ino = i.ino) ORDER BY i.ino",
     [](const sqlite::Statement& r) {
       return fmt::format("directory {} has no entry but records parent {}", r.U64(0), r.U64(1));
     }},
    {"WITH RECURSIVE reach (ino) AS (SELECT 1 UNION SELECT d.ino FROM dentries d "
     "JOIN reach r ON d.parent = r.ino) "
     "SELECT i.ino, i.nlink, EXISTS (SELECT 1 FROM handles h WHERE h.ino = i.ino) AS open "
     "FROM inodes i WHERE i.ino NOT IN (SELECT ino FROM reach) "
     "AND NOT (i.nlink = 0 AND EXISTS (SELECT 1 FROM handles h WHERE h.ino = i.ino)) "
     "ORDER BY i.ino",
     [](const sqlite::Statement& r) {
       if (r.U64(1) == 0) {
         return fmt::format("inode {} is unlinked and not open but was not freed", r.U64(0));
       }
       return fmt::format("inode {} (nlink {}) is unreachable from the root", r.U64(0), r.U64(1));
     }},
    {"SELECT ino, size, length(target) FROM inodes WHERE (mode & 61440) = 40960 "
     "AND (target IS NULL OR size <> length(target)) ORDER BY ino",
     [](const sqlite::Statement& r) {
       return fmt::format("symlink {} has size {} but a target of {} bytes", r.U64(0), r.U64(1),
                          r.U64(2));
     }},
    {"SELECT ino, size FROM inodes WHERE (mode & 61440) = 16384 AND size <> 0 ORDER BY ino",
     [](const sqlite::Statement& r) {
       return fmt::format("directory {} has size {}", r.U64(0), r.U64(1));
     }},
    {"SELECT ino FROM inodes WHERE (mode & 61440) = 32768 AND chunk_size <= 0 ORDER BY ino",
     [](const sqlite::Statement& r) { return fmt::format("file {} has no chunk size", r.U64(0)); }},
    {"SELECT x.ino, x.name FROM xattrs x LEFT JOIN inodes i ON i.ino = x.ino WHERE i.ino IS NULL",
     [](const sqlite::Statement& r) {
       return fmt::format("xattr '{}' of missing inode {}", Name(r, 1), r.U64(0));
     }},
    {"SELECT c.id, c.ino, c.idx FROM chunks c LEFT JOIN inodes i ON i.ino = c.ino "
     "WHERE i.ino IS NULL OR (i.mode & 61440) <> 32768 ORDER BY c.id",
     [](const sqlite::Statement& r) {
       return fmt::format("chunk {} (index {}) belongs to inode {}, which is not a file", r.U64(0),
                          r.U64(2), r.U64(1));
     }},
    {"SELECT c.id FROM chunks c "
     "WHERE NOT EXISTS (SELECT 1 FROM replicas r WHERE r.chunk_id = c.id) ORDER BY c.id",
     [](const sqlite::Statement& r) { return fmt::format("chunk {} has no replica", r.U64(0)); }},
    {"SELECT DISTINCT r.chunk_id FROM replicas r LEFT JOIN chunks c ON c.id = r.chunk_id "
     "WHERE c.id IS NULL ORDER BY r.chunk_id",
     [](const sqlite::Statement& r) {
       return fmt::format("replicas of chunk {}, which is in no layout", r.U64(0));
     }},
    // A replica replaced by repair waits in the garbage queue until its node
    // takes it (perhaps much later, when the node comes back) while the
    // chunk lives on elsewhere: expected. Only the same (chunk, node) both
    // live and queued is wrong: the node would delete a live replica.
    {"SELECT DISTINCT g.chunk_id, g.node FROM garbage g "
     "JOIN replicas r ON r.chunk_id = g.chunk_id AND r.node = g.node ORDER BY g.chunk_id",
     [](const sqlite::Statement& r) {
       return fmt::format(
           "chunk {} on node {} is both in a layout and in the garbage queue (its node would "
           "delete a live replica)",
           r.U64(0), r.U64(1));
     }},
    // Fewer healthy replicas (on distinct nodes) than the file's objective:
    // not yet repaired, or not repairable (too few nodes). Lines start with
    // kBelowObjective so that fsck can tell them from inconsistencies.
    {"SELECT ino, idx, healthy, wanted FROM (SELECT c.ino AS ino, c.idx AS idx, "
     "i.replicas AS wanted, (SELECT COUNT(DISTINCT r.node) FROM replicas r "
     "WHERE r.chunk_id = c.id AND r.state = 0) AS healthy "
     "FROM chunks c JOIN inodes i ON i.ino = c.ino) AS t "
     "WHERE healthy < wanted ORDER BY ino, idx",
     [](const sqlite::Statement& r) {
       return fmt::format("{}file {} chunk #{} has {} healthy replica(s), its objective wants {}",
                          MetaStore::kBelowObjective, r.U64(0), r.U64(1), r.U64(2), r.U64(3));
     }},
    {"SELECT chunk_id, node, volume FROM replicas GROUP BY chunk_id, node, volume "
     "HAVING COUNT(*) > 1 ORDER BY chunk_id",
     [](const sqlite::Statement& r) {
       return fmt::format("chunk {} has two replicas on volume {} of node {}", r.U64(0), r.U64(2),
                          r.U64(1));
     }},
    {"SELECT r.chunk_id, r.node, r.volume FROM replicas r LEFT JOIN nodes n ON n.id = r.node "
     "LEFT JOIN volumes v ON v.id = r.volume "
     "WHERE n.id IS NULL OR v.id IS NULL OR v.node <> r.node ORDER BY r.chunk_id",
     [](const sqlite::Statement& r) {
       return fmt::format("chunk {} has a replica on unknown volume {} of node {}", r.U64(0),
                          r.U64(2), r.U64(1));
     }},
    {"SELECT v.id, v.node FROM volumes v LEFT JOIN nodes n ON n.id = v.node WHERE n.id IS NULL",
     [](const sqlite::Statement& r) {
       return fmt::format("volume {} belongs to unknown node {}", r.U64(0), r.U64(1));
     }},
    {"SELECT h.id, h.session FROM handles h LEFT JOIN sessions s ON s.id = h.session "
     "WHERE s.id IS NULL ORDER BY h.id",
     [](const sqlite::Statement& r) {
       return fmt::format("handle {} belongs to unknown session {}", r.U64(0), r.U64(1));
     }},
    {"SELECT h.id, h.ino FROM handles h LEFT JOIN inodes i ON i.ino = h.ino WHERE i.ino IS NULL "
     "ORDER BY h.id",
     [](const sqlite::Statement& r) {
       return fmt::format("handle {} is open on missing inode {}", r.U64(0), r.U64(1));
     }},
    {"SELECT DISTINCT p.session FROM replay p LEFT JOIN sessions s ON s.id = p.session "
     "WHERE s.id IS NULL",
     [](const sqlite::Statement& r) {
       return fmt::format("replay records of unknown session {}", r.U64(0));
     }},
};

}  // namespace

Result<std::vector<std::string>> SqliteStore::Check() {
  std::vector<std::string> problems;
  RETURN_IF_ERROR(Read([&]() -> Status {
    for (const Rule& rule : kRules) {
      ASSIGN_OR_RETURN(auto q, db_.Query(rule.sql));
      size_t hits = 0;
      for (;;) {
        ASSIGN_OR_RETURN(bool row, q->Step());
        if (!row) break;
        if (++hits <= kMaxLinesPerRule) problems.push_back(rule.line(*q));
      }
      if (hits > kMaxLinesPerRule) {
        problems.push_back(
            fmt::format("... and {} more like the line above", hits - kMaxLinesPerRule));
      }
    }
    // Cycles: walk up from every directory through its (first) parent entry.
    std::unordered_map<uint64_t, uint64_t> parent_of;
    {
      ASSIGN_OR_RETURN(auto q, db_.Query("SELECT d.ino, MIN(d.parent) FROM dentries d "
                                         "JOIN inodes i ON i.ino = d.ino "
                                         "WHERE (i.mode & 61440) = 16384 GROUP BY d.ino"));
      for (;;) {
        ASSIGN_OR_RETURN(bool row, q->Step());
        if (!row) break;
        parent_of[q->U64(0)] = q->U64(1);
      }
    }
    std::unordered_map<uint64_t, int> state;  // 1 = on the current walk, 2 = resolved
    size_t cycles = 0;
    for (const auto& [start, unused] : parent_of) {
      std::vector<uint64_t> walk;
      uint64_t cur = start;
      while (parent_of.count(cur) != 0 && state[cur] == 0) {
        state[cur] = 1;
        walk.push_back(cur);
        cur = parent_of.at(cur);
      }
      if (parent_of.count(cur) != 0 && state[cur] == 1) {
        if (++cycles <= kMaxLinesPerRule) {
          problems.push_back(fmt::format("directory {} is part of a cycle", cur));
        }
      }
      for (uint64_t dir : walk) state[dir] = 2;
    }
    return Status::Ok();
  }));
  return problems;
}

}  // namespace t0fs::meta
