// `mlalab verify` end to end, on the CPU alone: a fingerprint that `mlalab ab` has just written
// (a CPU run and a command run) verifies on the same machine, and says exactly what it
// compared; what a CPU run depends on (the usable CPUs, the CPU backend's code) is a
// difference, the commit and the host are notes. Also `mlalab ab --plan-from` on such a run:
// the other command that reads a run back to judge a new one.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sched.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/exit_status.h"
#include "cli/mlalab_binary.h"
#include "kernels/registry.h"

namespace mlalab::cli {
namespace {

using testing::Outcome;
using testing::read_text;

constexpr int kExitVerified = kExitOk;
constexpr int kExitDifferent = 1;

// The smallest CPU run: one point, 2 threads against 1, a few rounds of 128-token requests.
constexpr const char* kCpuExperiment = R"(name = "tiny-cpu"
hypothesis = "2 threads beat 1"
backend = "cpu"
[sweep]
concurrency = [1]
context = 128
[measure]
launches_per_sample = 1
max_minutes = 1
throttle_fraction = 0
[decision]
min_rounds = 3
max_rounds = 3
[baseline]
variant = "cpu"
threads = 2
[[variant]]
name = "1 thread"
threads = 1
)";

constexpr const char* kCommandExperiment = R"(name = "tiny-commands"
hypothesis = "printing 110 beats printing 100"
[sweep]
concurrency = [1]
[decision]
min_rounds = 3
max_rounds = 3
[baseline]
command = "echo metric: 100"
metric = 'metric: ([0-9.]+)'
better = "higher"
timeout_s = 5
[[variant]]
name = "more"
command = "echo metric: 110"
)";

int usable_cpus() {
  cpu_set_t mask;
  CPU_ZERO(&mask);
  return sched_getaffinity(0, sizeof(mask), &mask) == 0 ? CPU_COUNT(&mask) : 0;
}

class VerifyCommand : public testing::MlalabBinaryTest {
 protected:
  // Runs the experiment with `mlalab ab` and returns its results folder.
  std::filesystem::path run_experiment(const std::string& name, const char* text) {
    const std::filesystem::path file = folder_ / (name + ".toml");
    std::ofstream(file) << text;
    const std::filesystem::path out = folder_ / "results";
    ab_ = run_mlalab(fmt::format("ab {} --out {}", file.string(), out.string()));
    EXPECT_NE(ab_.status, kExitError) << ab_.err;
    for (const auto& entry : std::filesystem::directory_iterator(out)) return entry.path();
    ADD_FAILURE() << "no results folder: " << ab_.err;
    return {};
  }

  Outcome ab_;
};

TEST_F(VerifyCommand, CpuRunVerifiesOnTheSameMachineAndSaysWhatItCompared) {
  const std::filesystem::path run = run_experiment("tiny-cpu", kCpuExperiment);
  const std::string fingerprint = (run / "fingerprint.json").string();
  // The run recorded the CPU backend's code hash and the host's load, start and end.
  const auto json = nlohmann::json::parse(read_text(fingerprint));
  EXPECT_EQ(json["arms"][0]["code_hash"], std::string(kernels::cpu_backend_code_hash()));
  EXPECT_NE(ab_.err.find("host load at the start: load average"), std::string::npos) << ab_.err;
  const auto results = nlohmann::json::parse(read_text(run / "results.json"));
  EXPECT_TRUE(results["environment"]["load_at_end"]["other_cpu_share"].is_number());

  const Outcome verify = run_mlalab("verify " + fingerprint);
  EXPECT_EQ(verify.status, kExitVerified) << verify.out << verify.err;
  EXPECT_NE(verify.out.find("\nCompared: backend, CPU model, hardware threads, usable CPUs, the "
                            "code hashes of 2 arms; noted when different: commit, host\n"),
            std::string::npos)
      << verify.out;
  EXPECT_EQ(verify.out.find("GPU"), std::string::npos) << "a CPU run compares no GPU";
  EXPECT_NE(verify.out.find("\nverified\n"), std::string::npos) << verify.out;
}

// The experiment file names what was measured as well as the arms: a file whose sweep changed
// since the run is a difference, not "verified".
TEST_F(VerifyCommand, AnExperimentWhoseSweepChangedIsADifference) {
  const std::string fingerprint =
      (run_experiment("tiny-cpu", kCpuExperiment) / "fingerprint.json").string();
  std::string changed = kCpuExperiment;
  changed.replace(changed.find("context = 128"), 13, "context = 256");
  const std::filesystem::path experiment = folder_ / "tiny-cpu-256.toml";
  std::ofstream(experiment) << changed;
  const Outcome verify =
      run_mlalab(fmt::format("verify {} --experiment {}", fingerprint, experiment.string()));
  EXPECT_EQ(verify.status, kExitDifferent) << verify.out << verify.err;
  EXPECT_NE(verify.out.find("\n  sweep context: recorded 128, current 256\n"), std::string::npos)
      << verify.out;
}

TEST_F(VerifyCommand, CpuRunUnderTasksetIsADifference) {
  if (usable_cpus() < 2 || std::system("command -v taskset >/dev/null") != 0) {
    GTEST_SKIP() << "needs taskset and 2 usable CPUs";
  }
  const std::string fingerprint =
      (run_experiment("tiny-cpu", kCpuExperiment) / "fingerprint.json").string();
  const Outcome verify = run_mlalab("verify " + fingerprint, "taskset -c 0");
  EXPECT_EQ(verify.status, kExitDifferent) << verify.out << verify.err;
  EXPECT_NE(verify.out.find(fmt::format("  usable CPUs: recorded {}, current 1\n", usable_cpus())),
            std::string::npos)
      << verify.out;
}

