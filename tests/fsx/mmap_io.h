// Loads and stores through a MAP_SHARED mapping of the file, with SIGBUS
// (what a file system's failed page fault becomes) caught by sigsetjmp and
// turned into a Failure instead of killing the run.
#pragma once

#include <cstdint>
#include <optional>
#include <span>

#include "failure.h"

namespace t0fs::fsx {

// Installs the SIGBUS handler; call once before the first mapping.
void InstallSigbusHandler();

// Maps [offset, offset + bytes.size()) of `fd` (rounded out to pages) and
// copies `bytes` into it; msync(MS_SYNC) before munmap when `sync`.
std::optional<Failure> MapWrite(int fd, uint64_t offset, std::span<const uint8_t> bytes, bool sync);
// Maps the range and copies it out into `out`.
std::optional<Failure> MapRead(int fd, uint64_t offset, std::span<uint8_t> out);

}  // namespace t0fs::fsx
