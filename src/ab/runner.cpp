#include "ab/runner.h"

#include <signal.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <ctime>
#include <limits>
#include <map>
#include <set>
#include <memory>
#include <ostream>
#include <utility>

#include "ab/arms.h"
#include "ab/context_lengths.h"
#include "ab/environment.h"
#include "ab/plan.h"
#include "ab/sha256.h"
#include "ab/worker.h"
#include "bench/bench_runner.h"
#include "bench/device_info.h"
#include "core/number_text.h"

namespace mlalab::ab {
namespace {

using Clock = std::chrono::steady_clock;

constexpr double kSecondsPerMinute = 60.0;
// A command arm whose samples fail this many times in a row is INVALID: one failure is a
// warning (a flaky run), three in a row is a broken arm, not bad luck.
constexpr int kMaxConsecutiveFailures = 3;
// Without a terminal, one progress line per this many seconds keeps a log readable.
constexpr double kProgressIntervalS = 5.0;
// Key of the generator of the arms' order per round ("ordr"), so that it draws a stream of
// its own from the run's seed, apart from the bootstrap's.
constexpr std::uint32_t kOrderStream = 0x6f726472;
// The first point's round count for the ETA, before any point has finished.
constexpr int kFirstPointRoundsGuessDivisor = 2;  // max_rounds / 2
// Heated samples shorter than this each catch one step of a power-capped clock: on an H100 at
// 128 heads, 2-6 ms samples gave an A/A band of ±3.6-6.4 %, 40-140 ms ones ±0.8-1.4 %
// (docs/results/2026-12-06-heat-long/). The note suggests samples of kHeatedSampleMs.
constexpr double kShortHeatedSampleMs = 20.0;
constexpr double kHeatedSampleMs = 40.0;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

std::string signal_text(int signal_number) {
  switch (signal_number) {
    case SIGINT:
      return "SIGINT";
    case SIGTERM:
      return "SIGTERM";
    case SIGHUP:
      return "SIGHUP";
    default:
      return "a stop request";
  }
}

// A uniform draw from [0, n), unbiased: rejects the 2^64 mod n lowest values.
std::uint64_t bounded(std::mt19937_64& generator, std::uint64_t n) {
  const std::uint64_t threshold = (0 - n) % n;
  while (true) {
    const std::uint64_t draw = generator();
    if (draw >= threshold) return draw % n;
  }
}

std::mt19937_64 keyed_generator(std::uint64_t seed, std::uint32_t stream, int key) {
  std::seed_seq sequence{static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32),
                         stream, static_cast<std::uint32_t>(key)};
  return std::mt19937_64(sequence);
}

// Progress on a terminal (one line rewritten in place) or in a log (a line every few seconds),
// and notes (warnings, finished points) on lines of their own.
class Progress {
 public:
  Progress(std::ostream* out, bool in_place) : out_(out), in_place_(in_place) {}
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;
  ~Progress() { clear(); }

  void status(const std::string& line) {
    if (!out_) return;
    if (in_place_) {
      *out_ << '\r' << line << "\x1b[K" << std::flush;
      shown_ = true;
    } else if (!last_status_ || seconds_since(*last_status_) >= kProgressIntervalS) {
      *out_ << line << std::endl;
      last_status_ = Clock::now();
    }
  }

  void note(const std::string& line) {
    if (!out_) return;
    clear();
    *out_ << line << std::endl;
  }

  void clear() {
    if (out_ && shown_) *out_ << "\r\x1b[K" << std::flush;
    shown_ = false;
  }

 private:
  std::ostream* out_;
  bool in_place_;
  bool shown_ = false;
  std::optional<Clock::time_point> last_status_;
};

// On the CPU backend a kernel arm is the CPU kernel with its thread count: the variant and the
// split choose CUDA kernels and mean nothing there. Arms that differ only in those would run
// the same config and be compared as if they differed (an experiment file with two identical
// arms is refused for the same reason): say which arms collapse, or nullopt when none do.
std::optional<std::string> collapsed_arms_on_cpu(const std::vector<const Arm*>& arms) {
  // Arms of different builds differ in their CPU code, whatever their threads, and Python
  // arms run their own callables.
  std::map<std::pair<int, std::string>, std::vector<std::string>> names_by_run;
  for (const Arm* arm : arms) {
    const auto& kernel = std::get<KernelArm>(arm->config);
    if (!kernel.python.empty()) continue;
    names_by_run[{kernel.cpu_threads, kernel.build}].push_back(fmt::format("'{}'", arm->name));
  }
  std::vector<std::string> groups;
  for (const auto& [run, names] : names_by_run) {
    if (names.size() < 2) continue;
    const Arm on_cpu{.name = {},
                     .prediction_pct = {},
                     .config = KernelArm{.variant = kCpuVariant, .split = {},
                                         .cpu_threads = run.first, .build = run.second}};
    groups.push_back(fmt::format("{} would all run '{}'", fmt::join(names, ", "),
                                 arm_config_text(on_cpu)));
  }
  if (groups.empty()) return std::nullopt;
  return fmt::format(
      "on the cpu backend {}: variants and split policies choose CUDA kernels, which the CPU "
      "backend does not run, so there would be nothing to compare. Run the experiment on a GPU, "
      "or write a CPU experiment whose arms differ in threads (experiments/cpu-demo.toml)",
      fmt::join(groups, "; "));
}

std::string point_label(std::size_t index, std::size_t count, int concurrency) {
  return fmt::format("[point {}/{} C={}]", index + 1, count, concurrency);
}

enum class PointEnd { kStopped, kInterrupted, kBaselineInvalid, kError };

// How one round's loop over the arms ended. A budget ends a round between two samples, or
// (the run's deadline) cuts the sample that is running.
enum class RoundEnd { kComplete, kInterrupted, kPointBudgetSpent, kRunBudgetSpent, kError };

// A point's kernel problems by worker (worker_of), and its prepared arms by arm index (null:
// not prepared).
using KernelPoints = std::map<std::string, std::unique_ptr<KernelPoint>>;
using PreparedArms = std::vector<std::unique_ptr<PreparedArm>>;

class Run {
 public:
  Run(const Experiment& experiment, const RunOptions& options, const StoppingRule& rule)
      : experiment_(experiment),
        options_(options),
        rule_(rule),
        progress_(options.progress, options.progress_in_place) {}

  RunOutcome run();

