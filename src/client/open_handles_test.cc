#include "client/open_handles.h"

#include <fcntl.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

namespace t0fs::client {
namespace {

const SessionId kOld(1), kNew(2);

TEST(OpenHandlesTest, RenewOpensEveryHandleOfAnOlderSessionAgain) {
  OpenHandles handles;
  const auto a = handles.Add(InodeId(10), O_RDONLY, HandleId(100), kOld);
  const auto b = handles.Add(InodeId(11), O_RDWR | O_APPEND, HandleId(101), kOld);
  const auto c =
      handles.Add(InodeId(12), O_WRONLY, HandleId(200), kNew);  // opened under the new one
  std::vector<std::pair<InodeId, int>> reopened;
  uint64_t next = 300;
  auto reopen = [&](InodeId ino, int flags) -> Result<HandleId> {
    reopened.emplace_back(ino, flags);
    return HandleId(next++);
  };
  std::vector<HandleId> released;
  auto release = [&](HandleId h) { released.push_back(h); };
  EXPECT_EQ(handles.Renew(kNew, reopen, release), 2u);
  ASSERT_EQ(reopened.size(), 2u);
  for (const auto& [ino, flags] : reopened) {
    EXPECT_EQ(flags, ino == InodeId(10) ? O_RDONLY : O_RDWR);  // the access mode only
  }
  EXPECT_NE(handles.Current(a), HandleId(100));
  EXPECT_NE(handles.Current(b), HandleId(101));
  EXPECT_EQ(handles.Current(c), HandleId(200));
  // The replaced handles go back (of the expired session: meta answers
  // "no such handle", which the release ignores).
  std::sort(released.begin(), released.end());
  EXPECT_EQ(released, (std::vector<HandleId>{HandleId(100), HandleId(101)}));
  // Once renewed, a second Renew for the same session has nothing to do.
  EXPECT_EQ(handles.Renew(kNew, reopen, release), 0u);
  EXPECT_EQ(reopened.size(), 2u);
  const HandleId current = handles.Current(a);
  EXPECT_EQ(handles.Remove(a), current);
  EXPECT_EQ(handles.size(), 2u);
}

TEST(OpenHandlesTest, AFileClosedWhileItsReopenIsOnTheWayReleasesTheNewHandle) {
  OpenHandles handles;
  const auto a = handles.Add(InodeId(10), O_RDONLY, HandleId(100), kOld);
  std::vector<HandleId> released;
  const size_t renewed = handles.Renew(
      kNew,
      [&](InodeId, int) -> Result<HandleId> {
        EXPECT_EQ(handles.Remove(a), HandleId(100));  // the File closes meanwhile
        return HandleId(300);
      },
      [&](HandleId h) { released.push_back(h); });
  EXPECT_EQ(renewed, 1u);
  EXPECT_EQ(released, std::vector<HandleId>{HandleId(300)});
  EXPECT_EQ(handles.size(), 0u);
}

TEST(OpenHandlesTest, AFailedReopenKeepsTheFileAndTheOthersGoOn) {
  OpenHandles handles;
  const auto gone = handles.Add(InodeId(10), O_RDONLY, HandleId(100), kOld);
  const auto kept = handles.Add(InodeId(11), O_RDONLY, HandleId(101), kOld);
  const size_t renewed = handles.Renew(
      kNew,
      [&](InodeId ino, int) -> Result<HandleId> {
        if (ino == InodeId(10))
          return Status(StatusCode::kNotFound, "freed with the expired session");
        return HandleId(301);
      },
      [&](HandleId h) { EXPECT_EQ(h, HandleId(101)) << "only the replaced handle goes back"; });
  EXPECT_EQ(renewed, 1u);
  EXPECT_EQ(handles.Current(gone),
            HandleId(100));  // its close releases the old one (meta: no such handle)
  EXPECT_EQ(handles.Current(kept), HandleId(301));
  EXPECT_EQ(handles.Remove(InodeId(99).value()), HandleId());  // not a key handed out
}

}  // namespace
}  // namespace t0fs::client
