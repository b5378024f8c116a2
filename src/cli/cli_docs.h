// Man pages and shell completion generated from the CLI definition itself
// (the CLI11 app every subcommand registers into), so they never disagree
// with `--help`. `t0fs gen-docs` writes them; the build runs it once
// (src/cli/CMakeLists.txt) and `make deb` installs the results.
#pragma once

#include <string>

#include "common/status.h"

namespace CLI {
class App;
}

namespace t0fs::cli {

// One page per command: t0fs(1), t0fs-SUB(1), t0fs-SUB-SUBSUB(1), … in `dir`.
Status WriteManPages(const CLI::App& root, const std::string& version, const std::string& dir);

// A bash completion script (`complete -F _t0fs t0fs`): subcommands by
// position, the options of the command being typed, file names otherwise.
std::string BashCompletion(const CLI::App& root);

// The same for zsh (a `#compdef t0fs` function file, `_t0fs`).
std::string ZshCompletion(const CLI::App& root);

// Registers the hidden `t0fs gen-docs --man DIR --bash FILE --zsh FILE`.
void RegisterGenDocs(CLI::App& app, int* exit_code);

}  // namespace t0fs::cli
