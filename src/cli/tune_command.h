#pragma once
// `mlalab tune`: builds or updates a tuning table on this GPU (tune/tuner.h), or explains one
// of its entries (--explain, no GPU needed).
#include <CLI/CLI.hpp>

namespace mlalab::cli {

// Adds the subcommand to `app`; when it runs, its exit status goes to `exit_code`
// (0 tuned or explained, 2 an error, 4 interrupted: the table holds the keys tuned before).
CLI::App* add_tune_command(CLI::App& app, int& exit_code);

}  // namespace mlalab::cli
