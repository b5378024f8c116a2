// The metadata workload (`t0fs bench meta`), mdtest-style: each thread
// creates, stats and removes `items` directories, then creates (optionally
// writing N bytes), lists, stats, reads, renames and removes `items` files,
// in a directory of its own (mdtest -u) or one directory shared by all
// threads. Every phase starts on a barrier and reports operations per second
// (first and last done) and the latency of each operation.
//
// Two phases mdtest lacks (both on by default, each can be left out):
//   dir-list     `ls -l` of the directory just filled: readdir and lstat() of
//                every entry, one operation per entry. Each thread lists its
//                own directory; with a shared directory one thread (rank 0's
//                first) lists the whole of it, as one `ls -l` would.
//   file-rename  each thread renames each of its files to a new name in the
//                same directory; file-remove then removes the new names.
#pragma once

#include <cstdint>
#include <string>

#include "bench/comm.h"
#include "bench/result.h"

namespace t0fs::bench {

struct MetaSpec {
  std::string path;        // an existing directory; the run works in a new subdirectory
  uint32_t threads = 1;    // per rank
  uint64_t items = 1000;   // per thread and per kind (files, directories)
  bool unique_dirs = true; // false: all threads in one shared directory
  bool files = true;
  bool dirs = true;
  uint64_t write_bytes = 0;  // written at create, read in the read phase (mdtest -w/-e)
  bool neighbor = false;     // stat/read another thread's items (mdtest -N 1)
  bool list = true;          // the dir-list phase after file-create
  bool rename = true;        // the file-rename phase before file-remove
  bool keep = false;
  bool progress = false;
};

Status ValidateMetaSpec(const MetaSpec& spec);
Result<RunResult> RunMeta(const MetaSpec& spec, Comm& comm);

}  // namespace t0fs::bench
