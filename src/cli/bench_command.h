#pragma once
// `mlalab bench`: validates, then times kernel variants on chosen shapes and prints a table
// (and, with --json, the result file). Without a GPU it runs the CPU backend on smaller
// default shapes. See bench/bench_runner.h for what is measured and how.
#include <CLI/CLI.hpp>

namespace mlalab::cli {

// Adds the subcommand to `app`; when it runs, its exit status goes to `exit_code`: 0 every
// row ok (or infeasible), 1 a variant INVALID or the run failed, 2 a usage error found after
// parsing (option errors themselves are CLI11 parse errors, reported by the caller).
CLI::App* add_bench_command(CLI::App& app, int& exit_code);

}  // namespace mlalab::cli
