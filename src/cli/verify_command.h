#pragma once
// `mlalab verify FINGERPRINT.json [--backend cuda|cpu] [--experiment FILE]`: before numbers
// from two runs are compared, checks that this build and machine match the recorded
// fingerprint (report/fingerprint.h): the backend, the GPU and its SM count and peak clock,
// and for every recorded kernel arm the current registry's code hash of its variant; with
// --experiment, every arm's config as the file declares it now. Prints "verified", or one
// line per difference ("what: recorded X, current Y"); the commit, driver and runtime are
// printed as notes and do not fail it.
#include <CLI/CLI.hpp>

namespace mlalab::cli {

// Adds the subcommand to `app`; when it runs, its exit status goes to `exit_code`: 0
// verified, 1 differences, 2 an error (an unreadable fingerprint or experiment file).
CLI::App* add_verify_command(CLI::App& app, int& exit_code);

}  // namespace mlalab::cli