 private:
  void set_up();
  void add_arm(const Arm& arm, std::string name, ArmRole role);
  // A point's measurement, in its steps; each step's nullopt means "go on".
  PointEnd measure_point(std::size_t index, double allotment_s);
  //   1. the problem, once per build that runs a valid kernel arm ("": this build);
  std::optional<PointEnd> begin_kernel_points(std::size_t index, const std::string& label,
                                              KernelPoints& kernel_points);
  //   2. every valid arm checked against the reference and prepared (INVALID if it fails);
  std::optional<PointEnd> prepare_arms(std::size_t index, const std::string& label,
                                       const KernelPoints& kernel_points, PreparedArms& prepared);
  //   3. every prepared arm warmed up;
  std::optional<PointEnd> warm_up_arms(std::size_t index, PreparedArms& prepared);
  //   4. rounds until the stopping rule, the point's share of the budget or a stop ends them.
  PointEnd run_rounds(std::size_t index, const std::string& label, PreparedArms& prepared,
                      Clock::time_point point_start, double allotment_s);
  RoundEnd run_round(std::size_t index, int round, PreparedArms& prepared,
                     std::mt19937_64& order_generator, Clock::time_point point_start,
                     double allotment_s);
  // One sample of `arm`, after measure.heat_ms of its own samples, discarded. A heat sample
  // that fails or is cut is returned as the sample's outcome.
  Measurement heated_sample(PreparedArm& arm) const;
  // Arms that ran at this point but gave no valid sample there (every sample failed) are
  // INVALID: they cannot be judged, and a verdict without them would hide it.
  void invalidate_unsampled(std::size_t index, PreparedArms& prepared);
  // The plan of the point at its first look (plan.h), on the progress stream.
  void note_plan(std::size_t index, const std::string& label);
  // Once a run: heated samples of a kernel arm too short to average over a capped clock's
  // steps, and how many launches would make them long enough.
  void note_short_heated_samples(const std::string& label, std::size_t first_sample);
  // Why a point ended on its time budget, after `rounds` rounds.
  std::string budget_text(int rounds, double allotment_s) const;
  // The points whose time ran out before decision.min_rounds paired rounds, as a partial run's
  // reason; empty when there are none.
  std::string starved_points_text(const RunRecord& record) const;
  void note_oversubscribed_arms();
  // A kernel arm's harness error: the run's error when the CUDA context is gone, else nullopt.
  std::optional<std::string> context_lost(const std::string& what);
  void invalidate(std::size_t arm, const PointRecord& point, const std::string& reason);
  void read_clock(std::size_t first_sample);
  StopDecision decide(std::size_t index, double elapsed_s) const;
  double eta_s(std::size_t index, int rounds, double point_elapsed_s, double rounds_elapsed_s,
               double allotment_s) const;
  void checkpoint(std::size_t finished_points);
  void finish(RunRecord& record, bool partial, std::string reason) const;
  bool stop_requested() const {
    return options_.stop_signal != nullptr && options_.stop_signal->load() != 0;
  }
  std::string stop_text() const {
    return "interrupted by " + signal_text(options_.stop_signal ? options_.stop_signal->load() : 0);
  }
  bool baseline_valid() const { return record_.arms[0].valid && record_.arms[1].valid; }

