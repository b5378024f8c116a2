#include "config.h"

namespace t0fs::fsx {

const char* ModeName(IoMode mode) {
  switch (mode) {
    case IoMode::kBuffered:
      return "buffered";
    case IoMode::kNoMmap:
      return "nommap";
    case IoMode::kDirect:
      return "direct";
    case IoMode::kUring:
      return "uring";
  }
  return "?";
}

}  // namespace t0fs::fsx
