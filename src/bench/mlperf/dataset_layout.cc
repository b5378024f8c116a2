#include "bench/mlperf/dataset_layout.h"

#include <dirent.h>
#include <sys/stat.h>

#include <cerrno>
#include <string>
#include <vector>

#include <fmt/format.h>

namespace t0fs::bench::mlperf {
namespace {

std::string Padded(uint64_t value, uint64_t width_of) {
  size_t width = std::to_string(width_of).size();
  return fmt::format("{:0{}d}", value, width);
}

// "img_0003_of_1000.npz" -> 1000 (0 if not of that form).
uint64_t TotalFromName(const std::string& name, const std::string& ext) {
  std::string suffix = "." + ext;
  if (name.size() <= suffix.size() || name.compare(name.size() - suffix.size(), suffix.size(),
                                                   suffix) != 0) {
    return 0;
  }
  auto of = name.rfind("_of_");
  if (of == std::string::npos) return 0;
  std::string num = name.substr(of + 4, name.size() - suffix.size() - of - 4);
  if (num.empty() || num.find_first_not_of("0123456789") != std::string::npos) return 0;
  return std::stoull(num);
}

}  // namespace

std::string DatasetLayout::FileName(uint64_t index) const {
  return fmt::format("{}_{}_of_{}.{}", prefix, Padded(index, total_files), total_files, ext);
}

std::string DatasetLayout::FilePath(uint64_t index) const {
  if (subfolders > 1) {
    return fmt::format("{}/{}/{}", TrainDir(), Padded(index % subfolders, subfolders),
                       FileName(index));
  }
  return TrainDir() + "/" + FileName(index);
}

std::string DatasetLayout::IndexPath(uint64_t index) const {
  return root + "/index/train/" + FileName(index) + ".idx";
}

std::vector<std::string> DatasetLayout::Directories(bool with_index) const {
  std::vector<std::string> dirs = {root, TrainDir(), root + "/valid"};
  if (subfolders > 1) {
    for (uint32_t sub = 0; sub < subfolders; ++sub) {
      dirs.push_back(TrainDir() + "/" + Padded(sub, subfolders));
    }
  }
  if (with_index) {
    dirs.push_back(root + "/index");
    dirs.push_back(root + "/index/train");
  }
  return dirs;
}

Result<DatasetLayout> DetectDataset(const std::string& root, const std::string& ext) {
  DatasetLayout layout;
  layout.root = root;
  layout.ext = ext;
  std::string train = layout.TrainDir();
  DIR* dir = ::opendir(train.c_str());
  if (dir == nullptr) {
    return Status::FromErrno(errno, "no dataset at " + train + " (run datagen first)");
  }
  std::string first_file;
  std::string first_sub;
  uint32_t subdirs = 0;
  while (dirent* entry = ::readdir(dir)) {
    std::string name = entry->d_name;
    if (name == "." || name == "..") continue;
    bool is_dir = entry->d_type == DT_DIR;
    if (entry->d_type == DT_UNKNOWN) {
      struct stat st {};
      is_dir = ::stat((train + "/" + name).c_str(), &st) == 0 && S_ISDIR(st.st_mode);
    }
    if (is_dir) {
      ++subdirs;
      if (first_sub.empty()) first_sub = name;
    } else if (first_file.empty() && TotalFromName(name, ext) > 0) {
      first_file = name;
      if (subdirs == 0) break;  // a flat dataset: one name is enough
    }
  }
  ::closedir(dir);
  if (subdirs > 0) {
    layout.subfolders = subdirs;
    std::string sub = train + "/" + first_sub;
    DIR* inner = ::opendir(sub.c_str());
    if (inner != nullptr) {
      while (dirent* entry = ::readdir(inner)) {
        if (TotalFromName(entry->d_name, ext) > 0) {
          first_file = entry->d_name;
          break;
        }
      }
      ::closedir(inner);
    }
  }
  layout.total_files = first_file.empty() ? 0 : TotalFromName(first_file, ext);
  if (layout.total_files == 0) {
    return Status(StatusCode::kNotFound,
                  fmt::format("no {} files named img_<i>_of_<N>.{} in {} (run datagen first)", ext,
                              ext, train));
  }
  return layout;
}

}  // namespace t0fs::bench::mlperf