  const Experiment& experiment_;
  const RunOptions& options_;
  const StoppingRule& rule_;
  Progress progress_;
  Clock::time_point start_ = Clock::now();
  Clock::time_point deadline_;
  std::optional<bench::DeviceInfo> device_;
  std::unique_ptr<KernelBackend> backend_;  // null when no arm is a kernel arm
  // The workers of arms of other builds and of Python arms, by worker_of(arm).
  std::map<std::string, std::unique_ptr<KernelBackend>> worker_backends_;
  KernelBackend& backend_of(const std::string& worker) const {
    return worker.empty() ? *backend_ : *worker_backends_.at(worker);
  }
  RunRecord record_;
  std::vector<int> failures_in_a_row_;      // per arm
  std::string cut_arm_;  // the arm whose running sample the run's deadline cut, if any
  bool short_heat_noted_ = false;
  std::set<std::size_t> one_instance_noted_;  // arms of older workers (prepare_arms)
  std::optional<std::string> error_;
  CpuUsage cpu_usage_at_start_;  // where the host-load reading at the end starts
  bool read_clocks_ = false;
  int peak_clock_mhz_ = -1;
  int finished_points_ = 0;
  int finished_rounds_ = 0;
};

void Run::add_arm(const Arm& arm, std::string name, ArmRole role) {
  ArmRecord arm_record;
  arm_record.name = std::move(name);
  arm_record.role = role;
  arm_record.arm = arm;
  arm_record.config_text = arm_config_text(arm);
  if (const auto* kernel = std::get_if<KernelArm>(&arm.config)) {
    arm_record.code_hash = backend_of(worker_of(*kernel)).code_hash(*kernel);
  } else {
    arm_record.code_hash = sha256_hex(std::get<CommandArm>(arm.config).command);
  }
  record_.arms.push_back(std::move(arm_record));
}

void Run::set_up() {
  try {
    validate(experiment_.stats);
  } catch (const std::invalid_argument& error) {
    throw RunSetupError(error.what());
  }
  const bool command_arms = !experiment_.baseline.is_kernel();
  if (command_arms ? experiment_.backend != Backend::kNone
                   : experiment_.backend != Backend::kCuda && experiment_.backend != Backend::kCpu) {
    throw RunSetupError(fmt::format(
        "backend '{}': allowed {}", backend_name(experiment_.backend),
        command_arms ? "none (the arms are commands: they run no kernel backend)" : "cuda or cpu"));
  }
  if (!(experiment_.measure.max_minutes > 0)) {
    throw RunSetupError(fmt::format("max_minutes {} is not > 0", experiment_.measure.max_minutes));
  }
  if (experiment_.measure.launches_per_sample < 1) {
    throw RunSetupError(fmt::format("launches_per_sample {} is not ≥ 1",
                                    experiment_.measure.launches_per_sample));
  }
  if (experiment_.sweep.concurrency.empty()) {
    throw RunSetupError("the sweep has no concurrency");
  }

  std::vector<const Arm*> arms = {&experiment_.baseline};
  for (const Arm& variant : experiment_.variants) arms.push_back(&variant);
  const bool any_kernel = std::any_of(arms.begin(), arms.end(),
                                      [](const Arm* arm) { return arm->is_kernel(); });
  const bool cuda = experiment_.backend == Backend::kCuda;
  if (cuda) {
    for (const Arm* arm : arms) {
      const auto* kernel = std::get_if<KernelArm>(&arm->config);
      if (kernel && kernel->variant == kCpuVariant) {
        throw RunSetupError(fmt::format(
            "arm '{}' runs the CPU backend (variant \"cpu\"), which the cuda backend cannot "
            "run; run the experiment with --backend cpu",
            arm->name));
      }
    }
    std::string why_not;
    device_ = bench::query_device(&why_not);
    if (!device_) {
      // No --backend cpu hint: on the CPU backend the CUDA arms would all be one config.
      throw RunSetupError(fmt::format(
          "no usable CUDA device ({}): this experiment times CUDA kernels, so it needs an "
          "NVIDIA GPU; experiments/cpu-demo.toml runs the lab on the CPU backend",
          why_not));
    }
  } else if (any_kernel) {
    if (const auto collapsed = collapsed_arms_on_cpu(arms)) throw RunSetupError(*collapsed);
  }
  if (any_kernel) {
    try {
      backend_ = cuda ? make_cuda_backend(*device_) : make_cpu_backend(options_.stop_signal);
    } catch (const std::exception& error) {
      throw RunSetupError(fmt::format("cannot use the CUDA device: {}", error.what()));
    }
  }
  for (const Arm* arm : arms) {
    const auto* kernel = std::get_if<KernelArm>(&arm->config);
    const std::string worker = kernel ? worker_of(*kernel) : std::string();
    if (worker.empty() || worker_backends_.contains(worker)) continue;
    try {
      worker_backends_[worker] =
          kernel->python.empty()
              ? make_worker_backend(kernel->build, experiment_.backend, options_.stop_signal)
              : make_python_worker_backend(experiment_.backend, options_.stop_signal);
    } catch (const std::exception& error) {
      if (kernel->python.empty()) {
        throw RunSetupError(fmt::format("arm '{}': cannot start the worker of its build: {}",
                                        arm->name, error.what()));
      }
      throw RunSetupError(fmt::format(
          "arm '{}': cannot start the Python worker ({}): {}; it needs a Python with torch and "
          "the mlalab package (bash scripts/install_python.sh), named by ${} or python3 on PATH",
          arm->name, kPythonWorker, error.what(), kPythonEnvVar));
    }
  }

  record_.experiment = experiment_;
  record_.environment = experiment_.backend == Backend::kNone ? command_environment()
                        : device_                          ? cuda_environment(*device_)
                                                           : cpu_environment();
  cpu_usage_at_start_ = read_cpu_usage();
  record_.environment.load_at_start = read_start_load(cpu_usage_at_start_);
  record_.started_utc = iso8601_utc(options_.started);
  record_.seed = experiment_.stats.seed;
  record_.command_line = options_.command_line;
  record_.build_command = options_.build_command;
  add_arm(experiment_.baseline, experiment_.baseline.name, ArmRole::kBaseline);
  add_arm(experiment_.baseline, experiment_.baseline.name + " (A′)", ArmRole::kBaselineRepeat);
  for (const Arm& variant : experiment_.variants) {
    add_arm(variant, variant.name, ArmRole::kVariant);
  }
  failures_in_a_row_.assign(record_.arms.size(), 0);
  for (const int concurrency : experiment_.sweep.concurrency) {
    PointRecord point;
    point.concurrency = concurrency;
    point.stop_text = "not measured";
    try {
      point.context_lengths = sample_context_lengths(experiment_.sweep.context, concurrency);
    } catch (const std::invalid_argument& error) {
      throw RunSetupError(fmt::format("sweep.context: {}", error.what()));
    }
    record_.points.push_back(std::move(point));
  }
  // The SM clock is read with nvidia-smi, for GPU runs only.
  read_clocks_ = cuda && device_.has_value();
}

// A CPU arm with more threads than the CPUs this process may use measures its threads taking
// turns, which may be the point of the arm but is rarely what its author meant: said, not
// refused.
void Run::note_oversubscribed_arms() {
  const int usable = record_.environment.usable_cpus;
  if (experiment_.backend != Backend::kCpu || usable <= 0) return;
  for (const ArmRecord& arm : record_.arms) {
    if (arm.role == ArmRole::kBaselineRepeat) continue;
    const auto* kernel = std::get_if<KernelArm>(&arm.arm.config);
    if (kernel == nullptr || !kernel->python.empty()) continue;
    // threads = 0 (the default) is every hardware thread, which a cpuset or taskset can exceed.
    const int threads = resolved_cpu_threads(kernel->cpu_threads);
    if (threads <= usable) continue;
    progress_.note(fmt::format("note: arm '{}' runs {} threads on the {} this process may use: "
                               "its threads take turns",
                               arm.name, threads, counted(usable, "CPU")));
  }
}

std::optional<std::string> Run::context_lost(const std::string& what) {
  if (backend_ && !backend_->usable()) {
    return fmt::format("the CUDA context was lost ({}); nothing more can run on this GPU", what);
  }
  return std::nullopt;
}

void Run::invalidate(std::size_t arm, const PointRecord& point, const std::string& reason) {
  ArmRecord& arm_record = record_.arms[arm];
  arm_record.valid = false;
  arm_record.invalid_reason = fmt::format("at concurrency {}: {}", point.concurrency, reason);
  progress_.note(fmt::format("INVALID: arm '{}' {}", arm_record.name, arm_record.invalid_reason));
}

void Run::read_clock(std::size_t first_sample) {
  if (!read_clocks_ || first_sample == record_.samples.size()) return;
  const bench::GpuLoadReading reading = bench::read_sm_clock_and_power();
  const int mhz = reading.sm_mhz;
  if (mhz <= 0) {
    read_clocks_ = false;
    progress_.note("note: the SM clock cannot be read (nvidia-smi): throttling is not detected");
    return;
  }
  peak_clock_mhz_ = std::max(peak_clock_mhz_, mhz);
  const bool throttled = mhz < experiment_.measure.throttle_fraction * peak_clock_mhz_;
  for (std::size_t s = first_sample; s < record_.samples.size(); ++s) {
    Sample& sample = record_.samples[s];
    sample.sm_clock_mhz = mhz;
    sample.power_w = reading.power_w;
    sample.throttled = throttled;
    if (throttled) ++record_.points[sample.point].throttled_samples;
  }
}

StopDecision Run::decide(std::size_t index, double elapsed_s) const {
  const SweepSamples sweep = sweep_samples(record_);
  const int concurrency = record_.points[index].concurrency;
  for (std::size_t p = 0; p < sweep.points.size(); ++p) {
    if (sweep.points[p].concurrency != concurrency) continue;
    // The sweep's arms span the point's rounds (sweep_samples), so the state's round count
    // and its looks are the point's.
    return rule_.decide(point_state(sweep, p, elapsed_s, experiment_.stats));
  }
  // No sample at all yet (every one failed): the rule still sees the rounds and the time.
  return rule_.decide(PointState{.rounds = record_.points[index].rounds,
                                 .elapsed_s = elapsed_s,
                                 .at_look = false,
                                 .comparisons = {}});
}

double Run::eta_s(std::size_t index, int rounds, double point_elapsed_s, double rounds_elapsed_s,
                  double allotment_s) const {
  const Settings& stats = experiment_.stats;
  const double round_s = rounds > 0 ? rounds_elapsed_s / rounds : 0.0;
  const double preparation_s = point_elapsed_s - rounds_elapsed_s;
  const int expected_rounds =
      finished_points_ > 0
          ? std::max(1, finished_rounds_ / finished_points_)
          : std::max(stats.min_rounds, stats.max_rounds / kFirstPointRoundsGuessDivisor);
  const double current_s = std::min(std::max(expected_rounds - rounds, 1) * round_s,
                                    std::max(0.0, allotment_s - point_elapsed_s));
  const std::size_t points_after = record_.points.size() - index - 1;
  const double remaining_s = std::chrono::duration<double>(deadline_ - Clock::now()).count();
  const double per_point_s =
      std::min({expected_rounds * round_s + preparation_s, stats.time_budget_s,
                points_after > 0 ? (remaining_s - current_s) / points_after : 0.0});
  return std::clamp(current_s + points_after * std::max(0.0, per_point_s), 0.0,
                    std::max(0.0, remaining_s));
}

PointEnd Run::measure_point(std::size_t index, double allotment_s) {
  const auto point_start = Clock::now();
  PointRecord& point = record_.points[index];
  const std::string label = point_label(index, record_.points.size(), point.concurrency);
  point.stop_text = "interrupted before its first round";
  // Arms refer to their kernel point's problem, so they are declared after it: destroyed first.
  KernelPoints kernel_points;
  PreparedArms prepared(record_.arms.size());
  const PointEnd end = [&] {
    if (const auto end = begin_kernel_points(index, label, kernel_points)) return *end;
    if (const auto end = prepare_arms(index, label, kernel_points, prepared)) return *end;
    if (const auto end = warm_up_arms(index, prepared)) return *end;
    return run_rounds(index, label, prepared, point_start, allotment_s);
  }();
  point.elapsed_s = seconds_since(point_start);
  return end;
}

std::optional<PointEnd> Run::begin_kernel_points(std::size_t index, const std::string& label,
                                                 KernelPoints& kernel_points) {
  const PointRecord& point = record_.points[index];
  std::set<std::string> workers;  // of the valid kernel arms (worker_of)
  for (const ArmRecord& arm : record_.arms) {
    const auto* kernel = std::get_if<KernelArm>(&arm.arm.config);
    if (arm.valid && kernel) workers.insert(worker_of(*kernel));
  }
  if (workers.empty()) return std::nullopt;
  progress_.status(fmt::format("{} building the problem and checking the kernel arms against "
                               "the fp64 reference", label));
  const PointWorkload workload{
      .layout = experiment_.sweep.layout,
      .num_heads = experiment_.sweep.heads,
      .page_size = experiment_.sweep.page_size,
      .context_lengths = point.context_lengths,
      .seed = experiment_.sweep.context.seed + static_cast<std::uint64_t>(point.concurrency),
      .launches_per_sample = experiment_.measure.launches_per_sample,
      .instances_per_arm = experiment_.measure.instances_per_arm};
  try {
    for (const std::string& worker : workers) {
      kernel_points[worker] = backend_of(worker).begin_point(workload);
    }
  } catch (const std::exception& error) {
    error_ = fmt::format("{} cannot build the problem: {}", label, error.what());
    return PointEnd::kError;
  }
  return std::nullopt;
}

std::optional<PointEnd> Run::prepare_arms(std::size_t index, const std::string& label,
                                          const KernelPoints& kernel_points,
                                          PreparedArms& prepared) {
  PointRecord& point = record_.points[index];
  for (std::size_t a = 0; a < record_.arms.size(); ++a) {
    ArmRecord& arm = record_.arms[a];
    if (!arm.valid) continue;
    if (stop_requested()) return PointEnd::kInterrupted;
    Preparation preparation;
    try {
      if (const auto* kernel = std::get_if<KernelArm>(&arm.arm.config)) {
        preparation = kernel_points.at(worker_of(*kernel))->prepare(*kernel);
      } else {
        preparation = prepare_command_arm(std::get<CommandArm>(arm.arm.config), point.concurrency,
                                          options_.stop_signal);
      }
    } catch (const std::exception& error) {
      preparation.invalid_reason = fmt::format("preparing it failed: {}", error.what());
    }
    if (!preparation.arm) {
      invalidate(a, point, preparation.invalid_reason);
      if (arm.arm.is_kernel()) {
        if (auto lost = context_lost(arm.name + ": " + preparation.invalid_reason)) {
          error_ = std::move(lost);
          return PointEnd::kError;
        }
      }
      continue;
    }
    if (!preparation.binary_hash.empty()) {
      arm.binary_hash = std::move(preparation.binary_hash);
    }
    if (preparation.instances < 0 && experiment_.measure.instances_per_arm > 1 &&
        one_instance_noted_.insert(a).second) {
      progress_.note(fmt::format(
          "arm '{}' is of a build that predates instances_per_arm: it runs one instance, not "
          "{}, so what that instance costs stays a fixed offset of the arm",
          arm.name, experiment_.measure.instances_per_arm));
    }
    if (arm.role == ArmRole::kBaseline) {
      point.splits = preparation.splits;
      point.workers = preparation.workers;
    }
    if (!preparation.resolved_config.empty()) {
      progress_.note(fmt::format("{} arm '{}' runs {}", label, arm.name,
                                 preparation.resolved_config));
      point.resolved_configs.resize(record_.arms.size());
      point.resolved_configs[a] = std::move(preparation.resolved_config);
    }
    prepared[a] = std::move(preparation.arm);
  }
  if (!baseline_valid()) return PointEnd::kBaselineInvalid;
  return std::nullopt;
}

std::optional<PointEnd> Run::warm_up_arms(std::size_t index, PreparedArms& prepared) {
  const PointRecord& point = record_.points[index];
  for (std::size_t a = 0; a < prepared.size(); ++a) {
    if (!prepared[a]) continue;
    try {
      prepared[a]->warm_up();
    } catch (const std::exception& error) {
      if (auto lost = context_lost(record_.arms[a].name + ": " + error.what())) {
        error_ = std::move(lost);
        return PointEnd::kError;
      }
      invalidate(a, point, fmt::format("warm-up failed: {}", error.what()));
      prepared[a].reset();
    }
  }
  if (!baseline_valid()) return PointEnd::kBaselineInvalid;
  return std::nullopt;
}

PointEnd Run::run_rounds(std::size_t index, const std::string& label, PreparedArms& prepared,
                         Clock::time_point point_start, double allotment_s) {
  PointRecord& point = record_.points[index];
  const auto rounds_start = Clock::now();
  std::mt19937_64 order_generator =
      keyed_generator(experiment_.stats.seed, kOrderStream, point.concurrency);
  const auto stop_point = [&](StopReason reason, std::string text) {
    point.stop_reason = reason;
    point.stop_text = std::move(text);
    invalidate_unsampled(index, prepared);
    return baseline_valid() ? PointEnd::kStopped : PointEnd::kBaselineInvalid;
  };
  for (int round = 0;; ++round) {
    const auto round_start = Clock::now();
    const std::size_t first_sample = record_.samples.size();
    const RoundEnd end = run_round(index, round, prepared, order_generator, point_start,
                                   allotment_s);
    // A round counts once it has measured something.
    if (record_.samples.size() > first_sample) point.rounds = round + 1;
    read_clock(first_sample);
    note_short_heated_samples(label, first_sample);
    switch (end) {
      case RoundEnd::kComplete:
        break;
      case RoundEnd::kInterrupted:
        point.stop_text = fmt::format("{} after {} rounds", stop_text(), point.rounds);
        return PointEnd::kInterrupted;
      case RoundEnd::kError:
        return PointEnd::kError;
      case RoundEnd::kRunBudgetSpent:
        return stop_point(
            StopReason::kTimeBudgetSpent,
            fmt::format("the run's {:g}-minute budget ran out during round {}{}",
                        experiment_.measure.max_minutes, round + 1,
                        cut_arm_.empty()
                            ? std::string{}
                            : fmt::format(": the running sample of arm '{}' was stopped "
                                          "and discarded",
                                          cut_arm_)));
      case RoundEnd::kPointBudgetSpent:
        return stop_point(StopReason::kTimeBudgetSpent, budget_text(point.rounds, allotment_s));
    }
    if (!baseline_valid()) return PointEnd::kBaselineInvalid;

    const double rounds_elapsed_s = seconds_since(rounds_start);
    const double point_elapsed_s = seconds_since(point_start);
    const double round_s = seconds_since(round_start);
    StopDecision decision = decide(index, rounds_elapsed_s);
    if (decision.stop()) return stop_point(decision.reason, std::move(decision.text));
    // Not settled at the first look: say what the point can detect, and what the expected
    // change would need, while there is time to stop and change the settings.
    if (point.rounds == experiment_.stats.min_rounds) note_plan(index, label);
    // A round that would end past the point's share is not begun: a whole round keeps the
    // arms paired, and the run's later points keep their shares. (A round that outgrows its
    // predecessor is still ended between two samples, by run_round.)
    if (point_elapsed_s + round_s > allotment_s) {
      return stop_point(StopReason::kTimeBudgetSpent, budget_text(point.rounds, allotment_s));
    }
    point.stop_text = decision.text;
    progress_.status(fmt::format(
        "{} round {}, {} arms, est. {} left", label, point.rounds,
        std::count_if(prepared.begin(), prepared.end(), [](const auto& arm) { return !!arm; }),
        format_duration(eta_s(index, point.rounds, point_elapsed_s, rounds_elapsed_s,
                              allotment_s))));
  }
}

void Run::note_plan(std::size_t index, const std::string& label) {
  const int concurrency = record_.points[index].concurrency;
  std::vector<PointPlan> plans = plan_sweep(record_, experiment_);
  std::erase_if(plans, [&](const PointPlan& plan) { return plan.concurrency != concurrency; });
  for (const std::string& line : plan_lines(plans, experiment_)) {
    progress_.note(fmt::format("{} plan: {}", label, line));
  }
}

void Run::note_short_heated_samples(const std::string& label, std::size_t first_sample) {
  if (short_heat_noted_ || experiment_.measure.heat_ms <= 0) return;
  const auto baseline = std::find_if(record_.samples.begin() + first_sample,
                                     record_.samples.end(),
                                     [](const Sample& sample) { return sample.arm == 0; });
  // Command arms have no launches (time_us 0): their samples are what the command ran.
  if (baseline == record_.samples.end() || baseline->time_us <= 0) return;
  const int launches = experiment_.measure.launches_per_sample;
  const double sample_ms = launches * baseline->time_us / 1000.0;
  if (sample_ms >= kShortHeatedSampleMs) return;
  short_heat_noted_ = true;
  const auto suggested = std::min<long long>(
      kMaxLaunchesPerSample,
      static_cast<long long>(std::ceil(kHeatedSampleMs * 1000.0 / baseline->time_us)));
  progress_.note(fmt::format(
      "note: {} heated samples of {} launches last {:.1f} ms: at a power cap the clock moves in "
      "steps many times a second, and samples under {:g} ms each catch one (A/A bands of ±4-7 "
      "%); --launches-per-sample {} makes them ~{:g} ms (docs/experiments.md, \"Bursts or "
      "sustained load\")",
      label, launches, sample_ms, kShortHeatedSampleMs, suggested, kHeatedSampleMs));
}

// A point whose time ran out before min_rounds paired rounds of some comparison (the A/A one,
// or a valid variant's against A) has no verdict there, only a count: the run did not measure
// what it was asked to, so it is partial (exit status 4), not a run whose exit status 0 a CI
// job would read as "no change". Paired rounds, not the point's rounds: a round the time cut
// short, or one with a failed sample, pairs nothing.
std::string Run::starved_points_text(const RunRecord& record) const {
  if (!record.analysis) return {};
  const int min_rounds = experiment_.stats.min_rounds;
  std::vector<std::string> starved;
  // Which setting ran out: a point's own budget, or (its share of) the run's.
  bool point_budget = false;
  bool run_budget = false;
  for (std::size_t index = 0; index < record.points.size(); ++index) {
    const PointRecord& point = record.points[index];
    if (point.stop_reason != StopReason::kTimeBudgetSpent) continue;
    std::optional<int> fewest;
    const auto count = [&](int paired_rounds) {
      if (paired_rounds < min_rounds) {
        fewest = std::min(fewest.value_or(paired_rounds), paired_rounds);
      }
    };
    for (const PointNoise& noise : record.analysis->noise) {
      if (noise.concurrency == point.concurrency) count(noise.a_a.paired_rounds);
    }
    for (const VariantResult& variant : record.analysis->variants) {
      const bool valid = std::any_of(record.arms.begin(), record.arms.end(), [&](const auto& arm) {
        return arm.role == ArmRole::kVariant && arm.name == variant.name && arm.valid;
      });
      if (!valid) continue;  // an INVALID arm says so itself
      for (const PointResult& result : variant.points) {
        if (result.concurrency == point.concurrency) count(result.evidence.change.paired_rounds);
      }
    }
    if (!fewest) continue;
    starved.push_back(fmt::format("C={} had {}", point.concurrency, *fewest));
    (point.stop_text.find("run's") == std::string::npos ? point_budget : run_budget) = true;
  }
  if (starved.empty()) return {};
  std::vector<std::string> settings;
  if (point_budget) settings.push_back("decision.time_budget_s");
  if (run_budget) settings.push_back("measure.max_minutes (--max-minutes)");
  return fmt::format("the time ran out at {} of {} points before decision.min_rounds = {} paired "
                     "rounds ({}): no verdict there; raise {}",
                     starved.size(), record.points.size(), min_rounds, fmt::join(starved, ", "),
                     fmt::join(settings, " and "));
}

std::string Run::budget_text(int rounds, double allotment_s) const {
  return allotment_s < experiment_.stats.time_budget_s
             ? fmt::format("this point's share of the run's {:g}-minute budget ({}) spent after "
                           "{} rounds",
                           experiment_.measure.max_minutes, format_duration(allotment_s), rounds)
             : fmt::format("time budget of {:g} s spent after {} rounds (preparation included)",
                           experiment_.stats.time_budget_s, rounds);
}

RoundEnd Run::run_round(std::size_t index, int round,
                        PreparedArms& prepared,
                        std::mt19937_64& order_generator, Clock::time_point point_start,
                        double allotment_s) {
  PointRecord& point = record_.points[index];
  const std::string label = point_label(index, record_.points.size(), point.concurrency);
  std::vector<int> active;
  for (std::size_t a = 0; a < prepared.size(); ++a) {
    if (prepared[a]) active.push_back(static_cast<int>(a));
  }
  const std::vector<int> order = shuffled(active, order_generator);
  for (std::size_t position = 0; position < order.size(); ++position) {
    // The budgets are checked before every sample, so that a point overruns its share by at
    // most one sample and its heat, and the run's deadline cuts even that (SampleLimits).
    if (stop_requested()) return RoundEnd::kInterrupted;
    if (Clock::now() >= deadline_) return RoundEnd::kRunBudgetSpent;
    if (seconds_since(point_start) >= allotment_s) return RoundEnd::kPointBudgetSpent;
    const int a = order[position];
    ArmRecord& arm = record_.arms[a];
    Measurement measurement;
    try {
      measurement = heated_sample(*prepared[a]);
    } catch (const std::exception& error) {
      if (auto lost = context_lost(arm.name + ": " + error.what())) {
        error_ = std::move(lost);
        return RoundEnd::kError;
      }
      measurement.failure = error.what();
    }
    switch (measurement.cut) {
      case SampleCut::kNone:
        break;
      case SampleCut::kStopSignal:
        return RoundEnd::kInterrupted;
      case SampleCut::kDeadline:
        cut_arm_ = arm.name;
        return RoundEnd::kRunBudgetSpent;
    }
    if (measurement.value) {
      record_.samples.push_back(Sample{.point = static_cast<int>(index),
                                       .round = round,
                                       .order = static_cast<int>(position),
                                       .arm = a,
                                       .value = *measurement.value,
                                       .time_us = measurement.time_us});
      failures_in_a_row_[a] = 0;
      continue;
    }
    record_.failures.push_back(SampleFailure{
        .point = static_cast<int>(index), .round = round, .arm = a,
        .reason = measurement.failure});
    ++failures_in_a_row_[a];
    progress_.note(fmt::format("warning: {} arm '{}', round {}: {}; the sample is missing",
                               label, arm.name, round + 1, measurement.failure));
    if (failures_in_a_row_[a] >= kMaxConsecutiveFailures) {
      invalidate(a, point, fmt::format("{} samples in a row failed; the last: {}",
                                       failures_in_a_row_[a], measurement.failure));
      prepared[a].reset();
    }
  }
  return RoundEnd::kComplete;
}

Measurement Run::heated_sample(PreparedArm& arm) const {
  const SampleLimits limits{.deadline = deadline_};
  const double heat_ms = experiment_.measure.heat_ms;
  if (heat_ms <= 0) return arm.measure(limits);
  const auto heat_end = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                           std::chrono::duration<double, std::milli>(heat_ms));
  // At least one heat sample, however short heat_ms: the clock must meet the arm's own load.
  // A stop or the deadline before any of them, or before the sample, ends the round there.
  for (bool heated = false;; heated = Clock::now() >= heat_end) {
    if (stop_requested()) return Measurement{.cut = SampleCut::kStopSignal};
    if (Clock::now() >= deadline_) return Measurement{.cut = SampleCut::kDeadline};
    if (heated) return arm.measure(limits);
    Measurement heat = arm.measure(limits);
    if (heat.cut != SampleCut::kNone) return heat;
    if (!heat.value) {
      heat.failure = "a heat sample failed: " + heat.failure;
      return heat;
    }
  }
}