TEST_F(VerifyCommand, CpuRunWithOtherCodeDiffersAndAtAnotherCommitOrHostIsNoted) {
  const std::filesystem::path fingerprint =
      run_experiment("tiny-cpu", kCpuExperiment) / "fingerprint.json";
  auto json = nlohmann::json::parse(read_text(fingerprint));
  json["commit"] = "000000000000";
  json["host"] = "elsewhere";
  std::ofstream(fingerprint) << json.dump(2);
  Outcome verify = run_mlalab("verify " + fingerprint.string());
  EXPECT_EQ(verify.status, kExitVerified) << verify.out;
  EXPECT_NE(verify.out.find("note: commit: recorded 000000000000, current "), std::string::npos)
      << verify.out;
  EXPECT_NE(verify.out.find("note: host: recorded elsewhere, current "), std::string::npos)
      << verify.out;

  json["arms"][2]["code_hash"] = std::string(64, 'e');  // the variant, built from other code
  std::ofstream(fingerprint) << json.dump(2);
  verify = run_mlalab("verify " + fingerprint.string());
  EXPECT_EQ(verify.status, kExitDifferent) << verify.out;
  EXPECT_NE(verify.out.find(fmt::format("  arm 1 thread: code hash: recorded {}, current {}\n",
                                        std::string(64, 'e'), kernels::cpu_backend_code_hash())),
            std::string::npos)
      << verify.out;
}

TEST_F(VerifyCommand, CommandRunVerifiesOnTheSameMachine) {
  const std::filesystem::path experiment = folder_ / "tiny-commands.toml";
  const std::filesystem::path run = run_experiment("tiny-commands", kCommandExperiment);
  // What ran: command arms on this host, no kernel backend.
  EXPECT_NE(ab_.err.find("as command arms on host "), std::string::npos) << ab_.err;
  const auto json = nlohmann::json::parse(read_text(run / "fingerprint.json"));
  EXPECT_EQ(json["backend"], "none");
  EXPECT_TRUE(json["sm_count"].is_null());

  const std::string fingerprint = (run / "fingerprint.json").string();
  Outcome verify = run_mlalab("verify " + fingerprint);
  EXPECT_EQ(verify.status, kExitVerified) << verify.out << verify.err;
  EXPECT_NE(verify.out.find("\nCompared: backend, CPU model, hardware threads, usable CPUs, GPUs "
                            "visible; noted when different: commit, host\n"),
            std::string::npos)
      << verify.out;
  verify = run_mlalab(fmt::format("verify {} --experiment {}", fingerprint, experiment.string()));
  EXPECT_EQ(verify.status, kExitVerified) << verify.out << verify.err;
  EXPECT_NE(verify.out.find("GPUs visible, the sweep, the code hashes of 2 arms, the configs of "
                            "2 arms;"),
            std::string::npos)
      << verify.out;
}

// A cuda run checked where there is no GPU cannot be verified: an error (exit 2) that says why,
// as every other command exits when the GPU it needs is missing, not a "difference".
TEST_F(VerifyCommand, ACudaRunWithoutAGpuIsAnError) {
  const std::string fingerprint = std::string(MLALAB_SOURCE_DIR) +
                                  "/docs/results/2026-11-29-h200-final/ab/occupancy/"
                                  "fingerprint.json";
  const Outcome verify = run_mlalab("verify " + fingerprint);
  if (verify.status != kExitError && verify.err.empty()) {
    GTEST_SKIP() << "this machine has a usable GPU";
  }
  EXPECT_EQ(verify.status, kExitError) << verify.out << verify.err;
  EXPECT_NE(verify.err.find("the run was on the cuda backend and this machine has no usable "
                            "CUDA device"),
            std::string::npos)
      << verify.err;
  EXPECT_EQ(verify.out.find("verified"), std::string::npos) << verify.out;
}

// A plan from an earlier run's samples says so when they were measured differently from what
// the experiment now asks (heat, sample length): their noise may not be the new run's.
TEST_F(VerifyCommand, PlanFromWarnsWhenTheEarlierSamplesWereMeasuredDifferently) {
  const std::filesystem::path run = run_experiment("tiny-commands", kCommandExperiment);
  const std::string file = (folder_ / "tiny-commands.toml").string();
  const std::string results = (run / "results.json").string();
  const Outcome same = run_mlalab(fmt::format("ab {} --plan-from {}", file, results));
  EXPECT_EQ(same.status, kExitOk) << same.err;
  EXPECT_NE(same.out.find("plan for tiny-commands"), std::string::npos) << same.out;
  EXPECT_EQ(same.err.find("warning"), std::string::npos) << same.err;

  const Outcome heated =
      run_mlalab(fmt::format("ab {} --plan-from {} --heat-ms 100", file, results));
  EXPECT_EQ(heated.status, kExitOk) << heated.err;
  EXPECT_NE(heated.err.find("its samples were measured with heat_ms 0 (this experiment: 100)"),
            std::string::npos)
      << heated.err;
}

}  // namespace
}  // namespace mlalab::cli
