// The built mlalab binary, run as a user runs it: what only a whole command line shows, its
// exit status, stdout and stderr. Every case here is refused before anything runs, so none
// needs a GPU or takes more than a moment.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <string>

#include "bench/device_info.h"
#include "cli/exit_status.h"
#include "cli/mlalab_binary.h"

namespace mlalab::cli {
namespace {

using testing::Outcome;

std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

const std::string kDemo = std::string(MLALAB_SOURCE_DIR) + "/experiments/cpu-demo.toml";

class MlalabBinary : public testing::MlalabBinaryTest {
 protected:
  // Exit status 2, the message as the first line of stderr, nothing on stdout.
  void expect_refused(const std::string& arguments, const std::string& message) const {
    SCOPED_TRACE("mlalab " + arguments);
    const Outcome outcome = run_mlalab(arguments);
    EXPECT_EQ(outcome.status, kExitError);
    EXPECT_EQ(first_line(outcome.err), message) << outcome.err;
    EXPECT_EQ(outcome.out, "");
  }
};

// Issue 7: `--max-minutes 0` printed "Value 0 not in range 0.000000 to 1797693…" with ~300
// digits; `--seed -1` ran with the seed 2^64 − 1; `bench --seed -5` ran too.
TEST_F(MlalabBinary, RefusesOptionValuesOutOfRangeBeforeRunning) {
  // --out into the scratch folder: a run the check failed to stop must not litter the tree.
  const std::string ab = fmt::format("ab {} --out {}", kDemo, folder_.string());
  expect_refused(ab + " --max-minutes 0", "--max-minutes 0: allowed (0, 10080] minutes");
  expect_refused(ab + " --max-minutes -1", "--max-minutes -1: allowed (0, 10080] minutes");
  expect_refused(ab + " --max-minutes abc",
                 "--max-minutes abc: not a number; allowed (0, 10080] minutes");
  expect_refused(ab + " --seed -1", "--seed -1: allowed [0, 2^63)");
  expect_refused(ab + " --seed 99999999999999999999",
                 "--seed 99999999999999999999: allowed [0, 2^63)");
  expect_refused(ab + " --seed abc", "--seed abc: not an integer; allowed [0, 2^63)");
  expect_refused("bench --seed -5", "--seed -5: allowed [0, 2^63)");
  expect_refused("bench --heads 0", "--heads 0: allowed [1, 128]");
  expect_refused("bench --runs 5", "--runs 5: allowed [20, 100000]");
  expect_refused("configs --smem-limit 0", "--smem-limit 0: allowed [1, 1048576] bytes");
  expect_refused("tune --fresh --explain 8,4096",
                 "mlalab: error: --fresh replaces a tuning table and --explain reads one: pass "
                 "one of them");
  for (const char* lengths : {"mixed", "uniform:0", "uniform:1.5"}) {
    expect_refused(fmt::format("tune --lengths {}", lengths),
                   fmt::format("--lengths {}: allowed equal, uniform, or uniform:F with F in "
                               "(0, 1], e.g. uniform:0.125",
                               lengths));
  }
}

// Issue 7: `mlalab bnech` said "A subcommand is required".
TEST_F(MlalabBinary, NamesAnUnknownSubcommandAndSuggestsTheNearest) {
  const Outcome outcome = run_mlalab("bnech");
  EXPECT_EQ(outcome.status, kExitError);
  EXPECT_EQ(outcome.err,
            "mlalab: unknown subcommand 'bnech'; did you mean 'bench'?\n"
            "Subcommands: configs, bench, verify, ab, tune, worker\n"
            "Run with --help for more information.\n");
  EXPECT_EQ(outcome.out, "");
}

TEST_F(MlalabBinary, HelpAsASubcommandIsTheHelpOption) {
  const Outcome top = run_mlalab("help");
  EXPECT_EQ(top.status, 0);
  EXPECT_EQ(top.out, run_mlalab("--help").out);
  const Outcome bench = run_mlalab("help bench");
  EXPECT_EQ(bench.status, 0);
  EXPECT_NE(bench.out.find("Usage: mlalab bench [OPTIONS]"), std::string::npos) << bench.out;
  EXPECT_EQ(run_mlalab("help bnech").status, kExitError);
}

// CLI11 said "The following arguments were not expected: 4 --hedas".
TEST_F(MlalabBinary, NamesAnUnknownOptionAndSuggestsTheNearest) {
  const Outcome outcome = run_mlalab("bench --hedas 4");
  EXPECT_EQ(outcome.status, kExitError);
  EXPECT_EQ(outcome.err,
            "mlalab bench: unknown option '--hedas' (did you mean '--heads'?); see 'mlalab bench "
            "--help'\n");
  EXPECT_EQ(outcome.out, "");
  // --help wins, as it does without the stray option.
  EXPECT_EQ(run_mlalab("bench --help --hedas").status, 0);
}

// Issue 7: bench exited 1 here where ab exits 2: no usable GPU for the requested backend stops
// mlalab before anything runs, exit status 2 everywhere.
TEST_F(MlalabBinary, BackendCudaWithoutAGpuExitsTwo) {
  std::string why_not;
  if (bench::query_device(&why_not)) GTEST_SKIP() << "a GPU is usable here";
  expect_refused("bench --backend cuda",
                 fmt::format("error: --backend cuda: no usable CUDA device ({})", why_not));
}

// Issue 7: `configs --json /nonexistent/x.json` printed the whole table before failing.
TEST_F(MlalabBinary, ChecksOutputPathsBeforeAnyWork) {
  expect_refused("configs --json /nonexistent/x.json",
                 "--json /nonexistent/x.json: no such folder /nonexistent");
  expect_refused("bench --json /nonexistent/x.json",
                 "--json /nonexistent/x.json: no such folder /nonexistent");
  const auto file = folder_ / "file.txt";
  std::ofstream(file) << "not a folder";
  expect_refused(fmt::format("ab {} --out {}/runs", kDemo, file.string()),
                 fmt::format("--out {}/runs: cannot create it: {} is not a folder",
                             file.string(), file.string()));
}

}  // namespace
}  // namespace mlalab::cli
