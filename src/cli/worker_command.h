#pragma once
// `mlalab worker`: this build's kernels for another build's A/B run (ab/worker.h). The lab
// starts it for an arm whose `build` names this binary and talks to it over stdin and stdout;
// people do not run it by hand.
#include <CLI/CLI.hpp>

namespace mlalab::cli {

// Adds the subcommand to `app`; its exit status goes to `exit_code` (0 when its input ended,
// 2 when the backend cannot run here).
CLI::App* add_worker_command(CLI::App& app, int& exit_code);

}  // namespace mlalab::cli
