// The t0fs binary: one executable, every role a subcommand.
#include <CLI/CLI.hpp>

#include "cli/commands.h"
#include "cli/mount_helper.h"

// Called as mount.fuse.t0fs / mount.t0fs (a link), it is mount(8)'s helper.
int main(int argc, char** argv) {
  if (argc > 0 && t0fs::cli::IsMountHelper(argv[0])) return t0fs::cli::MountHelperMain(argc, argv);
  return t0fs::cli::Main(argc, argv);
}
