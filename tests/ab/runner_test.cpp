// The A/B runner end to end on the CPU backend and with command arms: what a run records
// (rounds, orders, both baseline arms, stop reasons), how it stops early (a stop signal, a
// spent budget) and what it then leaves behind, and the pure pieces of the loop.
#include "ab/runner.h"

#include <gtest/gtest.h>

#include <signal.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "ab/run_record.h"
#include "ab/small_cpu_experiment.h"
#include "ab/worker.h"
#include "report/report_writer.h"
#include "report/results_json.h"

namespace mlalab::ab {
namespace {

constexpr int kContext = testing::kSmallContext;

Arm cpu_arm(std::string name, int threads) {
  return Arm{.name = std::move(name),
             .prediction_pct = std::nullopt,
             .config = KernelArm{.variant = kCpuVariant, .split = {}, .cpu_threads = threads}};
}

Arm command_arm(std::string name, std::string command) {
  return Arm{.name = std::move(name),
             .prediction_pct = std::nullopt,
             .config = CommandArm{.command = std::move(command),
                                  .env = {},
                                  .metric_regex = "metric: ([0-9.]+)",
                                  .direction = Direction::kHigherIsBetter,
                                  .timeout_s = 10.0}};
}

Experiment base_experiment() { return testing::small_cpu_experiment(); }

Experiment cpu_experiment() {
  Experiment experiment = base_experiment();
  experiment.baseline = cpu_arm("baseline", 1);
  experiment.variants = {cpu_arm("2 threads", 2)};
  return experiment;
}

Experiment command_experiment(std::string variant_command) {
  Experiment experiment = base_experiment();
  experiment.name = "command-test";
  experiment.backend = Backend::kNone;
  experiment.baseline = command_arm("baseline", "echo 'metric: 100'");
  experiment.variants = {command_arm("half", std::move(variant_command))};
  return experiment;
}

// Stops every point after exactly `rounds` rounds, and remembers what it was shown.
class FixedRoundsRule final : public StoppingRule {
 public:
  explicit FixedRoundsRule(int rounds) : rounds_(rounds) {}
  StopDecision decide(const PointState& state) const override {
    states.push_back(state);
    if (state.rounds < rounds_) return {};
    return {.reason = StopReason::kRoundBudgetSpent, .text = "fixed rounds"};
  }
  mutable std::vector<PointState> states;

