// The t0fs binary: one executable, every role a subcommand.
#include <CLI/CLI.hpp>

#include "cli/commands.h"

int main(int argc, char** argv) { return t0fs::cli::Main(argc, argv); }
