// `t0fs bench tier0-vs-networked`: the Tier 0 experiment in one command
// (docs/tier0.md).
#pragma once

namespace CLI {
class App;
}

namespace t0fs::bench::tier0 {

void RegisterTier0(CLI::App* bench, int* exit_code);

}  // namespace t0fs::bench::tier0