 private:
  int rounds_;
};

// Arm indices of each (point, round), in their order within the round.
std::map<std::pair<int, int>, std::vector<int>> rounds_of(const RunRecord& record) {
  std::map<std::pair<int, int>, std::vector<int>> rounds;
  for (const Sample& sample : record.samples) {
    auto& arms = rounds[{sample.point, sample.round}];
    if (arms.size() <= static_cast<std::size_t>(sample.order)) arms.resize(sample.order + 1, -1);
    arms[sample.order] = sample.arm;
  }
  return rounds;
}

TEST(Runner, CpuRunMeasuresEveryArmOnceARoundInShuffledOrders) {
  std::vector<RunRecord> checkpoints;
  RunOptions options;
  options.command_line = "mlalab ab test.toml";
  options.on_checkpoint = [&](const RunRecord& record) { checkpoints.push_back(record); };
  const RunOutcome outcome = run_experiment(cpu_experiment(), options);
  const RunRecord& record = outcome.record;

  EXPECT_FALSE(outcome.error);
  EXPECT_FALSE(record.partial) << record.partial_reason;
  EXPECT_EQ(record.environment.backend, Backend::kCpu);
  EXPECT_TRUE(record.environment.gpu.empty()) << "the CPU backend runs on no GPU";
  EXPECT_GE(record.environment.usable_cpus, 1);
  // How busy the host was, at the start and over the whole run.
  EXPECT_TRUE(record.environment.load_at_start.other_cpu_share);
  EXPECT_TRUE(record.environment.load_at_end.other_cpu_share);
  EXPECT_EQ(record.command_line, "mlalab ab test.toml");
  EXPECT_FALSE(record.started_utc.empty());

  ASSERT_EQ(record.arms.size(), 3u);
  EXPECT_EQ(record.arms[0].role, ArmRole::kBaseline);
  EXPECT_EQ(record.arms[1].role, ArmRole::kBaselineRepeat);
  EXPECT_EQ(record.arms[1].name, "baseline (A′)");
  EXPECT_EQ(record.arms[2].role, ArmRole::kVariant);
  for (const ArmRecord& arm : record.arms) {
    EXPECT_TRUE(arm.valid) << arm.name << ": " << arm.invalid_reason;
    EXPECT_FALSE(arm.config_text.empty());
  }

  ASSERT_EQ(record.points.size(), 2u);
  for (const PointRecord& point : record.points) {
    EXPECT_GE(point.rounds, 3);
    EXPECT_LE(point.rounds, 6);
    EXPECT_NE(point.stop_reason, StopReason::kKeepGoing) << point.stop_text;
    EXPECT_FALSE(point.stop_text.empty());
    EXPECT_EQ(point.splits, 1);
    EXPECT_EQ(point.context_lengths.size(), static_cast<std::size_t>(point.concurrency));
    EXPECT_GT(point.elapsed_s, 0);
  }

  const auto rounds = rounds_of(record);
  std::size_t expected_rounds = 0;
  for (const PointRecord& point : record.points) expected_rounds += point.rounds;
  EXPECT_EQ(rounds.size(), expected_rounds);
  std::set<std::vector<int>> orders;
  for (const auto& [where, arms] : rounds) {
    EXPECT_EQ(std::multiset<int>(arms.begin(), arms.end()), (std::multiset<int>{0, 1, 2}))
        << "point " << where.first << " round " << where.second;
    orders.insert(arms);
  }
  EXPECT_GT(orders.size(), 1u) << "every round ran the arms in the same order";

  for (const Sample& sample : record.samples) {
    EXPECT_GT(sample.value, 0);
    EXPECT_GT(sample.time_us, 0);
    // throughput = batch / time
    const int batch = record.points[sample.point].concurrency;
    EXPECT_NEAR(sample.value, batch / (sample.time_us * 1e-6), sample.value * 1e-9);
    EXPECT_EQ(sample.sm_clock_mhz, -1);
    EXPECT_EQ(sample.power_w, -1.0);
    EXPECT_FALSE(sample.throttled);
  }

  ASSERT_TRUE(record.analysis);
  ASSERT_EQ(record.analysis->variants.size(), 1u);
  EXPECT_EQ(record.analysis->variants[0].name, "2 threads");
  EXPECT_EQ(record.analysis->noise.size(), 2u);

  ASSERT_EQ(checkpoints.size(), 2u);
  EXPECT_TRUE(checkpoints[0].partial);
  EXPECT_EQ(checkpoints[0].points[1].rounds, 0);
  EXPECT_TRUE(checkpoints[0].analysis);
}

TEST(Runner, SameSeedGivesTheSameOrders) {
  const auto orders = [](std::uint64_t seed) {
    Experiment experiment = cpu_experiment();
    experiment.stats.seed = seed;
    const FixedRoundsRule rule(4);
    const RunOutcome outcome = run_experiment(experiment, RunOptions{}, rule);
    std::vector<int> sequence;
    for (const auto& [where, arms] : rounds_of(outcome.record)) {
      sequence.insert(sequence.end(), arms.begin(), arms.end());
    }
    return sequence;
  };
  EXPECT_EQ(orders(7), orders(7));
  EXPECT_NE(orders(7), orders(8));
}

// After every round the rule sees the rounds; at a look (min_rounds = 3 here) also every
// comparison, as the analysis computes it.
TEST(Runner, AsksThePluggableRuleAfterEveryRound) {
  const FixedRoundsRule rule(3);
  const RunOutcome outcome = run_experiment(cpu_experiment(), RunOptions{}, rule);
  for (const PointRecord& point : outcome.record.points) {
    EXPECT_EQ(point.rounds, 3);
    EXPECT_EQ(point.stop_reason, StopReason::kRoundBudgetSpent);
    EXPECT_EQ(point.stop_text, "fixed rounds");
  }
  ASSERT_EQ(rule.states.size(), 6u);  // two points, three rounds each
  EXPECT_EQ(rule.states[0].rounds, 1);
  EXPECT_FALSE(rule.states[1].at_look);
  EXPECT_TRUE(rule.states[1].comparisons.empty());
  EXPECT_EQ(rule.states[2].rounds, 3);
  EXPECT_TRUE(rule.states[2].at_look);
  ASSERT_EQ(rule.states[2].comparisons.size(), 2u);  // A/A, then the variant
  EXPECT_EQ(rule.states[2].comparisons[0].first, kAaComparisonName);
  EXPECT_EQ(rule.states[2].comparisons[1].first, "2 threads");
  EXPECT_EQ(rule.states[2].comparisons[1].second.change.paired_rounds, 3);
}

TEST(Runner, StopSignalAfterTheFirstPointLeavesAPartialRecordOnDisk) {
  std::atomic<int> stop{0};
  const auto dir = std::filesystem::temp_directory_path() /
                   ("mlalab_runner_test_" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  RunOptions options;
  options.stop_signal = &stop;
  options.on_checkpoint = [&](const RunRecord& record) {
    report::write_report(record, dir);
    stop.store(SIGINT);  // as the CLI's handler does on Ctrl-C
  };
  const RunOutcome outcome = run_experiment(cpu_experiment(), options);
  const RunRecord& record = outcome.record;

  EXPECT_FALSE(outcome.error);
  EXPECT_TRUE(record.partial);
  EXPECT_NE(record.partial_reason.find("interrupted by SIGINT"), std::string::npos)
      << record.partial_reason;
  EXPECT_GT(record.points[0].rounds, 0);
  EXPECT_NE(record.points[0].stop_reason, StopReason::kKeepGoing);
  EXPECT_EQ(record.points[1].rounds, 0);
  EXPECT_EQ(record.points[1].stop_reason, StopReason::kKeepGoing);
  ASSERT_TRUE(record.analysis);  // the first point is analysed
  EXPECT_EQ(record.analysis->noise.size(), 1u);

  // The checkpoint after the first point is on disk, marked partial: a kill -9 loses nothing
  // that was finished.
  const RunRecord on_disk = report::read_results_json(dir / "results.json");
  EXPECT_TRUE(on_disk.partial);
  EXPECT_EQ(on_disk.samples.size(), record.samples.size());
  std::filesystem::remove_all(dir);
}

TEST(Runner, StopSignalBeforeTheStartMeasuresNothing) {
  std::atomic<int> stop{SIGINT};
  RunOptions options;
  options.stop_signal = &stop;
  const RunOutcome outcome = run_experiment(cpu_experiment(), options);
  EXPECT_TRUE(outcome.record.partial);
  EXPECT_NE(outcome.record.partial_reason.find("interrupted by SIGINT"), std::string::npos);
  EXPECT_TRUE(outcome.record.samples.empty());
  EXPECT_FALSE(outcome.record.analysis);
  EXPECT_EQ(exit_status(outcome), kExitPartial);
}

TEST(Runner, SpentBudgetEndsTheRunPartial) {
  Experiment experiment = cpu_experiment();
  experiment.measure.max_minutes = 1e-9;
  const RunOutcome outcome = run_experiment(experiment, RunOptions{});
  EXPECT_TRUE(outcome.record.partial);
  EXPECT_NE(outcome.record.partial_reason.find("budget"), std::string::npos)
      << outcome.record.partial_reason;
  EXPECT_TRUE(outcome.record.samples.empty());
}

TEST(Runner, CpuArmOnTheCudaBackendIsRefusedBeforeAnythingRuns) {
  Experiment experiment = cpu_experiment();
  experiment.backend = Backend::kCuda;
  try {
    run_experiment(experiment, RunOptions{});
    FAIL() << "expected RunSetupError";
  } catch (const RunSetupError& error) {
    EXPECT_NE(std::string(error.what()).find("--backend cpu"), std::string::npos)
        << error.what();
  }
}

TEST(Runner, APythonArmWithoutAPythonThatRunsItSaysWhatItNeeds) {
  Experiment experiment = cpu_experiment();
  experiment.variants[0].config =
      KernelArm{.variant = "", .split = {}, .python = "my_kernels:arm", .params = "{}"};
  ::setenv(kPythonEnvVar, "/no/such/python", 1);
  try {
    run_experiment(experiment, RunOptions{});
    ::unsetenv(kPythonEnvVar);
    FAIL() << "expected RunSetupError";
  } catch (const RunSetupError& error) {
    ::unsetenv(kPythonEnvVar);
    const std::string what = error.what();
    EXPECT_NE(what.find("cannot start the Python worker"), std::string::npos) << what;
    EXPECT_NE(what.find("bash scripts/install_python.sh"), std::string::npos) << what;
    EXPECT_NE(what.find("$MLALAB_PYTHON"), std::string::npos) << what;
  }
}

TEST(Runner, CommandArmsAreSampledAndJudged) {
  const RunOutcome outcome = run_experiment(command_experiment("echo 'metric: 50'"),
                                            RunOptions{});
  const RunRecord& record = outcome.record;
  ASSERT_FALSE(record.partial) << record.partial_reason;
  for (const Sample& sample : record.samples) {
    EXPECT_EQ(sample.value, sample.arm == 2 ? 50.0 : 100.0);
    EXPECT_EQ(sample.time_us, 0.0);
  }
  EXPECT_EQ(record.arms[0].code_hash.size(), 64u);
  ASSERT_TRUE(record.analysis);
  EXPECT_EQ(record.analysis->variants[0].verdict, VariantVerdict::kRejected);
  EXPECT_EQ(exit_status(outcome), kExitRejected);
  const auto lines = conclusion_lines(record);
  ASSERT_FALSE(lines.empty());
  EXPECT_NE(lines[0].find("REJECTED"), std::string::npos) << lines[0];
}

// The variant counts its own runs in a file and prints the count, so its kept samples say how
// many runs each followed: with heat at least one discarded run before each, without none.
std::vector<double> counted_runs_kept(double heat_ms) {
  const auto counter = std::filesystem::temp_directory_path() /
                       fmt::format("mlalab-heat-{}-{:g}", ::getpid(), heat_ms);
  std::filesystem::remove(counter);
  Experiment experiment = command_experiment(fmt::format(
      "n=$(( $(cat '{0}' 2>/dev/null || echo 0) + 1 )); echo $n > '{0}'; echo \"metric: $n\"",
      counter.string()));
  experiment.measure.heat_ms = heat_ms;
  const RunOutcome outcome = run_experiment(experiment, RunOptions{});
  std::filesystem::remove(counter);
  EXPECT_FALSE(outcome.record.partial) << outcome.record.partial_reason;
  std::vector<double> kept;
  for (const Sample& sample : outcome.record.samples) {
    if (sample.arm == 2) kept.push_back(sample.value);
  }
  return kept;
}

TEST(Runner, HeatRunsAnArmsOwnSamplesBeforeEachAndDiscardsThem) {
  const std::vector<double> unheated = counted_runs_kept(0);
  ASSERT_GE(unheated.size(), 6u);
  for (std::size_t i = 0; i < unheated.size(); ++i) EXPECT_EQ(unheated[i], i + 1.0);
  const std::vector<double> heated = counted_runs_kept(1);
  ASSERT_GE(heated.size(), 6u);
  double previous = 0;
  for (const double count : heated) {
    EXPECT_GE(count, previous + 2) << "a kept sample without a discarded run before it";
    previous = count;
  }
}

// Heated samples too short to average over a capped clock's steps get a note, once, with the
// launches that would make them long enough; unheated ones, and command arms, none.
TEST(Runner, NotesHeatedSamplesTooShortOnce) {
  const auto progress_of = [](Experiment experiment) {
    std::ostringstream progress;
    RunOptions options;
    options.progress = &progress;
    const FixedRoundsRule rule(2);
    run_experiment(experiment, options, rule);
    return progress.str();
  };
  Experiment heated = cpu_experiment();
  heated.measure.launches_per_sample = 1;
  heated.measure.heat_ms = 1;
  const std::string noted = progress_of(heated);
  const auto note = noted.find("heated samples of 1 launches last");
  ASSERT_NE(note, std::string::npos) << noted;
  EXPECT_NE(noted.find("--launches-per-sample ", note), std::string::npos) << noted;
  EXPECT_EQ(noted.find("heated samples of", note + 1), std::string::npos) << "noted twice";
  heated.measure.heat_ms = 0;
  EXPECT_EQ(progress_of(heated).find("heated samples"), std::string::npos);
  Experiment commands = command_experiment("echo 'metric: 50'");
  commands.measure.heat_ms = 1;
  EXPECT_EQ(progress_of(commands).find("heated samples"), std::string::npos);
}

TEST(Runner, CommandArmSeesTheConcurrency) {
  const RunOutcome outcome =
      run_experiment(command_experiment("echo \"metric: $MLALAB_CONCURRENCY\""), RunOptions{});
  for (const Sample& sample : outcome.record.samples) {
    if (sample.arm == 2) {
      EXPECT_EQ(sample.value, outcome.record.points[sample.point].concurrency);
    }
  }
}

TEST(Runner, CommandArmWhoseRegexNeverMatchesIsInvalid) {
  std::ostringstream progress;
  RunOptions options;
  options.progress = &progress;
  const RunOutcome outcome =
      run_experiment(command_experiment("echo 'no number here'"), options);
  const RunRecord& record = outcome.record;
  EXPECT_FALSE(record.arms[2].valid);
  EXPECT_NE(record.arms[2].invalid_reason.find("matched nothing"), std::string::npos)
      << record.arms[2].invalid_reason;
  EXPECT_NE(progress.str().find("warning:"), std::string::npos) << progress.str();
  EXPECT_TRUE(record.arms[0].valid);
  EXPECT_TRUE(record.arms[1].valid);
  // The baseline's A/A comparison still runs; the INVALID arm has no verdict and fails the run.
  ASSERT_TRUE(record.analysis);
  EXPECT_TRUE(record.analysis->variants.empty());
  EXPECT_EQ(exit_status(outcome), kExitInvalid);
  const auto lines = conclusion_lines(record);
  ASSERT_FALSE(lines.empty());
  EXPECT_NE(lines[0].find("INVALID"), std::string::npos) << lines[0];
}

TEST(Runner, FailingBaselineEndsTheRun) {
  Experiment experiment = command_experiment("echo 'metric: 50'");
  experiment.baseline = command_arm("baseline", "exit 3");
  const RunOutcome outcome = run_experiment(experiment, RunOptions{});
  EXPECT_TRUE(outcome.record.partial);
  EXPECT_NE(outcome.record.partial_reason.find("baseline is INVALID"), std::string::npos)
      << outcome.record.partial_reason;
  EXPECT_NE(outcome.record.arms[0].invalid_reason.find("exit status 3"), std::string::npos)
      << outcome.record.arms[0].invalid_reason;
  EXPECT_EQ(exit_status(outcome), kExitInvalid);
}

// ---- Budgets, failures and exit statuses --------------------------------------------------

// Command arms whose every sample sleeps: the budgets must bound the run anyway.
Experiment sleeping_experiment(double sample_s) {
  Experiment experiment = command_experiment(
      fmt::format("sleep {}; echo 'metric: 100'", sample_s));
  experiment.baseline = command_arm("baseline", fmt::format("sleep {}; echo 'metric: 100'",
                                                            sample_s));
  experiment.stats.min_rounds = 3;
  experiment.stats.max_rounds = 100;
  return experiment;
}

double seconds_between(std::chrono::steady_clock::time_point start,
                       std::chrono::steady_clock::time_point end) {
  return std::chrono::duration<double>(end - start).count();
}

TEST(Runner, TheRunsBudgetStopsARunningCommand) {
  Experiment experiment = command_experiment("sleep 1000; echo 'metric: 1'");
  experiment.measure.max_minutes = 0.02;  // 1.2 s
  const auto start = std::chrono::steady_clock::now();
  const RunOutcome outcome = run_experiment(experiment, RunOptions{});
  EXPECT_LT(seconds_between(start, std::chrono::steady_clock::now()), 5.0);
  const RunRecord& record = outcome.record;
  // The first point was cut (the variant's sample stopped and discarded); the second never
  // started, so the run is partial.
  EXPECT_EQ(record.points[0].stop_reason, StopReason::kTimeBudgetSpent);
  EXPECT_NE(record.points[0].stop_text.find("running sample of arm 'half' was stopped and "
                                            "discarded"),
            std::string::npos)
      << record.points[0].stop_text;
  EXPECT_TRUE(record.partial);
  EXPECT_TRUE(record.failures.empty());  // a cut sample is not the arm's failure
  EXPECT_TRUE(record.arms[2].valid) << record.arms[2].invalid_reason;
  EXPECT_EQ(exit_status(outcome), kExitPartial);
}

// A point overruns its budget by at most one sample, even when one round takes longer than
// the whole budget: 4 arms × 1 s against 1.2 s ends after 2 samples, at about 2 s, where a
// whole round would take 4.
TEST(Runner, APointsBudgetHoldsWithinOneSample) {
  constexpr double kSampleS = 1.0;
  constexpr double kBudgetS = 1.2;
  Experiment experiment = sleeping_experiment(kSampleS);
  experiment.variants.push_back(experiment.variants[0]);
  experiment.variants[1].name = "half again";
  std::get<CommandArm>(experiment.variants[1].config).env = {{"ARM", "2"}};
  experiment.sweep.concurrency = {1};
  experiment.stats.time_budget_s = kBudgetS;
  const RunOutcome outcome = run_experiment(experiment, RunOptions{});
  const PointRecord& point = outcome.record.points[0];
  EXPECT_EQ(point.stop_reason, StopReason::kTimeBudgetSpent);
  EXPECT_LT(point.elapsed_s, kBudgetS + kSampleS + 0.8) << point.stop_text;
  // Not one whole round of the 3 a verdict needs: the run did not measure what it was asked
  // to, so it is partial, not a run whose exit status 0 reads as "no change".
  EXPECT_LT(point.rounds, experiment.stats.min_rounds);
  EXPECT_TRUE(outcome.record.partial);
  // (The round the budget cut short pairs nothing.)
  EXPECT_NE(outcome.record.partial_reason.find("at 1 of 1 points before decision.min_rounds = 3 "
                                               "paired rounds (C=1 had 0): no verdict there; "
                                               "raise decision.time_budget_s"),
            std::string::npos)
      << outcome.record.partial_reason;
  EXPECT_EQ(exit_status(outcome), kExitPartial);
}

// An arm that always times out gives no sample: INVALID with the reason, whatever ended the
// point first (here the point's budget, after one timeout).
TEST(Runner, AnArmWithoutAValidSampleIsInvalid) {
  Experiment experiment = command_experiment("sleep 30");
  std::get<CommandArm>(experiment.variants[0].config).timeout_s = 0.4;
  experiment.sweep.concurrency = {1};
  experiment.stats.time_budget_s = 0.6;
  const RunOutcome outcome = run_experiment(experiment, RunOptions{});
  const RunRecord& record = outcome.record;
  ASSERT_FALSE(record.arms[2].valid);
  EXPECT_NE(record.arms[2].invalid_reason.find("no valid sample"), std::string::npos)
      << record.arms[2].invalid_reason;
  EXPECT_NE(record.arms[2].invalid_reason.find("timed out after 0.4 s"), std::string::npos)
      << record.arms[2].invalid_reason;
  ASSERT_FALSE(record.failures.empty());
  EXPECT_EQ(record.failures[0].arm, 2);
  EXPECT_EQ(exit_status(outcome), kExitInvalid);
  const auto lines = conclusion_lines(record);
  ASSERT_FALSE(lines.empty());
  EXPECT_NE(lines[0].find("INVALID"), std::string::npos) << lines[0];
}

// Ctrl-C during a long CPU sample (100 calls of tens of ms) stops it within about one call.
TEST(Runner, TheStopSignalCutsALongCpuSample) {
  Experiment experiment = cpu_experiment();
  experiment.sweep.concurrency = {8};
  experiment.sweep.context.length = 2048;
  experiment.measure.launches_per_sample = 100;
  // The stop must land in the samples, past the point's preparation (the problem and its fp64
  // reference, which cannot be cut), whose length depends on the machine's load: a stop that
  // landed there is tried again later.
  for (const int delay_ms : {1500, 4000, 10000}) {
    std::atomic<int> stop{0};
    std::chrono::steady_clock::time_point stopped_at;
    RunOptions options;
    options.stop_signal = &stop;
    std::thread stopper([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
      stopped_at = std::chrono::steady_clock::now();
      stop.store(SIGINT);
    });
    const RunOutcome outcome = run_experiment(experiment, options);
    const auto ended = std::chrono::steady_clock::now();
    stopper.join();
    const std::string& stopped = outcome.record.points[0].stop_text;
    if (stopped.find("before its first round") != std::string::npos) continue;
    EXPECT_NE(stopped.find("interrupted by SIGINT"), std::string::npos) << stopped;
    EXPECT_LT(seconds_between(stopped_at, ended), 1.0);
    EXPECT_TRUE(outcome.record.partial);
    EXPECT_EQ(exit_status(outcome), kExitPartial);
    return;
  }
  FAIL() << "every stop landed in the point's preparation";
}

// On the CPU backend, CUDA kernel arms would all run one config: refused, naming them.
// More threads than the CPUs the process may use is said before anything is measured.
TEST(Runner, ACpuArmWithMoreThreadsThanUsableCpusIsNoted) {
  Experiment experiment = cpu_experiment();
  experiment.variants = {cpu_arm("many threads", 1024)};
  std::atomic<int> stop{1};  // stopped before the first point: the note comes before it
  std::ostringstream progress;
  RunOptions options;
  options.stop_signal = &stop;
  options.progress = &progress;
  const RunOutcome outcome = run_experiment(experiment, options);
  const int usable = outcome.record.environment.usable_cpus;
  ASSERT_GT(usable, 0);
  EXPECT_NE(progress.str().find(fmt::format("note: arm 'many threads' runs 1024 threads on the {} "
                                            "CPU{} this process may use",
                                            usable, usable == 1 ? "" : "s")),
            std::string::npos)
      << progress.str();
  EXPECT_EQ(progress.str().find("note: arm 'baseline'"), std::string::npos) << progress.str();
}

TEST(Runner, KernelArmsThatCollapseOnTheCpuBackendAreRefused) {
  Experiment experiment = base_experiment();
  experiment.backend = Backend::kCpu;
  experiment.baseline = Arm{.name = "baseline", .prediction_pct = {},
                            .config = KernelArm{.variant = "h16_t16_w4_s2", .split = {},
                                                .cpu_threads = 0}};
  experiment.variants = {
      Arm{.name = "8 warps", .prediction_pct = {},
          .config = KernelArm{.variant = "h16_t16_w8_s2", .split = {}, .cpu_threads = 0}}};
  try {
    run_experiment(experiment, RunOptions{});
    FAIL() << "expected RunSetupError";
  } catch (const RunSetupError& error) {
    const std::string what = error.what();
    EXPECT_NE(what.find("'baseline', '8 warps' would all run 'cpu threads=all'"),
              std::string::npos)
        << what;
  }
}

// Each outcome gets its own status, first match wins: error, INVALID, partial, REJECTED.
TEST(ExitStatus, TellsEveryKindOfEndApart) {
  RunOutcome outcome;
  outcome.record.arms = {ArmRecord{}, ArmRecord{}, ArmRecord{}};
  outcome.record.analysis = SweepResult{};
  VariantResult rejected;
  rejected.verdict = VariantVerdict::kRejected;
  outcome.record.analysis->variants = {rejected};
  EXPECT_EQ(exit_status(outcome), kExitRejected);
  outcome.record.partial = true;
  EXPECT_EQ(exit_status(outcome), kExitPartial);
  outcome.record.arms[2].valid = false;
  EXPECT_EQ(exit_status(outcome), kExitInvalid);
  outcome.error = "lost the GPU";
  EXPECT_EQ(exit_status(outcome), kExitError);
  EXPECT_EQ(exit_status(RunOutcome{}), kExitOk);
}

TEST(Overrides, BackendOfACommandExperimentIsRefused) {
  try {
    with_overrides(command_experiment("echo 'metric: 1'"), Overrides{.backend = Backend::kCpu});
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& error) {
    EXPECT_NE(std::string(error.what()).find("arms are commands"), std::string::npos)
        << error.what();
  }
}

TEST(Overrides, ReplaceTheFilesSettings) {
  const Experiment experiment = with_overrides(
      cpu_experiment(), Overrides{.backend = Backend::kCuda, .max_minutes = 2.5, .seed = 99});
  EXPECT_EQ(experiment.backend, Backend::kCuda);
  EXPECT_EQ(experiment.measure.max_minutes, 2.5);
  EXPECT_EQ(experiment.stats.seed, 99u);
  EXPECT_THROW(with_overrides(cpu_experiment(), Overrides{.backend = Backend::kNone}),
               std::invalid_argument);
  EXPECT_THROW(with_overrides(cpu_experiment(), Overrides{.max_minutes = 0.0}),
               std::invalid_argument);
}

TEST(Overrides, HeatTurnsTheThrottleCheckOffAsInTheFile) {
  Experiment file = cpu_experiment();
  file.measure.throttle_fraction = 0.9;
  const Experiment heated = with_overrides(file, Overrides{.heat_ms = 250.0});
  EXPECT_EQ(heated.measure.heat_ms, 250.0);
  EXPECT_EQ(heated.measure.throttle_fraction, 0.0);
  const Experiment unheated = with_overrides(file, Overrides{.heat_ms = 0.0});
  EXPECT_EQ(unheated.measure.heat_ms, 0.0);
  EXPECT_EQ(unheated.measure.throttle_fraction, 0.9);
  // A heated file (its throttle check off) with heat turned off gets the default check back.
  const Experiment cooled = with_overrides(heated, Overrides{.heat_ms = 0.0});
  EXPECT_EQ(cooled.measure.heat_ms, 0.0);
  EXPECT_EQ(cooled.measure.throttle_fraction, MeasureSettings{}.throttle_fraction);
  EXPECT_THROW(with_overrides(file, Overrides{.heat_ms = kMaxHeatMs + 1}), std::invalid_argument);
  EXPECT_THROW(with_overrides(file, Overrides{.heat_ms = -1.0}), std::invalid_argument);
}

TEST(Overrides, LaunchesPerSampleForKernelArmsOnly) {
  const Experiment longer = with_overrides(cpu_experiment(), Overrides{.launches_per_sample = 500});
  EXPECT_EQ(longer.measure.launches_per_sample, 500);
  EXPECT_THROW(with_overrides(cpu_experiment(), Overrides{.launches_per_sample = 0}),
               std::invalid_argument);
  EXPECT_THROW(with_overrides(cpu_experiment(),
                              Overrides{.launches_per_sample = kMaxLaunchesPerSample + 1}),
               std::invalid_argument);
  try {
    with_overrides(command_experiment("echo 'metric: 1'"), Overrides{.launches_per_sample = 5});
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& error) {
    EXPECT_NE(std::string(error.what()).find("arms are commands"), std::string::npos)
        << error.what();
  }
}

TEST(Shuffled, IsAPermutationAndDependsOnTheGenerator) {
  std::mt19937_64 generator(1);
  std::set<std::vector<int>> seen;
  for (int i = 0; i < 200; ++i) {
    std::vector<int> order = shuffled({0, 1, 2, 3}, generator);
    std::vector<int> sorted = order;
    std::sort(sorted.begin(), sorted.end());
    EXPECT_EQ(sorted, (std::vector<int>{0, 1, 2, 3}));
    seen.insert(order);
  }
  EXPECT_EQ(seen.size(), 24u);  // every permutation of 4 shows up in 200 draws
}

TEST(JudgeThrottling, FlagsSamplesBelowTheFractionOfThePeak) {
  RunRecord record;
  record.points.resize(2);
  record.samples = {Sample{.point = 0, .sm_clock_mhz = 1980},
                    Sample{.point = 0, .sm_clock_mhz = 1700},
                    Sample{.point = 1, .sm_clock_mhz = 1800},
                    Sample{.point = 1, .sm_clock_mhz = -1}};
  judge_throttling(record, 0.9);  // below 1782 MHz
  EXPECT_FALSE(record.samples[0].throttled);
  EXPECT_TRUE(record.samples[1].throttled);
  EXPECT_FALSE(record.samples[2].throttled);
  EXPECT_FALSE(record.samples[3].throttled);  // no reading: never flagged
  EXPECT_EQ(record.points[0].throttled_samples, 1);
  EXPECT_EQ(record.points[1].throttled_samples, 0);
  judge_throttling(record, 0.0);
  EXPECT_FALSE(record.samples[1].throttled);
}

TEST(Formatting, DurationsAndTimes) {
  EXPECT_EQ(format_duration(0.4), "0.4s");
  EXPECT_EQ(format_duration(-1), "0.0s");
  EXPECT_EQ(format_duration(9.96), "10s");
  EXPECT_EQ(format_duration(45), "45s");
  EXPECT_EQ(format_duration(80), "1m20s");
  EXPECT_EQ(format_duration(2 * 3600 + 3 * 60 + 10), "2h03m");
  const auto time = std::chrono::system_clock::from_time_t(1735787045);  // 2025-01-02 03:04:05
  EXPECT_EQ(compact_utc(time), "20250102T030405Z");
  EXPECT_EQ(iso8601_utc(time), "2025-01-02T03:04:05Z");
}

}  // namespace
}  // namespace mlalab::ab
