// FileImpl: an open file of libt0fs (see File in t0fs/client.h).
//
// Splits reads and writes at chunk boundaries and hands each piece to the
// replica room (ReplicaIo: local bypass or TCP). Holds one meta handle (released at
// Close) and shares its InodeState with other Files of the same inode.
#pragma once

#include <atomic>
#include <memory>
#include <optional>

#include "client/client_impl.h"
#include "client/inode_state.h"

namespace t0fs::client {

class FileImpl final : public File {
 public:
  // `handle`: this File's entry in the client's OpenHandles (removed at Close).
  FileImpl(ClientImpl& client, std::shared_ptr<InodeState> state, OpenHandles::Key handle,
           int flags, Attr attr);
  ~FileImpl() override;

  Result<size_t> Read(uint64_t offset, std::span<std::byte> buf) override;
  Result<size_t> Write(uint64_t offset, std::span<const std::byte> data) override;
  Status Flush() override;
  Status Fsync(bool datasync) override;
  Status Truncate(uint64_t size) override;
  Status Fallocate(int mode, uint64_t offset, uint64_t length) override;
  Status Close() override;
  Result<PassthroughFile> OpenPassthrough(bool write, bool join) override;
  void AbandonPassthrough() override;
  InodeId ino() const override { return state_->ino; }
  uint64_t size() const override;
  Attr attr() const override;

  // ---- used by BatchIo (batch_io.cc), which splits reads itself ----
  ClientImpl& client() const { return client_; }
  const std::shared_ptr<InodeState>& state() const { return state_; }
  int flags() const { return flags_; }
  bool closed() const { return closed_; }
  // Reads go to the chunk file held for the kernel (ReadHeld), not the replicas.
  bool held_for_passthrough() const { return passthrough_; }

 private:
  // The meta handle now (a new one after an expired session was replaced).
  HandleId handle() const { return client_.handles().Current(handle_); }
  // The chunked write path (chunk by chunk, every replica).
  Result<size_t> WriteAt(uint64_t offset, std::span<const std::byte> data);
  // Writes zeros over [offset, end) where chunks are allocated (holes read
  // zeros already).
  Status ZeroRange(uint64_t offset, uint64_t end);
  // While the inode is held by passthrough (InodeState::Passthrough), this
  // File's reads and writes go to the held chunk file, which is the file.
  Result<size_t> ReadHeld(ChunkFile& held, uint64_t offset, std::span<std::byte> buf);
  Result<size_t> WriteHeld(ChunkFile& held, uint64_t offset, std::span<const std::byte> data);
  // A passthrough writer's sync: takes size/mtime from the chunk file and
  // copies bytes written past the chunk to the later chunks; the `last`
  // writer also rebuilds the checksums.
  // With `length`, the chunk file's length (when the file is held).
  Status SyncPassthrough(bool last, std::optional<uint64_t>* length = nullptr);
  Status MoveOverflow(ChunkFile& file, uint64_t length);
  // This File stops using passthrough; the last writer of the inode syncs
  // and rebuilds the checksums, the last File cuts the chunk file back to
  // the chunk (its data past it lives in the later chunks by then).
  Status LeavePassthrough();

  ClientImpl& client_;
  std::shared_ptr<InodeState> state_;
  const OpenHandles::Key handle_;
  const int flags_;
  const Attr attr_;
  std::atomic<bool> closed_{false};
  std::atomic<bool> passthrough_{false};         // the kernel serves this File from the held chunk file
  std::atomic<bool> passthrough_writer_{false};  // ... and writes it
  // InodeState::lost_commits this File has reported (guarded by state_->mu).
  uint64_t seen_lost_commits_ = 0;
};

}  // namespace t0fs::client
