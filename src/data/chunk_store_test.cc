#include "data/chunk_store.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "common/buffer.h"
#include "data/chunk_store_fixture.h"
#include "data/volume.h"

namespace t0fs::data {
namespace {

TEST_F(ChunkStoreTest, WriteReadStatRemove) {
  std::vector<std::byte> data(5000, std::byte{9});
  for (uint64_t id = 1; id <= 10; ++id) {
    ASSERT_TRUE(store_.Write(VolumeId(3), ChunkId(id), 100, data, id, false).ok());
  }
  EXPECT_EQ(store_.ChunkCount(VolumeId(3)), 10u);
  AlignedBuffer buf(8192);
  uint64_t version = 0;
  auto n = store_.Read(VolumeId(3), ChunkId(2), 0, std::span(buf.data(), 8192), 0, &version);
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(*n, 5100u);
  EXPECT_EQ(version, 2u);
  EXPECT_EQ(store_.Read(VolumeId(3), ChunkId(2), 0, std::span(buf.data(), 10), 3, &version).status().code(),
            StatusCode::kStale);
  auto st = store_.Stat(VolumeId(3), ChunkId(7));
  ASSERT_TRUE(st.ok());
  EXPECT_EQ(st->length, 5100u);
  ASSERT_TRUE(store_.Remove(VolumeId(3), ChunkId(7)).ok());
  ASSERT_TRUE(store_.Remove(VolumeId(3), ChunkId(7)).ok());  // idempotent
  EXPECT_EQ(store_.Stat(VolumeId(3), ChunkId(7)).status().code(), StatusCode::kDataNoChunk);
  EXPECT_EQ(store_.ChunkCount(VolumeId(3)), 9u);
  EXPECT_EQ(store_.Read(VolumeId(4), ChunkId(2), 0, std::span(buf.data(), 10), 0, &version).status().code(),
            StatusCode::kDataNoVolume);
  bool eof = false;
  auto list = store_.List(VolumeId(3), ChunkId(3), 100, &eof);
  ASSERT_TRUE(list.ok());
  EXPECT_TRUE(eof);
  ASSERT_EQ(list->size(), 6u);  // 4,5,6,8,9,10
  EXPECT_EQ((*list)[0].chunk, ChunkId(4));
}

// A writer whose layout has the replica at a version (base_version) never
// creates a missing chunk file, nor writes into an older one: a file with
// only its request's bytes would be committed as the whole chunk (a stale
// layout after an offload or a drop, or a file this node lost). Version 0
// (a chunk never written) creates it, as EC cells and new chunks need.
TEST_F(ChunkStoreTest, AWriterWithAVersionNeverCreatesTheChunk) {
  const VolumeId vol(3);
  std::vector<std::byte> data(5000, std::byte{7});
  for (uint64_t base : {1, 4}) {
    EXPECT_EQ(store_.Write(vol, ChunkId(20), 0, data, base + 1, false, base).code(),
              StatusCode::kStale);
    EXPECT_EQ(store_.Truncate(vol, ChunkId(20), 10, base + 1, base).code(), StatusCode::kStale);
    EXPECT_EQ(store_
                  .OpenLocal(vol, ChunkId(20), /*create=*/true, /*writable=*/true, false,
                             /*lazy=*/true, base)
                  .status()
                  .code(),
              StatusCode::kStale);
  }
  EXPECT_EQ(store_.Stat(vol, ChunkId(20)).status().code(), StatusCode::kDataNoChunk);
  EXPECT_EQ(store_.ChunkCount(vol), 0u);
  EXPECT_FALSE(std::filesystem::exists(ChunkDataPath(dir_, ChunkId(20))));

  // At version 3: writers at base 3 (or older) write, base 4 is refused.
  ASSERT_TRUE(store_.Write(vol, ChunkId(21), 0, data, 3, false, 0).ok());
  EXPECT_TRUE(store_.Write(vol, ChunkId(21), 100, data, 4, false, 3).ok());
  EXPECT_TRUE(store_.Write(vol, ChunkId(21), 200, data, 4, false, 2).ok());
  EXPECT_EQ(store_.Write(vol, ChunkId(21), 0, data, 6, false, 5).code(), StatusCode::kStale);
  EXPECT_EQ(store_.Truncate(vol, ChunkId(21), 1, 6, 5).code(), StatusCode::kStale);
  EXPECT_TRUE(store_.Truncate(vol, ChunkId(21), 5100, 5, 4).ok());
  auto st = store_.Stat(vol, ChunkId(21));
  ASSERT_TRUE(st.ok());
  EXPECT_EQ(st->version, 5u);
  EXPECT_EQ(st->length, 5100u);
  auto fds = store_.OpenLocal(vol, ChunkId(21), true, true, false, /*lazy=*/true, 5);
  ASSERT_TRUE(fds.ok()) << fds.status().ToString();
  EXPECT_FALSE(fds->unnamed);

  // A version recorded through a local client's own descriptor counts (the
  // store's cached file learns it from the header).
  ChunkFile local(ChunkId(21), std::move(fds->data), std::move(fds->crc), false);
  ASSERT_TRUE(local.ReadHeader().ok());
  ASSERT_TRUE(local.Write(0, data, 9).ok());
  EXPECT_TRUE(store_.Write(vol, ChunkId(21), 0, data, 10, false, 9).ok());
  EXPECT_EQ(store_.ChunkCount(vol), 1u);
}

TEST_F(ChunkStoreTest, StoredBytesCountWhatTheChunkFilesTake) {
  auto empty = store_.CountStoredBytes(VolumeId(3));
  ASSERT_TRUE(empty.ok()) << empty.status().ToString();
  EXPECT_EQ(*empty, 0u);
  std::vector<std::byte> data(1 << 20, std::byte{7});
  ASSERT_TRUE(store_.Write(VolumeId(3), ChunkId(1), 0, data, 1, true).ok());
  ASSERT_TRUE(store_.Write(VolumeId(3), ChunkId(2), 0, data, 1, true).ok());
  auto two = store_.CountStoredBytes(VolumeId(3));
  ASSERT_TRUE(two.ok());
  EXPECT_GE(*two, 2u << 20);                 // both data files, allocated
  EXPECT_LT(*two, (2u << 20) + (1u << 20));  // and their small checksum files
  ASSERT_TRUE(store_.Remove(VolumeId(3), ChunkId(1)).ok());
  auto one = store_.CountStoredBytes(VolumeId(3));
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(*one, *two / 2);
  EXPECT_EQ(store_.CountStoredBytes(VolumeId(4)).status().code(), StatusCode::kDataNoVolume);
}

TEST_F(ChunkStoreTest, LocalDescriptorsShareTheFormat) {
  auto fds = store_.OpenLocal(VolumeId(3), ChunkId(11), true, true, false);
  ASSERT_TRUE(fds.ok()) << fds.status().ToString();
  ChunkFile local(ChunkId(11), std::move(fds->data), std::move(fds->crc), false);
  ASSERT_TRUE(local.InitOrValidate().ok());
  std::vector<std::byte> data(10000, std::byte{5});
  ASSERT_TRUE(local.Write(1, data, 4).ok());
  // The service reads what the local client wrote, verified.
  AlignedBuffer buf(16384);
  uint64_t version = 0;
  auto n = store_.Read(VolumeId(3), ChunkId(11), 0, std::span(buf.data(), 16384), 4, &version);
  ASSERT_TRUE(n.ok()) << n.status().ToString();
  EXPECT_EQ(*n, 10001u);
  EXPECT_EQ(buf.data()[5000], std::byte{5});
}

// ---- lazy opens: a new chunk's files stay unnamed until adopted ----

TEST_F(ChunkStoreTest, LazyOpenOfANewChunkNamesNothingUntilAdopted) {
  auto fds = store_.OpenLocal(VolumeId(3), ChunkId(40), true, true, false, /*lazy=*/true);
  ASSERT_TRUE(fds.ok()) << fds.status().ToString();
  ASSERT_TRUE(fds->unnamed);
  EXPECT_FALSE(Named(dir_, ChunkId(40)));
  EXPECT_EQ(store_.UnnamedCount(), 1u);
  ChunkFile client = ClientFile(ChunkId(40), std::move(*fds));
  ASSERT_TRUE(client.ReadHeader().ok());  // the header is there already
  std::vector<std::byte> data(6000, std::byte{7});
  ASSERT_TRUE(client.Write(0, data, 1).ok());
  // A reader finds no chunk (never committed: a hole) and nothing is named.
  AlignedBuffer buf(8192);
  uint64_t version = 0;
  EXPECT_EQ(store_.Read(VolumeId(3), ChunkId(40), 0, std::span(buf.data(), 8192), 0, &version).status().code(),
            StatusCode::kDataNoChunk);
  EXPECT_FALSE(Named(dir_, ChunkId(40)));
  const uint64_t before = store_.ChunkCount(VolumeId(3));
  ASSERT_TRUE(store_.Adopt(VolumeId(3), ChunkId(40), client.data_fd(), client.crc_fd()).ok());
  ASSERT_TRUE(store_.Adopt(VolumeId(3), ChunkId(40), client.data_fd(), client.crc_fd()).ok());  // again: fine
  EXPECT_TRUE(Named(dir_, ChunkId(40)));
  EXPECT_EQ(store_.UnnamedCount(), 0u);
  EXPECT_EQ(store_.ChunkCount(VolumeId(3)), before + 1);
  auto n = store_.Read(VolumeId(3), ChunkId(40), 0, std::span(buf.data(), 8192), 1, &version);
  ASSERT_TRUE(n.ok()) << n.status().ToString();
  EXPECT_EQ(*n, 6000u);
  EXPECT_EQ(version, 1u);
  EXPECT_EQ(std::memcmp(buf.data(), data.data(), data.size()), 0);
}

TEST_F(ChunkStoreTest, AnotherWriterOfAnUnnamedChunkSharesItsFiles) {
  auto fds = store_.OpenLocal(VolumeId(3), ChunkId(41), true, true, false, true);
  ASSERT_TRUE(fds.ok());
  ChunkFile client = ClientFile(ChunkId(41), std::move(*fds));
  std::vector<std::byte> ours(4096, std::byte{1}), theirs(4096, std::byte{2});
  ASSERT_TRUE(client.Write(0, ours, 1).ok());
  // A second lazy opener gets the same files (and sees the bytes).
  auto again = store_.OpenLocal(VolumeId(3), ChunkId(41), true, true, false, true);
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->unnamed);
  EXPECT_EQ(again->stat.length, 4096u);
  // A remote writer (through the service) names them first and writes into them.
  ASSERT_TRUE(store_.Write(VolumeId(3), ChunkId(41), 4096, theirs, 1, false).ok());
  EXPECT_TRUE(Named(dir_, ChunkId(41)));
  EXPECT_EQ(store_.UnnamedCount(), 0u);
  ASSERT_TRUE(client.Write(8192, ours, 1).ok());  // the client goes on writing the same file
  ASSERT_TRUE(store_.Adopt(VolumeId(3), ChunkId(41), client.data_fd(), client.crc_fd()).ok());
  AlignedBuffer buf(3 * 4096);
  uint64_t version = 0;
  auto n = store_.Read(VolumeId(3), ChunkId(41), 0, std::span(buf.data(), 3 * 4096), 1, &version);
  ASSERT_TRUE(n.ok()) << n.status().ToString();
  ASSERT_EQ(*n, 3u * 4096);
  EXPECT_EQ(buf.data()[0], std::byte{1});
  EXPECT_EQ(buf.data()[4096], std::byte{2});
  EXPECT_EQ(buf.data()[8192], std::byte{1});
}

TEST_F(ChunkStoreTest, ACommittedVersionOfAnUnnamedChunkNamesIt) {
  // A version meta recorded has named files behind it: a reader, writer or
  // truncation that comes with it names a chunk still kept unnamed (its
  // client lost track of the files) rather than finding none.
  auto fds = store_.OpenLocal(VolumeId(3), ChunkId(43), true, true, false, /*lazy=*/true);
  ASSERT_TRUE(fds.ok());
  ChunkFile client = ClientFile(ChunkId(43), std::move(*fds));
  std::vector<std::byte> data(4096, std::byte{5});
  ASSERT_TRUE(client.Write(0, data, 1).ok());
  AlignedBuffer buf(4096);
  uint64_t version = 0;
  auto n = store_.Read(VolumeId(3), ChunkId(43), 0, std::span(buf.data(), 4096), 1, &version);
  ASSERT_TRUE(n.ok()) << n.status().ToString();
  EXPECT_EQ(*n, 4096u);
  EXPECT_EQ(version, 1u);
  EXPECT_EQ(buf.data()[0], std::byte{5});
  EXPECT_TRUE(Named(dir_, ChunkId(43)));
  EXPECT_EQ(store_.UnnamedCount(), 0u);

  // A writer with a base version (a remote replica's Write, Truncate) too.
  auto other = store_.OpenLocal(VolumeId(3), ChunkId(44), true, true, false, /*lazy=*/true);
  ASSERT_TRUE(other.ok());
  ChunkFile second = ClientFile(ChunkId(44), std::move(*other));
  ASSERT_TRUE(second.Write(0, data, 1).ok());
  ASSERT_TRUE(store_.Truncate(VolumeId(3), ChunkId(44), 100, 2, /*base_version=*/1).ok());
  EXPECT_TRUE(Named(dir_, ChunkId(44)));
  auto stat = store_.Stat(VolumeId(3), ChunkId(44));
  ASSERT_TRUE(stat.ok()) << stat.status().ToString();
  EXPECT_EQ(stat->length, 100u);
  EXPECT_EQ(stat->version, 2u);
}

TEST_F(ChunkStoreTest, PastItsCapacityTheOldestIsDroppedWhenEmptyAndUnheldElseNamed) {
  ChunkStore store(4, /*unnamed_capacity=*/2);
  store.AddVolume(VolumeId(3), dir_);
  // 50: empty, its writer gone. 51: written. 52: empty but a writer holds it.
  auto a = store.OpenLocal(VolumeId(3), ChunkId(50), true, true, false, true);
  auto b = store.OpenLocal(VolumeId(3), ChunkId(51), true, true, false, true);
  ASSERT_TRUE(a.ok() && b.ok());
  a->data = UniqueFd();
  a->crc = UniqueFd();
  ChunkFile written = ClientFile(ChunkId(51), std::move(*b));
  std::vector<std::byte> data(100, std::byte{5});
  ASSERT_TRUE(written.Write(0, data, 1).ok());
  auto c = store.OpenLocal(VolumeId(3), ChunkId(52), true, true, false, true);  // 50 goes
  ASSERT_TRUE(c.ok());
  EXPECT_FALSE(Named(dir_, ChunkId(50)));
  ChunkFile held = ClientFile(ChunkId(52), std::move(*c));
  ASSERT_TRUE(held.HoldWriter().ok());
  auto d = store.OpenLocal(VolumeId(3), ChunkId(53), true, true, false, true);  // 51 is named
  ASSERT_TRUE(d.ok());
  EXPECT_TRUE(Named(dir_, ChunkId(51)));
  auto e = store.OpenLocal(VolumeId(3), ChunkId(54), true, true, false, true);  // 52 is named
  ASSERT_TRUE(e.ok());
  EXPECT_TRUE(Named(dir_, ChunkId(52)));
  EXPECT_EQ(store.UnnamedCount(), 2u);
  // The named ones are the very files their clients hold.
  ASSERT_TRUE(store.Adopt(VolumeId(3), ChunkId(51), written.data_fd(), written.crc_fd()).ok());
  ASSERT_TRUE(store.Adopt(VolumeId(3), ChunkId(52), held.data_fd(), held.crc_fd()).ok());
}

TEST_F(ChunkStoreTest, TrimDropsOnlyEmptyUnheldUnnamedChunks) {
  auto gone = store_.OpenLocal(VolumeId(3), ChunkId(70), true, true, false, true);
  auto written = store_.OpenLocal(VolumeId(3), ChunkId(71), true, true, false, true);
  auto held = store_.OpenLocal(VolumeId(3), ChunkId(72), true, true, false, true);
  ASSERT_TRUE(gone.ok() && written.ok() && held.ok());
  EXPECT_EQ(store_.TrimUnnamed(std::chrono::hours(1)), 0u);  // none waited that long
  ChunkFile writer = ClientFile(ChunkId(71), std::move(*written));
  std::vector<std::byte> data(10, std::byte{4});
  ASSERT_TRUE(writer.Write(0, data, 1).ok());
  ChunkFile holder = ClientFile(ChunkId(72), std::move(*held));
  ASSERT_TRUE(holder.HoldWriter().ok());
  gone->data = UniqueFd();
  gone->crc = UniqueFd();
  EXPECT_EQ(store_.TrimUnnamed(std::chrono::seconds(0)), 1u);
  EXPECT_EQ(store_.UnnamedCount(), 2u);
  EXPECT_EQ(store_.TrimUnnamed(std::chrono::seconds(0)), 0u);  // the kept ones are looked at again
  holder.ReleaseWriter();
  EXPECT_EQ(store_.TrimUnnamed(std::chrono::seconds(0)), 1u);
  // What was kept is still the writer's: adopted with its bytes.
  ASSERT_TRUE(store_.Adopt(VolumeId(3), ChunkId(71), writer.data_fd(), writer.crc_fd()).ok());
  EXPECT_EQ(store_.Stat(VolumeId(3), ChunkId(71))->length, 10u);
  EXPECT_EQ(store_.UnnamedCount(), 0u);
  EXPECT_FALSE(Named(dir_, ChunkId(70)));
  EXPECT_FALSE(Named(dir_, ChunkId(72)));
}

ino_t InodeOf(int fd) {
  struct stat sb {};
  EXPECT_EQ(::fstat(fd, &sb), 0);
  return sb.st_ino;
}

// A client that closed a new file empty gives its prepared files back
// (client/chunk_pool.h): the same inodes serve a new chunk id, blank.
TEST_F(ChunkStoreTest, ReuseGivesEmptyUnnamedFilesToANewChunk) {
  auto old = store_.OpenLocal(VolumeId(3), ChunkId(80), true, true, false, true);
  ASSERT_TRUE(old.ok());
  const ino_t data_ino = InodeOf(old->data.get());
  ChunkFile before = ClientFile(ChunkId(80), std::move(*old));
  ASSERT_TRUE(before.MarkChecksumsPending().ok());  // a passthrough writer came and went
  ASSERT_TRUE(before.HoldWriter().ok());
  ASSERT_TRUE(
      store_.Reuse(VolumeId(3), ChunkId(80), ChunkId(90), before.data_fd(), before.crc_fd()).ok());
  EXPECT_EQ(store_.ReusedCount(), 1u);
  EXPECT_EQ(store_.UnnamedCount(), 1u);
  // The old id has no files: a writer of it gets new (blank) ones.
  auto fresh = store_.OpenLocal(VolumeId(3), ChunkId(80), true, true, false, true);
  ASSERT_TRUE(fresh.ok());
  EXPECT_NE(InodeOf(fresh->data.get()), data_ino);
  EXPECT_EQ(fresh->stat.length, 0u);
  EXPECT_EQ(store_.UnnamedCount(), 2u);
  // The old id's garbage removal drops those, not the reused ones.
  ASSERT_TRUE(store_.Remove(VolumeId(3), ChunkId(80)).ok());
  EXPECT_EQ(store_.UnnamedCount(), 1u);
  // The new id's files are those, headed as a new chunk 90.
  ChunkFile after(ChunkId(90), UniqueFd(::dup(before.data_fd())), UniqueFd(::dup(before.crc_fd())),
                  false);
  ASSERT_TRUE(after.ReadHeader().ok());
  EXPECT_EQ(after.version(), 0u);
  EXPECT_FALSE(*after.ChecksumsPending());
  auto again = store_.OpenLocal(VolumeId(3), ChunkId(90), true, true, false, true);
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->unnamed);
  EXPECT_EQ(InodeOf(again->data.get()), data_ino);
  // Written, named and read as chunk 90.
  std::vector<std::byte> data(5000, std::byte{6});
  ASSERT_TRUE(after.Write(0, data, 1).ok());
  ASSERT_TRUE(store_.Adopt(VolumeId(3), ChunkId(90), after.data_fd(), after.crc_fd()).ok());
  AlignedBuffer buf(8192);
  uint64_t version = 0;
  auto n = store_.Read(VolumeId(3), ChunkId(90), 0, std::span(buf.data(), 8192), 1, &version);
  ASSERT_TRUE(n.ok()) << n.status().ToString();
  EXPECT_EQ(*n, 5000u);
  EXPECT_EQ(std::memcmp(buf.data(), data.data(), data.size()), 0);
}

