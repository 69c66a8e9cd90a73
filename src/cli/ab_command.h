#pragma once
// `mlalab ab EXPERIMENT.toml`: the A/B lab. Loads the experiment (ab/experiment.h), runs it
// (ab/runner.h) and writes its report (report/report_writer.h) into
// <--out>/<name>-<UTC start, YYYYmmddTHHMMSSZ>/ after every finished sweep point and at the
// end; then prints that folder and each variant's verdict.
#include <CLI/CLI.hpp>

namespace mlalab::cli {

// Adds the subcommand to `app`; when it runs, its exit status goes to `exit_code`: 0 no variant
// REJECTED (a partial run included), 1 a variant REJECTED or an arm INVALID, 2 an error (a
// malformed experiment file, no GPU for a cuda experiment, a results folder that cannot be
// written, a run stopped by an error).
CLI::App* add_ab_command(CLI::App& app, int& exit_code);

}  // namespace mlalab::cli
