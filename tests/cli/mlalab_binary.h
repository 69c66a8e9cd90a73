#pragma once
// The built mlalab binary, run as a user runs it, for the tests of what only a whole command
// line shows: its exit status, stdout and stderr. Each test gets a scratch folder of its own
// (ctest runs tests in parallel), removed after it.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace mlalab::cli::testing {

struct Outcome {
  int status = -1;  // the exit status; -1 when it did not exit
  std::string out;
  std::string err;
};

inline std::string read_text(const std::filesystem::path& path) {
  std::ifstream file(path);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

class MlalabBinaryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    folder_ = std::filesystem::path(::testing::TempDir()) /
              fmt::format("mlalab_binary_test_{}_{}", getpid(),
                          ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(folder_);
  }
  void TearDown() override { std::filesystem::remove_all(folder_); }

  // `[prefix] mlalab <arguments>` through the shell, e.g. with prefix "taskset -c 0".
  Outcome run_mlalab(const std::string& arguments, const std::string& prefix = "") const {
    const std::string command =
        fmt::format("{} {} {} >{} 2>{}", prefix, MLALAB_BINARY, arguments,
                    (folder_ / "stdout").string(), (folder_ / "stderr").string());
    const int raw = std::system(command.c_str());
    return Outcome{.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1,
                   .out = read_text(folder_ / "stdout"),
                   .err = read_text(folder_ / "stderr")};
  }

  std::filesystem::path folder_;
};

}  // namespace mlalab::cli::testing