TEST_F(ChunkStoreTest, ReuseRefusesFilesThatMayBeSomeoneElsesAndChangesNothing) {
  auto open = [&](uint64_t id) {
    auto fds = store_.OpenLocal(VolumeId(3), ChunkId(id), true, true, false, true);
    EXPECT_TRUE(fds.ok());
    return ClientFile(ChunkId(id), std::move(*fds));
  };
  auto reuse = [&](uint64_t old_id, uint64_t id, const ChunkFile& f) {
    return store_.Reuse(VolumeId(3), ChunkId(old_id), ChunkId(id), f.data_fd(), f.crc_fd()).code();
  };
  ChunkFile shared = open(81);
  auto second =
      store_.OpenLocal(VolumeId(3), ChunkId(81), true, true, false, true);  // another opener
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(reuse(81, 91, shared), StatusCode::kBusy);
  ChunkFile written = open(82);
  std::vector<std::byte> one(1, std::byte{1});
  ASSERT_TRUE(written.Write(0, one, 1).ok());
  EXPECT_EQ(reuse(82, 92, written), StatusCode::kBusy);
  ChunkFile mine = open(83);
  ChunkFile other = open(84);
  EXPECT_EQ(reuse(83, 93, other), StatusCode::kInvalidArgument);  // not the files of 83
  ASSERT_TRUE(store_.Write(VolumeId(3), ChunkId(94), 0, one, 1, false).ok());
  EXPECT_EQ(reuse(83, 94, mine), StatusCode::kExists);       // 94 has files
  EXPECT_EQ(reuse(83, 84, mine), StatusCode::kExists);       // so does 84 (unnamed)
  EXPECT_EQ(reuse(85, 95, mine), StatusCode::kDataNoChunk);  // never opened here
  ChunkFile named = open(86);
  ASSERT_TRUE(store_.Adopt(VolumeId(3), ChunkId(86), named.data_fd(), named.crc_fd()).ok());
  EXPECT_EQ(reuse(86, 96, named), StatusCode::kDataNoChunk);
  EXPECT_EQ(
      store_.Reuse(VolumeId(9), ChunkId(83), ChunkId(97), mine.data_fd(), mine.crc_fd()).code(),
      StatusCode::kDataNoVolume);
  EXPECT_EQ(store_.ReusedCount(), 0u);
  // Refused, the files kept their ids: the shared and written ones are
  // named with their bytes, the one refused for a busy id still moves.
  ASSERT_TRUE(store_.Adopt(VolumeId(3), ChunkId(81), shared.data_fd(), shared.crc_fd()).ok());
  ASSERT_TRUE(store_.Adopt(VolumeId(3), ChunkId(82), written.data_fd(), written.crc_fd()).ok());
  EXPECT_EQ(store_.Stat(VolumeId(3), ChunkId(82))->length, 1u);
  EXPECT_EQ(reuse(83, 97, mine), StatusCode::kOk);
}