void Run::invalidate_unsampled(std::size_t index,
                               PreparedArms& prepared) {
  const int point = static_cast<int>(index);
  for (std::size_t a = 0; a < prepared.size(); ++a) {
    if (!prepared[a] || !record_.arms[a].valid) continue;
    const auto at_point = [&](const auto& entry) {
      return entry.point == point && entry.arm == static_cast<int>(a);
    };
    if (std::any_of(record_.samples.begin(), record_.samples.end(), at_point)) continue;
    const auto failed = std::count_if(record_.failures.begin(), record_.failures.end(), at_point);
    if (failed == 0) continue;  // never sampled (the budget ended the point first): no evidence
    const auto last = std::find_if(record_.failures.rbegin(), record_.failures.rend(), at_point);
    invalidate(a, record_.points[index],
               fmt::format("no valid sample: all {} of its samples failed; the last: {}", failed,
                           last->reason));
    prepared[a].reset();
  }
}

void Run::finish(RunRecord& record, bool partial, std::string reason) const {
  judge_throttling(record, experiment_.measure.throttle_fraction);
  record.elapsed_s = seconds_since(start_);
  record.analysis = analyse(record);
  if (!partial) {
    reason = starved_points_text(record);
    partial = !reason.empty();
  }
  record.partial = partial;
  record.partial_reason = partial ? std::move(reason) : std::string{};
}

