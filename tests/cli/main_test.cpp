// The built mlalab binary, run as a user runs it: what only a whole command line shows, its
// exit status, stdout and stderr. Every case here is refused before anything runs, so none
// needs a GPU or takes more than a moment.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "bench/device_info.h"

namespace mlalab::cli {
namespace {

constexpr int kExitError = 2;

struct Outcome {
  int status = -1;
  std::string out;
  std::string err;
};

std::string read_text(const std::filesystem::path& path) {
  std::ifstream file(path);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

const std::string kDemo = std::string(MLALAB_SOURCE_DIR) + "/experiments/cpu-demo.toml";

// Each test gets a scratch folder of its own (ctest runs tests in parallel), removed after it.
class MlalabBinary : public testing::Test {
 protected:
  void SetUp() override {
    folder_ = std::filesystem::path(testing::TempDir()) /
              fmt::format("mlalab_main_test_{}", getpid());
    std::filesystem::create_directories(folder_);
  }
  void TearDown() override { std::filesystem::remove_all(folder_); }

  // `mlalab <arguments>` through the shell.
  Outcome run_mlalab(const std::string& arguments) const {
    const std::string command =
        fmt::format("{} {} >{} 2>{}", MLALAB_BINARY, arguments, (folder_ / "stdout").string(),
                    (folder_ / "stderr").string());
    const int raw = std::system(command.c_str());
    return Outcome{.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1,
                   .out = read_text(folder_ / "stdout"),
                   .err = read_text(folder_ / "stderr")};
  }

  // Exit status 2, the message as the first line of stderr, nothing on stdout.
  void expect_refused(const std::string& arguments, const std::string& message) const {
    SCOPED_TRACE("mlalab " + arguments);
    const Outcome outcome = run_mlalab(arguments);
    EXPECT_EQ(outcome.status, kExitError);
    EXPECT_EQ(first_line(outcome.err), message) << outcome.err;
    EXPECT_EQ(outcome.out, "");
  }

  std::filesystem::path folder_;
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
}

// Issue 7: `mlalab bnech` said "A subcommand is required".
TEST_F(MlalabBinary, NamesAnUnknownSubcommandAndSuggestsTheNearest) {
  const Outcome outcome = run_mlalab("bnech");
  EXPECT_EQ(outcome.status, kExitError);
  EXPECT_EQ(outcome.err,
            "mlalab: unknown subcommand 'bnech'; did you mean 'bench'?\n"
            "Subcommands: configs, bench, verify, ab\n"
            "Run with --help for more information.\n");
  EXPECT_EQ(outcome.out, "");
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
