#pragma once
// `mlalab configs`: every compiled kernel variant with its resources (registers, shared
// memory, spills, occupancy) and whether it is feasible on this GPU or under a given
// shared-memory limit. See dispatch/feasibility.h for the rules.
#include <CLI/CLI.hpp>

namespace mlalab::cli {

// Adds the subcommand to `app`; when it runs, its exit status goes to `exit_code`
// (0 listed, 2 the JSON file could not be written).
CLI::App* add_configs_command(CLI::App& app, int& exit_code);

}  // namespace mlalab::cli