void Run::checkpoint(std::size_t finished_points) {
  if (!options_.on_checkpoint) return;
  RunRecord snapshot = record_;
  finish(snapshot, true,
         fmt::format("in progress: {} of {} points measured", finished_points,
                     record_.points.size()));
  try {
    options_.on_checkpoint(snapshot);
  } catch (const std::exception& error) {
    progress_.note(fmt::format("warning: writing the results so far failed: {}", error.what()));
  }
}

RunOutcome Run::run() {
  set_up();
  if (options_.on_started) options_.on_started(record_);
  note_oversubscribed_arms();
  deadline_ = start_ + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(
                           experiment_.measure.max_minutes * kSecondsPerMinute));
  std::string partial_reason;
  const std::size_t count = record_.points.size();
  for (std::size_t index = 0; index < count && partial_reason.empty(); ++index) {
    const PointRecord& point = record_.points[index];
    const std::string where = fmt::format("point {}/{} (C={})", index + 1, count,
                                          point.concurrency);
    if (stop_requested()) {
      partial_reason = fmt::format("{} before {}", stop_text(), where);
      break;
    }
    const double remaining_s = std::chrono::duration<double>(deadline_ - Clock::now()).count();
    if (remaining_s <= 0) {
      partial_reason = fmt::format("the run's budget of {:g} minutes was spent before {}",
                                   experiment_.measure.max_minutes, where);
      break;
    }
    const double allotment_s = std::min(experiment_.stats.time_budget_s,
                                        remaining_s / static_cast<double>(count - index));
    switch (measure_point(index, allotment_s)) {
      case PointEnd::kStopped:
        ++finished_points_;
        finished_rounds_ += point.rounds;
        // The stop text says why in full ("settled at the look after 20 rounds: ...").
        progress_.note(fmt::format("{} done: {}; {} throttled samples",
                                   point_label(index, count, point.concurrency),
                                   point.stop_text, point.throttled_samples));
        checkpoint(index + 1);
        break;
      case PointEnd::kInterrupted:
        partial_reason = fmt::format("{} during {}", stop_text(), where);
        progress_.note(partial_reason + ": analysing and writing what was measured");
        break;
      case PointEnd::kBaselineInvalid: {
        record_.points[index].stop_text = "stopped: the baseline is INVALID";
        const ArmRecord& bad = record_.arms[0].valid ? record_.arms[1] : record_.arms[0];
        partial_reason = fmt::format("the baseline is INVALID ({}): nothing can be compared "
                                     "after {}",
                                     bad.invalid_reason, where);
        break;
      }
      case PointEnd::kError:
        record_.points[index].stop_text = "stopped by an error";
        partial_reason = fmt::format("stopped by an error during {}: {}", where,
                                     error_.value_or("unknown"));
        break;
    }
  }
  progress_.clear();
  record_.environment.load_at_end = read_end_load(cpu_usage_at_start_);
  progress_.note("host load at the end: " + end_load_text(record_.environment));
  if (const auto warning = end_load_warning(record_.environment)) {
    progress_.note("warning: " + *warning);
  }
  RunOutcome outcome{.record = std::move(record_), .error = error_};
  finish(outcome.record, !partial_reason.empty(), partial_reason);
  return outcome;
}

}  // namespace

