// io_uring I/O of the uring mode: a batch of non-overlapping reads and
// writes (and sometimes an fsync) submitted with one io_uring_enter, then
// every completion checked: a negative result (EINTR included) or a short
// transfer is a failure, read data must equal the model's.
#pragma once

#include <liburing.h>

#include <optional>

#include "failure.h"
#include "model.h"
#include "op.h"

namespace t0fs::fsx {

// One ring, set up once per run; move-only would do, but nothing moves it.
class Ring {
 public:
  Ring() = default;
  Ring(const Ring&) = delete;
  Ring& operator=(const Ring&) = delete;
  ~Ring();

  // 0, or the errno of io_uring_queue_init.
  int Init();
  // Runs the batch of `op` on `fd` and applies its writes to `model`.
  std::optional<Failure> RunBatch(int fd, const Op& op, Model& model);

 private:
  io_uring ring_{};
  bool ready_ = false;
};

}  // namespace t0fs::fsx
