// The row codecs of the SQLite engine: one function per access path of
// engine.h, each one statement (or a few) on the connection, mapping a typed
// row to its table's columns and back (docs/formats/meta-schema.md). Used by
// SqliteTxn only; every function requires the engine's lock and an open
// transaction.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "meta/store/engine.h"
#include "meta/store/sqlite/sqlite_db.h"

namespace t0fs::meta::sqlite {

// inodes, dentries, xattrs (sqlite_inode_rows.cc)
Result<std::optional<InodeRow>> GetInode(Db& db, InodeId ino);
Status ScanInodes(Db& db, const RowVisitor<InodeRow>& visit);
Status PutInode(Db& db, const InodeRow& row);
Status DeleteInode(Db& db, InodeId ino);
Result<std::optional<DentryRow>> GetDentry(Db& db, InodeId parent, std::string_view name);
Result<std::vector<DirItem>> ListDir(Db& db, InodeId parent, uint64_t after_seq, size_t limit,
                                     bool with_inodes);
Status ScanDentries(Db& db, const RowVisitor<DentryRow>& visit);
Status PutDentry(Db& db, const DentryRow& row);
Status DeleteDentry(Db& db, InodeId parent, std::string_view name);
Result<std::optional<std::string>> GetXattr(Db& db, InodeId ino, std::string_view name);
Result<std::vector<std::string>> ListXattrNames(Db& db, InodeId ino);
Status ScanXattrs(Db& db, const RowVisitor<XattrRow>& visit);
Status PutXattr(Db& db, InodeId ino, std::string_view name, std::string_view value);
Status DeleteXattr(Db& db, InodeId ino, std::string_view name);

// chunks, replicas, garbage (sqlite_chunk_rows.cc)
Result<std::optional<ChunkWithReplicas>> GetChunk(Db& db, ChunkId chunk);
Result<std::vector<ChunkWithReplicas>> ListChunksOf(Db& db, InodeId ino, uint64_t first,
                                                    uint64_t end);
Result<std::vector<ChunkWithReplicas>> ScanChunks(Db& db, ChunkId after, size_t limit);
Status ScanReplicas(Db& db, const RowVisitor<ReplicaRow>& visit);
Status PutChunk(Db& db, const ChunkRow& row);
Status DeleteChunk(Db& db, ChunkId chunk);
Status PutReplica(Db& db, const ReplicaRow& row);
Status DeleteReplica(Db& db, ChunkId chunk, uint32_t pos);
Result<std::vector<GarbageRow>> ListGarbageOfNode(Db& db, NodeId node, size_t limit);
Result<std::vector<GarbageRow>> ListGarbageOfChunk(Db& db, ChunkId chunk);
Result<std::vector<ChunkId>> ListGarbageChunks(Db& db, ChunkId after, size_t limit);
Status ScanGarbage(Db& db, const RowVisitor<GarbageRow>& visit);
Status PutGarbage(Db& db, const GarbageRow& row);
Status DeleteGarbage(Db& db, uint64_t id);

// sessions, handles, replay, nodes, volumes, properties, counters, totals
// (sqlite_cluster_rows.cc)
Result<std::optional<SessionRecord>> GetSession(Db& db, SessionId session);
Result<std::vector<SessionRecord>> ListSessions(Db& db);
Status PutSession(Db& db, const SessionRecord& row);
Status DeleteSession(Db& db, SessionId session);
Result<std::optional<HandleRow>> GetHandle(Db& db, HandleId handle);
Result<std::vector<HandleRow>> ListHandlesOf(Db& db, InodeId ino);
Result<std::vector<HandleRow>> ListHandlesOfSession(Db& db, SessionId session);
Status ScanHandles(Db& db, const RowVisitor<HandleRow>& visit);
Status PutHandle(Db& db, const HandleRow& row);
Status DeleteHandle(Db& db, HandleId handle);
Result<std::optional<ReplayRow>> GetReplay(Db& db, SessionId session, uint32_t slot);
Status ScanReplays(Db& db, const RowVisitor<ReplayRow>& visit);
Status PutReplay(Db& db, const ReplayRow& row);
Status DeleteReplaysOf(Db& db, SessionId session);
Result<std::optional<NodeRow>> GetNode(Db& db, NodeId node);
Result<std::vector<NodeRow>> ListNodes(Db& db);
Status PutNode(Db& db, const NodeRow& row);
Result<std::optional<VolumeRecord>> GetVolume(Db& db, VolumeId volume);
Result<std::vector<VolumeRecord>> ListVolumes(Db& db);
Status PutVolume(Db& db, const VolumeRecord& row);
Result<std::optional<std::string>> GetProperty(Db& db, std::string_view key);
Status PutProperty(Db& db, std::string_view key, std::string_view value);
// Counters are the AUTOINCREMENT bookkeeping of SQLite (sqlite_sequence: the
// largest id a table ever had), so ids continue where a database written
// before the engine seam left them.
Result<uint64_t> NextId(Db& db, Counter counter);
Status ReserveId(Db& db, Counter counter, uint64_t id);
Result<RowTotals> Totals(Db& db);

// placement_nodes is stored as "1,4,7".
std::string FormatNodeList(const std::vector<NodeId>& nodes);
std::vector<NodeId> ParseNodeList(std::string_view text);

}  // namespace t0fs::meta::sqlite
