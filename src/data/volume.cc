#include "data/volume.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <optional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/fd.h"
#include "common/io_backend.h"
#include "common/secret.h"

namespace t0fs::data {
namespace {

constexpr int kVolumeFormat = 1;

std::string NewUuid() {
  std::string raw = RandomBytes(16);
  std::string hex = HexEncode(raw);
  return fmt::format("{}-{}-{}-{}-{}", hex.substr(0, 8), hex.substr(8, 4), hex.substr(12, 4),
                     hex.substr(16, 4), hex.substr(20));
}

}  // namespace

Result<Volume> Volume::Open(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir + "/chunks", ec);
  if (ec) return Status(StatusCode::kIoError, fmt::format("volume {}: {}", dir, ec.message()));
  for (int sub = 0; sub < 256; ++sub) {
    std::filesystem::create_directories(fmt::format("{}/chunks/{:02x}", dir, sub), ec);
    if (ec) return Status(StatusCode::kIoError, fmt::format("volume {}: {}", dir, ec.message()));
  }
  Volume vol;
  vol.dir_ = dir;
  ASSIGN_OR_RETURN(LockFile lock, LockFile::Acquire(dir + "/lock", "volume " + dir));
  vol.lock_ = std::make_shared<LockFile>(std::move(lock));
  std::string path = dir + "/volume.json";
  std::ifstream in(path);
  if (in) {
    try {
      nlohmann::json j = nlohmann::json::parse(in);
      if (j.value("format", 0) != kVolumeFormat) {
        return Status(StatusCode::kDataNoVolume, fmt::format("{}: unsupported volume format", path));
      }
      vol.identity_.uuid = j.at("uuid").get<std::string>();
      vol.identity_.cluster_id = j.value("cluster_id", "");
      vol.identity_.node = NodeId(j.value("node", uint64_t{0}));
      vol.identity_.volume = VolumeId(j.value("volume", uint64_t{0}));
    } catch (const std::exception& e) {
      return Status(StatusCode::kDataNoVolume, fmt::format("{}: {}", path, e.what()));
    }
  } else {
    vol.identity_.uuid = NewUuid();
    RETURN_IF_ERROR(vol.Save());
  }
  return vol;
}

std::string FileSystemWarning(const MountEntry& mount, const std::string& sys_root) {
  if (mount.fstype != "ext4") return "";
  // sysfs names the device as the kernel does: /dev/mapper/vg-lv is dm-N.
  std::error_code ec;
  const std::filesystem::path dev = std::filesystem::canonical(mount.source, ec);
  const std::string name = (ec ? std::filesystem::path(mount.source) : dev).filename().string();
  std::ifstream in(fmt::format("{}/fs/ext4/{}/journal_task", sys_root, name));
  std::string task;
  if (!(in >> task) || task != "<none>") return "";  // journaled, or unknown
  return fmt::format(
      "{} ({} on {}) has no journal: ext4 then scans for recently freed inodes on "
      "every file it creates, and new chunk files cost the data node several times "
      "the CPU they cost on journaled ext4 or XFS; prefer a journaled file system "
      "(mkfs.ext4's default, or XFS) for volumes",
      mount.point, mount.fstype, mount.source);
}

std::string FileSystemWarning(const std::string& dir, const std::string& sys_root) {
  std::error_code ec;
  const std::filesystem::path path = std::filesystem::canonical(dir, ec);
  if (ec) return "";
  std::optional<MountEntry> mount = MountHolding(ReadMounts(), path.string());
  return mount ? FileSystemWarning(*mount, sys_root) : "";
}

Status Volume::Bind(const std::string& cluster_id, NodeId node, VolumeId volume) {
  if (!identity_.cluster_id.empty() && identity_.cluster_id != cluster_id) {
    return Status(StatusCode::kDataWrongCluster,
                  fmt::format("volume {} belongs to cluster {}, not {}", dir_, identity_.cluster_id, cluster_id));
  }
  if (identity_.cluster_id == cluster_id && identity_.node == node && identity_.volume == volume) {
    return Status::Ok();
  }
  identity_.cluster_id = cluster_id;
  identity_.node = node;
  identity_.volume = volume;
  return Save();
}

Status Volume::Save() const {
  nlohmann::json j = {{"format", kVolumeFormat},
                      {"uuid", identity_.uuid},
                      {"cluster_id", identity_.cluster_id},
                      {"node", identity_.node.value()},
                      {"volume", identity_.volume.value()}};
  std::string text = j.dump(2) + "\n";
  // Write-then-rename so a crash never leaves a half-written identity.
  std::string tmp = dir_ + "/volume.json.tmp";
  UniqueFd fd(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
  if (!fd.valid()) return Status::FromErrno(errno, "create " + tmp);
  RETURN_IF_ERROR(PwriteFull(fd.get(), reinterpret_cast<const std::byte*>(text.data()), text.size(), 0));
  if (::fsync(fd.get()) != 0) return Status::FromErrno(errno, "fsync " + tmp);
  RETURN_IF_ERROR(fd.Close());
  if (::rename(tmp.c_str(), (dir_ + "/volume.json").c_str()) != 0) {
    return Status::FromErrno(errno, "rename " + tmp);
  }
  return Status::Ok();
}

Result<VolumeStats> Volume::Stats() const {
  struct statvfs sv {};
  if (::statvfs(dir_.c_str(), &sv) != 0) return Status::FromErrno(errno, "statvfs " + dir_);
  return VolumeStats{static_cast<uint64_t>(sv.f_blocks) * sv.f_frsize,
                     static_cast<uint64_t>(sv.f_bavail) * sv.f_frsize};
}

}  // namespace t0fs::data
