// Stable numeric ids of every RPC method. Never renumber or reuse an id: they
// are on the wire (docs/formats/rpc.md).
#pragma once

#include <cstdint>
#include <string_view>

namespace t0fs::rpc {

enum class Method : uint16_t {
  kHello = 1,  // authentication handshake, every service

  // meta: sessions
  kOpenSession = 10,
  kRenewSession = 11,
  kCloseSession = 12,
  // meta: namespace
  kLookup = 20,
  kGetAttr = 21,
  kSetAttr = 22,
  kMakeNode = 23,
  kUnlink = 24,
  kRmdir = 25,
  kRename = 26,
  kLink = 27,
  kReadLink = 28,
  kReadDir = 29,
  kStatFs = 30,
  kGetXattr = 31,
  kSetXattr = 32,
  kListXattr = 33,
  kRemoveXattr = 34,
  // meta: files and layouts
  kOpen = 40,
  kRelease = 41,
  kGetLayout = 42,
  kAllocate = 43,
  kCommit = 44,
  // meta: cluster
  kRegisterNode = 50,
  kHeartbeat = 51,
  kClusterStatus = 60,
  kFsck = 61,
  kChunkList = 62,
  kObjective = 63,
  kReportReplica = 64,
  kNodeAdmin = 65,

  // data
  kChunkRead = 100,
  kChunkWrite = 101,
  kChunkTruncate = 102,
  kChunkRemove = 103,
  kChunkSync = 104,
  kChunkStat = 105,
  kOpenLocal = 106,
  kListChunks = 107,
};

std::string_view MethodName(Method m);

}  // namespace t0fs::rpc
