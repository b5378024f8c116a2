// MemFile: the client::File of an open MemClient inode (mem_file.cc).
#pragma once

#include <memory>

#include "fuse/testing/mem_client.h"

namespace t0fs::fuse::testing {

// A File on `ino` of `owner`; its Close tells the owner (unlink-while-open).
std::unique_ptr<client::File> NewMemFile(MemClient* owner, InodeId ino, int flags);

}  // namespace t0fs::fuse::testing