Experiment with_overrides(Experiment experiment, const Overrides& overrides) {
  if (overrides.backend) {
    if (!experiment.baseline.is_kernel()) {
      throw std::invalid_argument(fmt::format(
          "--backend {}: this experiment's arms are commands, which run as shell commands on no "
          "kernel backend; --backend chooses where kernel arms run",
          backend_name(*overrides.backend)));
    }
    if (*overrides.backend != Backend::kCuda && *overrides.backend != Backend::kCpu) {
      throw std::invalid_argument(
          fmt::format("backend '{}': allowed cuda or cpu", backend_name(*overrides.backend)));
    }
    experiment.backend = *overrides.backend;
  }
  if (overrides.max_minutes) {
    if (!(*overrides.max_minutes > 0)) {
      throw std::invalid_argument(
          fmt::format("max minutes {}: must be > 0", *overrides.max_minutes));
    }
    experiment.measure.max_minutes = *overrides.max_minutes;
  }
  if (overrides.seed) experiment.stats.seed = *overrides.seed;
  if (overrides.heat_ms) {
    if (!(*overrides.heat_ms >= 0 && *overrides.heat_ms <= kMaxHeatMs)) {
      throw std::invalid_argument(
          fmt::format("heat {} ms: allowed [0, {:g}]", *overrides.heat_ms, kMaxHeatMs));
    }
    // As in the file: with heat a lowered clock is what is measured (experiment.h), so the
    // throttle check is off; heat turned off on a heated file brings back the default check.
    const bool was_heated = experiment.measure.heat_ms > 0;
    experiment.measure.heat_ms = *overrides.heat_ms;
    if (experiment.measure.heat_ms > 0 || was_heated) {
      experiment.measure.throttle_fraction = default_throttle_fraction(experiment.measure.heat_ms);
    }
  }
  if (overrides.launches_per_sample) {
    if (!experiment.baseline.is_kernel()) {
      throw std::invalid_argument(fmt::format(
          "--launches-per-sample {}: this experiment's arms are commands, whose samples are "
          "one run each; it sets how many kernel launches make one sample",
          *overrides.launches_per_sample));
    }
    if (*overrides.launches_per_sample < 1 ||
        *overrides.launches_per_sample > kMaxLaunchesPerSample) {
      throw std::invalid_argument(fmt::format("launches per sample {}: allowed [1, {}]",
                                              *overrides.launches_per_sample,
                                              kMaxLaunchesPerSample));
    }
    experiment.measure.launches_per_sample = *overrides.launches_per_sample;
  }
  return experiment;
}

