#pragma once
// The A/B lab's measuring loop: runs an experiment (experiment.h) and returns its record
// (run_record.h). Statistics and verdicts are stats.h's and verdict.h's; how an arm is
// prepared and sampled is arms.h's; what is written where is the caller's (report/).
//
// Per sweep point, in the order of the sweep:
//   1. build the point's problem once (context lengths: sample_context_lengths), with its
//      fp64 reference and, on the GPU, the replicas of its inputs: every kernel arm shares them;
//   2. prepare every arm: the baseline as A, the baseline again as A′ (its own arm, its own
//      graph), then each variant; a kernel arm is first checked against the reference, and one
//      that fails is INVALID for the rest of the run and never timed;
//   3. rounds: each round measures every arm once, in an order shuffled per round by a seeded
//      generator (recorded as Sample::order), so that no arm always runs first, or after the
//      same neighbour. After each round the SM clock is read once (nvidia-smi costs ~10-50 ms,
//      as long as a sample; reading it once per round keeps the overhead at one read per
//      round, and the round's samples share its reading, so a clock dip excludes the whole
//      round and the pairing stays balanced); a round whose clock is below
//      throttle_fraction × the run's peak reading is flagged throttled and excluded from the
//      statistics. Flags are judged against the peak so far while running, and judged again
//      against the run's final peak whenever the record is analysed;
//   4. after each round the stopping rule decides on the point's PointState (verdict.h: at
//      the looks of the schedule, every comparison over its looks, microseconds); the
//      point also stops when another round, as long as the last, would overrun its share of
//      the run's budget: min(time_budget_s, time left / points left), counted from the
//      point's start (its reference checks included), so that every point gets its share and
//      a budget-limited run still ends complete rather than partial.
// After each finished point the record (analysed, marked partial: the run is not over) goes to
// on_checkpoint, so that an interrupted or killed run leaves every finished point on disk.
//
// Stopping early: when *stop_signal becomes nonzero (the CLI's SIGINT handler sets it), the
// loop stops between two samples, or within one call of a CPU sample, and a running command
// arm is killed; the record, analysed as far as it can be, is returned marked partial
// ("interrupted by SIGINT"). The budgets are checked before every sample: a point overruns its
// share by at most one sample, and the run's budget (measure.max_minutes) also cuts the sample
// that is running when it ends (a command is killed, its sample discarded, the point's stop
// text says so). A point that has not started when the run's budget is spent is not measured
// (partial, with the reason). An arm that ran at a point but gave no valid sample there is
// INVALID, with the failures' reason.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "ab/experiment.h"
#include "ab/run_record.h"
#include "ab/verdict.h"

namespace mlalab::ab {

// What the command line may override in an experiment file.
struct Overrides {
  std::optional<Backend> backend{};      // kCuda or kCpu
  std::optional<double> max_minutes{};
  std::optional<std::uint64_t> seed{};    // of the arms' order in each round
  std::optional<double> heat_ms{};        // measure.heat_ms; above 0 turns the throttle check
                                          // off, 0 on a heated file back to its default
  std::optional<int> launches_per_sample{};  // kernel arms only
};

// The experiment with the overrides applied. Throws std::invalid_argument for a backend other
// than "cuda" or "cpu", a budget that is not > 0, heat outside [0, kMaxHeatMs], launches
// outside [1, kMaxLaunchesPerSample], or a backend or launches for an experiment of commands.
Experiment with_overrides(Experiment experiment, const Overrides& overrides);

struct RunOptions {
  // How to reproduce the run (RunRecord::command_line) and build what ran
  // (RunRecord::build_command).
  std::string command_line;
  std::string build_command;
  // The run's start (RunRecord::started_utc); the CLI names the results folder after it.
  std::chrono::system_clock::time_point started = std::chrono::system_clock::now();
  // Nonzero: stop as soon as possible; the value is the signal's number (SIGINT), or any
  // other nonzero value for a stop requested otherwise.
  const std::atomic<int>* stop_signal = nullptr;
  // Progress and warnings; nullptr for none. With progress_in_place (stderr is a terminal) the
  // progress line is rewritten in place, otherwise a line is printed every few seconds.
  std::ostream* progress = nullptr;
  bool progress_in_place = false;
  // Called once the run is set up (arms, points and environment recorded), before anything is
  // measured; an exception from it ends the run there and propagates.
  std::function<void(const RunRecord&)> on_started;
  // Called after every finished point with the record so far (analysed, marked partial).
  // An exception from it is reported on *progress and does not stop the run.
  std::function<void(const RunRecord&)> on_checkpoint;
};

// What a run ended with.
struct RunOutcome {
  RunRecord record;  // everything measured, analysed as far as possible
  // Set when the run stopped on an error after it started (a lost CUDA context, a problem
  // that could not be built); the record then holds what was measured before, marked partial.
  std::optional<std::string> error;
};

// A run that cannot start: no usable GPU for a cuda experiment (the message says why and
// suggests --backend cpu), a CPU arm on the cuda backend, settings out of range.
class RunSetupError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Runs the experiment (its backend, budget and settings as given: apply with_overrides first).
// Throws RunSetupError before anything is measured; afterwards every failure ends up in the
// outcome.
RunOutcome run_experiment(const Experiment& experiment, const RunOptions& options,
                          const StoppingRule& rule);
// The same with the default rule, SequentialStoppingRule over the experiment's family size.
RunOutcome run_experiment(const Experiment& experiment, const RunOptions& options);

// Exit statuses of `mlalab ab`, first match wins: a script must be able to tell a finished
// run's result from a run that could not finish or could not judge an arm.
inline constexpr int kExitError = 2;    // the run stopped on an error (or could not start)
inline constexpr int kExitInvalid = 3;  // an arm is INVALID: wrong results, or no valid sample
inline constexpr int kExitPartial = 4;  // not every point was measured: stopped by a signal,
                                        // or the run's budget ran out first
inline constexpr int kExitRejected = 1; // a variant REJECTED: a result, which CI can gate on
inline constexpr int kExitOk = 0;
int exit_status(const RunOutcome& outcome);

// The short conclusion printed at the end: one line per variant with its verdict (and the
// concurrencies where it was faster or slower), INVALID arms with the reason, and the
// partial reason when there is one.
std::vector<std::string> conclusion_lines(const RunRecord& record);

// ---- Pieces of the loop, exposed for tests ------------------------------------------------

// A uniformly random permutation of `items` (Fisher-Yates with our own unbiased draws, so
// that a seed gives the same orders on every standard library).
std::vector<int> shuffled(std::vector<int> items, std::mt19937_64& generator);

// Flags every sample whose SM clock is below fraction × the highest clock among the samples,
// and counts the flagged ones per point. Samples without a reading are never flagged.
void judge_throttling(RunRecord& record, double fraction);

// The record's analysis: analyze_sweep(sweep_samples(record), its settings), or nullopt when
// nothing comparable was measured.
std::optional<SweepResult> analyse(const RunRecord& record);

// "20250102T030405Z" and "2025-01-02T03:04:05Z".
std::string compact_utc(std::chrono::system_clock::time_point time);
std::string iso8601_utc(std::chrono::system_clock::time_point time);

// "45s", "1m20s", "2h03m".
std::string format_duration(double seconds);

}  // namespace mlalab::ab
