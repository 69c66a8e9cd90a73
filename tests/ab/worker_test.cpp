#include "ab/worker.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "ab/runner.h"
#include "ab/small_cpu_experiment.h"

namespace mlalab::ab {
namespace {

using Json = nlohmann::json;

std::vector<Json> serve(const std::vector<Json>& requests) {
  std::stringstream in;
  for (const Json& request : requests) in << request.dump() << '\n';
  std::stringstream out;
  const auto backend = make_cpu_backend();
  serve_worker(*backend, in, out);
  std::vector<Json> replies;
  for (std::string line; std::getline(out, line);) replies.push_back(Json::parse(line));
  return replies;
}

const Json kWorkload = {{"layout", "v4"},        {"heads", 16}, {"page_size", 16},
                        {"context_lengths", {100, 37}}, {"seed", 3},
                        {"launches_per_sample", 2}};
const Json kCpuArm = {{"variant", "cpu"}, {"split", "heuristic"}, {"table", ""},
                      {"cpu_threads", 1}};

TEST(ServeWorker, PreparesChecksAndSamplesAnArmOfItsBuild) {
  const auto replies = serve({{{"op", "hello"}},
                              {{"op", "begin_point"}, {"workload", kWorkload}},
                              {{"op", "prepare"}, {"arm", kCpuArm}},
                              {{"op", "warm_up"}, {"arm", 0}},
                              {{"op", "sample"}, {"arm", 0}},
                              {{"op", "code_hash"}, {"arm", kCpuArm}}});
  ASSERT_EQ(replies.size(), 6u);
  for (const Json& reply : replies) EXPECT_TRUE(reply.at("ok").get<bool>()) << reply.dump();
  EXPECT_EQ(replies[0].at("protocol"), kWorkerProtocol);
  EXPECT_EQ(replies[0].at("backend"), "cpu");
  EXPECT_EQ(replies[2].at("arm"), 0);
  // Throughput of a batch of 2: positive and finite, the call time with it.
  const double value = replies[4].at("value").get<double>();
  const double time_us = replies[4].at("time_us").get<double>();
  EXPECT_GT(value, 0.0);
  EXPECT_GT(time_us, 0.0);
  EXPECT_NEAR(value, 2 / (time_us * 1e-6), value * 1e-9);
  EXPECT_EQ(replies[5].at("code_hash").get<std::string>().size(), 64u);
}

// A point that fails to build leaves no point: the previous point's problem is not prepared
// against by mistake.
TEST(ServeWorker, APointThatFailsToBuildLeavesNone) {
  Json bad_workload = kWorkload;
  bad_workload["layout"] = "v9";
  const auto replies = serve({{{"op", "begin_point"}, {"workload", kWorkload}},
                              {{"op", "begin_point"}, {"workload", bad_workload}},
                              {{"op", "prepare"}, {"arm", kCpuArm}}});
  ASSERT_EQ(replies.size(), 3u);
  EXPECT_TRUE(replies[0].at("ok").get<bool>());
  EXPECT_EQ(replies[1].at("error"), "workload: unknown layout");
  EXPECT_EQ(replies[2].at("error"), "prepare before begin_point");
}

TEST(ServeWorker, AnswersABadRequestWithAnErrorAndGoesOn) {
  const auto replies = serve({{{"op", "sample"}, {"arm", 0}},
                              {{"op", "prepare"}, {"arm", kCpuArm}},
                              {{"op", "fly"}},
                              {{"op", "hello"}}});
  ASSERT_EQ(replies.size(), 4u);
  EXPECT_FALSE(replies[0].at("ok").get<bool>());
  EXPECT_EQ(replies[0].at("error"), "no such prepared arm");
  EXPECT_EQ(replies[1].at("error"), "prepare before begin_point");
  EXPECT_EQ(replies[2].at("error"), "unknown op 'fly'");
  EXPECT_TRUE(replies[3].at("ok").get<bool>());
}

TEST(WorkerBackend, RefusesABuildThatIsNoMlalab) {
  EXPECT_THROW(make_worker_backend("/bin/false", Backend::kCpu, nullptr), std::runtime_error);
  EXPECT_THROW(make_worker_backend("/nonexistent/mlalab", Backend::kCpu, nullptr),
               std::runtime_error);
}

// A worker that dies at once: its stderr reaches the lab's behind the worker's name, and the
// error that reports its end quotes the last of it.
TEST(WorkerBackend, AWorkerThatEndsIsQuotedInTheError) {
  const std::filesystem::path script =
      std::filesystem::temp_directory_path() / fmt::format("mlalab-dying-worker-{}", getpid());
  {
    std::ofstream file(script);
    file << "#!/bin/sh\necho 'first line' >&2\necho 'no usable GPU here' >&2\nexit 3\n";
  }
  std::filesystem::permissions(script, std::filesystem::perms::owner_all);
  ::testing::internal::CaptureStderr();
  std::string error;
  try {
    make_worker_backend(script.string(), Backend::kCpu, nullptr);
  } catch (const std::runtime_error& thrown) {
    error = thrown.what();
  }
  const std::string relayed = ::testing::internal::GetCapturedStderr();
  std::filesystem::remove(script);
  EXPECT_NE(error.find("its stderr ended with: first line | no usable GPU here"),
            std::string::npos)
      << error;
  EXPECT_NE(relayed.find(fmt::format("[worker of {}] no usable GPU here\n", script.string())),
            std::string::npos)
      << relayed;
}

// The lab with one arm in this process and one in a worker of the mlalab binary (another
// build, as far as the lab knows): both are checked, sampled in the same rounds and judged.
TEST(WorkerBackend, RunsAnArmOfAnotherBuildInTheSameRounds) {
  Experiment experiment = testing::small_cpu_experiment();
  experiment.name = "worker-test";
  experiment.hypothesis = "the same CPU kernel in another process runs as fast";
  experiment.sweep.concurrency = {2};
  experiment.stats.max_rounds = 4;
  experiment.stats.time_budget_s = 20.0;
  testing::here_and_in_a_worker(
      experiment, KernelArm{.variant = kCpuVariant, .split = {}, .cpu_threads = 1},
      MLALAB_BINARY);
  const RunOutcome outcome = run_experiment(experiment, RunOptions{});
  ASSERT_FALSE(outcome.error) << *outcome.error;
  const RunRecord& record = outcome.record;
  ASSERT_EQ(record.arms.size(), 3u);
  for (const ArmRecord& arm : record.arms) {
    EXPECT_TRUE(arm.valid) << arm.name << ": " << arm.invalid_reason;
    EXPECT_EQ(arm.code_hash.size(), 64u) << arm.name;
  }
  EXPECT_EQ(record.arms[2].config_text, std::string("cpu threads=1 in ") + MLALAB_BINARY);
  EXPECT_TRUE(record.failures.empty()) << record.failures.front().reason;
  int worker_samples = 0;
  for (const Sample& sample : record.samples) {
    if (sample.arm != 2) continue;
    EXPECT_GT(sample.value, 0.0);
    EXPECT_GT(sample.time_us, 0.0);
    ++worker_samples;
  }
  EXPECT_GE(worker_samples, experiment.stats.min_rounds);
}

}  // namespace
}  // namespace mlalab::ab