TEST_F(ChunkStoreTest, AdoptAfterARestartAndItsRefusals) {
  LocalFds fds;
  {
    ChunkStore before(4);
    before.AddVolume(VolumeId(3), dir_);
    auto opened = before.OpenLocal(VolumeId(3), ChunkId(60), true, true, false, true);
    ASSERT_TRUE(opened.ok());
    fds = std::move(*opened);
  }  // the data service restarts: only the client has the files now
  ChunkFile client = ClientFile(ChunkId(60), std::move(fds));
  std::vector<std::byte> data(10, std::byte{3});
  ASSERT_TRUE(client.Write(0, data, 1).ok());
  ASSERT_TRUE(store_.Adopt(VolumeId(3), ChunkId(60), client.data_fd(), client.crc_fd()).ok());
  EXPECT_EQ(store_.Stat(VolumeId(3), ChunkId(60))->length, 10u);
  // A named file is not adopted under another chunk's name; a chunk that
  // has other files is not replaced.
  auto other = store_.OpenLocal(VolumeId(3), ChunkId(61), true, true, false, true);
  ASSERT_TRUE(other.ok());
  EXPECT_EQ(store_.Adopt(VolumeId(3), ChunkId(62), client.data_fd(), client.crc_fd()).code(),
            StatusCode::kInvalidArgument);
  ASSERT_TRUE(store_.Write(VolumeId(3), ChunkId(63), 0, data, 1, false).ok());
  EXPECT_EQ(store_.Adopt(VolumeId(3), ChunkId(63), other->data.get(), other->crc.get()).code(), StatusCode::kExists);
  EXPECT_EQ(store_.Adopt(VolumeId(9), ChunkId(61), other->data.get(), other->crc.get()).code(),
            StatusCode::kDataNoVolume);
}

TEST(VolumeTest, IdentityPersistsAndRefusesOtherCluster) {
  std::string dir = std::filesystem::temp_directory_path() / ("t0fs-vol-" + std::to_string(::getpid()));
  {
    auto vol = Volume::Open(dir);
    ASSERT_TRUE(vol.ok());
    ASSERT_TRUE(vol->Bind("cluster-a", NodeId(1), VolumeId(2)).ok());
  }
  auto again = Volume::Open(dir);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->identity().node, NodeId(1));
  EXPECT_EQ(again->identity().volume, VolumeId(2));
  EXPECT_EQ(again->Bind("cluster-b", NodeId(1), VolumeId(2)).code(), StatusCode::kDataWrongCluster);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace t0fs::data
