// The passthrough room's bookkeeping: who holds an inode's chunk file, and
// who is last to leave.
#include "client/passthrough.h"

#include <gtest/gtest.h>

namespace t0fs::client {
namespace {

std::shared_ptr<ChunkFile> SomeFile() {
  // A chunk file over no descriptors: only its identity matters here.
  return std::make_shared<ChunkFile>(ChunkId(9), UniqueFd(), UniqueFd(), false);
}

void Join(InodeState& st, const std::shared_ptr<ChunkFile>& file, bool write) {
  std::lock_guard lock(st.mu);
  if (st.passthrough.opens++ == 0) st.passthrough.file = file;
  if (write) st.passthrough.writers++;
}

TEST(Passthrough, HeldOnlyWhileSomeFileHoldsIt) {
  InodeState st;
  EXPECT_EQ(Passthrough::Held(st), nullptr);
  auto file = SomeFile();
  Join(st, file, /*write=*/false);
  EXPECT_EQ(Passthrough::Held(st), file);
  Passthrough::Release rel = Passthrough::Leave(st, false);
  EXPECT_TRUE(rel.last_open);
  EXPECT_FALSE(rel.last_writer);
  EXPECT_EQ(rel.file, file);
  Passthrough::Forget(st, /*writer_only=*/false);
  EXPECT_EQ(Passthrough::Held(st), nullptr);
}

TEST(Passthrough, LastWriterIsToldApartFromLastOpen) {
  InodeState st;
  auto file = SomeFile();
  Join(st, file, /*write=*/true);
  Join(st, file, /*write=*/false);
  Passthrough::Release writer = Passthrough::Leave(st, true);
  EXPECT_TRUE(writer.last_writer);
  EXPECT_FALSE(writer.last_open);
  // The last writer syncs, then forgets the writer state only: the reader
  // still reads the held file.
  {
    std::lock_guard lock(st.mu);
    st.passthrough.needs_rebuild = true;
    st.passthrough.seen_size = 10;
  }
  Passthrough::Forget(st, /*writer_only=*/true);
  EXPECT_EQ(Passthrough::Held(st), file);
  {
    std::lock_guard lock(st.mu);
    EXPECT_FALSE(st.passthrough.needs_rebuild);
    EXPECT_EQ(st.passthrough.seen_size, -1);
  }
  Passthrough::Release reader = Passthrough::Leave(st, false);
  EXPECT_TRUE(reader.last_open);
  EXPECT_FALSE(reader.last_writer);
}

}  // namespace
}  // namespace t0fs::client
