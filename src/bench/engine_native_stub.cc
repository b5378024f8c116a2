// Built instead of engine_native.cc when libt0fs is not available
// (T0FS_BENCH_NATIVE=OFF): `--engine native` fails with a clear message.
#include "bench/engine.h"

namespace t0fs::bench {

Result<std::unique_ptr<Engine>> MakeNativeEngine(const EngineOptions&) {
  return Status(StatusCode::kNotSupported,
                "engine 'native' is not in this build: libt0fs was not available when t0fs was "
                "configured (re-run cmake with -DT0FS_BENCH_NATIVE=ON once the client is built)");
}

}  // namespace t0fs::bench