RunOutcome run_experiment(const Experiment& experiment, const RunOptions& options,
                          const StoppingRule& rule) {
  Run run(experiment, options, rule);
  return run.run();
}

RunOutcome run_experiment(const Experiment& experiment, const RunOptions& options) {
  try {
    validate(experiment.stats);
  } catch (const std::invalid_argument& error) {
    throw RunSetupError(error.what());
  }
  const SequentialStoppingRule rule(
      experiment.stats,
      family_size(experiment.stats, static_cast<int>(experiment.sweep.concurrency.size()),
                  static_cast<int>(experiment.variants.size())));
  return run_experiment(experiment, options, rule);
}

int exit_status(const RunOutcome& outcome) {
  if (outcome.error) return kExitError;
  const RunRecord& record = outcome.record;
  if (std::any_of(record.arms.begin(), record.arms.end(),
                  [](const ArmRecord& arm) { return !arm.valid; })) {
    return kExitInvalid;
  }
  if (record.partial) return kExitPartial;
  if (record.analysis &&
      std::any_of(record.analysis->variants.begin(), record.analysis->variants.end(),
                  [](const VariantResult& variant) {
                    return variant.verdict == VariantVerdict::kRejected;
                  })) {
    return kExitRejected;
  }
  return kExitOk;
}

