// FileImpl: an open file of libt0fs (see File in t0fs/client.h).
//
// Splits reads and writes at chunk boundaries and hands each piece to the
// ClientImpl (local bypass or TCP). Holds one meta handle (released at
// Close) and shares its InodeState with other Files of the same inode.
#pragma once

#include <atomic>
#include <memory>

#include "client/client_impl.h"
#include "client/inode_state.h"

namespace t0fs::client {

class FileImpl final : public File {
 public:
  FileImpl(ClientImpl& client, std::shared_ptr<InodeState> state, HandleId handle, int flags, Attr attr);
  ~FileImpl() override;

  Result<size_t> Read(uint64_t offset, std::span<std::byte> buf) override;
  Result<size_t> Write(uint64_t offset, std::span<const std::byte> data) override;
  Status Flush() override;
  Status Fsync(bool datasync) override;
  Status Truncate(uint64_t size) override;
  Status Close() override;
  Result<PassthroughFile> OpenPassthrough(bool write, bool join) override;
  void AbandonPassthrough() override;
  InodeId ino() const override { return state_->ino; }
  uint64_t size() const override;
  Attr attr() const override;

 private:
  Result<size_t> WriteAt(uint64_t offset, std::span<const std::byte> data);
  // A passthrough writer's sync: takes size/mtime from the chunk file, moves
  // bytes written past the chunk to later chunks; the `last` writer also
  // cuts them off the chunk file and rebuilds the checksums.
  Status SyncPassthrough(bool last);
  Status MoveOverflow(ChunkFile& file, uint64_t length, bool cut);
  // This File stops writing through passthrough; the last writer of the
  // inode rebuilds the checksums and clears the pending mark.
  Status LeavePassthrough();

  ClientImpl& client_;
  std::shared_ptr<InodeState> state_;
  const HandleId handle_;
  const int flags_;
  const Attr attr_;
  std::atomic<bool> closed_{false};
  std::atomic<bool> passthrough_writer_{false};
};

}  // namespace t0fs::client