std::vector<std::string> conclusion_lines(const RunRecord& record) {
  std::vector<std::string> lines;
  for (const ArmRecord& arm : record.arms) {
    if (arm.role != ArmRole::kVariant) {
      if (!arm.valid) lines.push_back(fmt::format("{}: INVALID {}", arm.name, arm.invalid_reason));
      continue;
    }
    if (!arm.valid) {
      lines.push_back(fmt::format("{}: INVALID {}", arm.name, arm.invalid_reason));
      continue;
    }
    const VariantResult* result = nullptr;
    if (record.analysis) {
      for (const VariantResult& variant : record.analysis->variants) {
        if (variant.name == arm.name) result = &variant;
      }
    }
    if (result == nullptr || result->points.empty()) {
      lines.push_back(fmt::format("{}: no verdict (too little was measured)", arm.name));
      continue;
    }
    std::string line = fmt::format("{}: {}", arm.name, to_string(result->verdict));
    std::vector<std::string> where;
    if (!result->faster_at.empty()) {
      where.push_back(fmt::format("faster at C={}", fmt::join(result->faster_at, ", ")));
    }
    if (!result->slower_at.empty()) {
      where.push_back(fmt::format("slower at C={}", fmt::join(result->slower_at, ", ")));
    }
    std::vector<int> withheld;
    for (const PointResult& point : result->points) {
      if (point.judgement.verdict == PointVerdict::kWithheld) withheld.push_back(point.concurrency);
    }
    if (!withheld.empty()) {
      where.push_back(fmt::format("withheld at C={}: the A/A check failed there",
                                  fmt::join(withheld, ", ")));
    }
    if (!where.empty()) line += fmt::format(" ({})", fmt::join(where, "; "));
    lines.push_back(std::move(line));
  }
  if (record.partial) lines.push_back("partial run: " + record.partial_reason);
  return lines;
}

std::vector<int> shuffled(std::vector<int> items, std::mt19937_64& generator) {
  for (std::size_t i = items.size(); i > 1; --i) {
    const auto j = static_cast<std::size_t>(bounded(generator, i));
    std::swap(items[i - 1], items[j]);
  }
  return items;
}

void judge_throttling(RunRecord& record, double fraction) {
  int peak = -1;
  for (const Sample& sample : record.samples) peak = std::max(peak, sample.sm_clock_mhz);
  for (PointRecord& point : record.points) point.throttled_samples = 0;
  for (Sample& sample : record.samples) {
    sample.throttled = sample.sm_clock_mhz > 0 && sample.sm_clock_mhz < fraction * peak;
    if (sample.throttled && sample.point >= 0 &&
        sample.point < static_cast<int>(record.points.size())) {
      ++record.points[sample.point].throttled_samples;
    }
  }
}

std::optional<SweepResult> analyse(const RunRecord& record) {
  const SweepSamples samples = sweep_samples(record);
  if (samples.points.empty()) return std::nullopt;
  try {
    return analyze_sweep(samples, record.experiment.stats);
  } catch (const std::invalid_argument&) {
    return std::nullopt;
  }
}

namespace {

// The calendar fields of a time point in UTC, shared by both spellings below.
std::tm utc_fields(std::chrono::system_clock::time_point time) {
  const std::time_t seconds = std::chrono::system_clock::to_time_t(time);
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  return utc;
}

}  // namespace

std::string compact_utc(std::chrono::system_clock::time_point time) {
  const std::tm utc = utc_fields(time);
  return fmt::format("{:04}{:02}{:02}T{:02}{:02}{:02}Z", utc.tm_year + 1900, utc.tm_mon + 1,
                     utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec);
}

std::string iso8601_utc(std::chrono::system_clock::time_point time) {
  const std::tm utc = utc_fields(time);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z", utc.tm_year + 1900, utc.tm_mon + 1,
                     utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec);
}

std::string format_duration(double seconds) {
  constexpr long kSecondsPerHour = 3600;
  constexpr long kMinute = 60;
  // Under 10 s to a tenth: a budget of 0.4 s is not "0s".
  if (seconds < 9.95) return fmt::format("{:.1f}s", std::max(0.0, seconds));
  const long total = std::lround(seconds);
  if (total < kMinute) return fmt::format("{}s", total);
  if (total < kSecondsPerHour) return fmt::format("{}m{:02}s", total / kMinute, total % kMinute);
  return fmt::format("{}h{:02}m", total / kSecondsPerHour, (total % kSecondsPerHour) / kMinute);
}

}  // namespace mlalab::ab
