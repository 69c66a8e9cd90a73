#pragma once
// An A/B experiment as declared in its TOML file: why (hypothesis), what (the arms), where
// (the sweep) and how (measurement and decision settings). load_experiment refuses a
// malformed file with the line and field, and an unknown knob or an infeasible config before
// anything runs. docs/experiments.md is the user's guide to the same schema.
//
// The schema. Every key is listed; a key not listed here is refused wherever it appears (a
// misspelt knob must never silently fall back to a default).
//
//   name       = "occupancy"        required; [a-zA-Z0-9_.-]+, names the results folder
//   hypothesis = "8 warps per SM hide the gather latency: +15-25%"   required, non-empty
//   backend    = "cuda"             "cuda" (default) or "cpu": what kernel arms run on;
//                                   refused when the arms are commands (backend "none")
//
//   [sweep]                         required table
//   layout      = "v4"              "v3" | "v4" (default v4): the cache row width
//   heads       = 16                query heads, [1, 128] (default 16)
//   page_size   = 64                a power of two in [1, 128] (default 64)
//   concurrency = [1, 8, 16]        required: batch sizes, each in [1, 65536], ascending,
//                                   distinct, non-empty; one sweep point each
//   context     = 4096              tokens per request, [1, 2^20] (default 4096), or a seeded
//                                   distribution (each request draws its own length):
//     { distribution = "uniform", min = 512, max = 8192, seed = 7 }
//     { distribution = "lognormal", median = 2048, sigma = 0.8, min = 64, max = 32768, seed = 7 }
//                                   uniform: min and max required; lognormal: median and sigma
//                                   required (sigma in (0, 4]), min/max default 1 and 2^20,
//                                   median within them; lengths clamped to [min, max]; seed ≥ 0
//                                   (default 1); see ab/context_lengths.h
//
//   [measure]                       optional table, every key optional
//   launches_per_sample = 20        [1, 100000]
//   instances_per_arm   = 1         [1, 64]: a GPU kernel arm is prepared this many times
//                                   (a CUDA graph and workspace each), replayed in turn, so
//                                   that what one instance happens to cost (up to ±1 % at 128
//                                   heads, fixed for its life) averages out instead of
//                                   shifting the arm
//   max_minutes         = 30        (0, 10080]: the whole run's wall-time cap
//   throttle_fraction   = 0.9       [0, 1]; 0 never flags a sample as throttled
//   heat_ms             = 0         [0, 60000]: before each sample, the arm's own samples run
//                                   for this long and are discarded, so that the sample is
//                                   taken at the clock the arm's sustained load holds (a GPU
//                                   at its power cap) rather than a burst's; 0: no heat. With
//                                   heat throttle_fraction defaults to 0, and a nonzero one is
//                                   refused: the lowered clock is what heat measures
//
//   [decision]                      optional table, every key optional: the ab::Settings fields
//   min_effect_pct = 2.0            [0, 100)
//   alpha          = 0.05           (0, 0.5]
//   min_rounds     = 10             [3, 1000000]: the first look
//   max_rounds     = 150            [min_rounds, 1000000]: the last look
//   time_budget_s  = 600            (0, 604800]: per sweep point
//   seed           = 1              [0, 2^63)
//   correction     = "holm"         "holm" | "bh"
//   family         = "each_variant" "each_variant" | "whole_sweep"
//   (resamples, a setting of the earlier bootstrap statistics, is refused with that reason)
//
//   [baseline]                      required: one arm (below); its name defaults to "baseline"
//   [[variant]]                     required, at least one: one arm each, name required
//
// An arm is a kernel arm or a command arm; all arms of one experiment are of one kind, since
// each variant is compared with the baseline on one metric.
//
//   Kernel arm, backend cuda:
//     variant = "h16_t16_w4_s2"     a compiled registry variant, or instead of it any of
//     block_h = 16  block_t = 16  warps = 4  stages = 2     the four knobs. The baseline
//                                   needs all four; a variant arm takes the knobs it does not
//                                   set from the baseline, and the result must be compiled.
//     split = "target_ctas:512"     heuristic | fixed:N | target_ctas:T | balanced[:W]; a
//                                   variant arm without it takes the baseline's (default
//                                   heuristic)
//     table = "tuning.json"         instead of the above: a tuned arm, which runs at each
//                                   point the table's choice for its batch and longest context
//                                   (a path relative to the experiment file's folder; the
//                                   table must be for the sweep's layout, heads and page size)
//   Kernel arm, backend cpu:
//     variant = "cpu"               optional (the only CPU kernel)
//     threads = 2                   [0, 4096], 0 = every hardware thread; a variant arm
//                                   without it takes the baseline's (default 0)
//   Kernel arm, either backend:
//     build = "../old/bin/mlalab"   another mlalab binary (relative to the experiment file's
//                                   folder) that runs the arm in `mlalab worker`, e.g. the
//                                   previous commit's build; not inherited from the baseline.
//                                   Its variants are that build's: this build neither lists
//                                   nor judges them, the worker refuses one it lacks
//   Command arm (a whole serving benchmark, say):
//     command   = "python3 bench.py --concurrency $MLALAB_CONCURRENCY"   run through /bin/sh
//     env       = { VLLM_MLA_WARPS = "8" }   string values; MLALAB_CONCURRENCY is reserved
//     metric    = 'throughput: ([0-9.]+) tok/s'   ECMAScript regex (std::regex), at least
//                                   one capture group; the first is the sample
//     better    = "higher"          "higher" | "lower"; must agree across arms
//     timeout_s = 600               (0, 86400]
//                                   The baseline needs command, metric and better; a variant
//                                   arm takes what it does not set from the baseline, and its
//                                   env is merged over the baseline's.
//   Every arm:
//     name       = "8 warps"        unique, 1 to 64 printable characters
//     prediction = 20.0             variants only: the expected change in %, (-100, 10000]
//
// Variant arms must differ from the baseline and from each other. On the cuda backend each
// kernel arm of this build must be feasible (dispatch::judge): with a GPU, on that GPU's resources;
// without one, on the shared-memory plan against the largest limit of any supported GPU. A
// missing GPU itself is not a parse error: the runner reports it.
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <variant>
#include <vector>

#include "ab/stats.h"
#include "core/backend.h"
#include "core/kernel_config.h"
#include "core/layout.h"

namespace mlalab::ab {

// A kernel arm: one compiled variant of the registry and a split policy. On the CPU backend
// the variant is "cpu" (the CPU backend) with a thread count instead. A tuned arm names a
// tuning table instead: at each point it runs what a Dispatcher with that table would
// (dispatch::resolve_launch for the point's batch and longest context). A Python arm names a
// Python callable instead, which `python -m mlalab.worker` runs on the point's problem
// (python/mlalab/worker.py); variant, split, table and build are then empty.
struct KernelArm {
  std::string variant;   // registry name (h16_t16_w4_s2) or "cpu"; empty for a tuned arm
  SplitPolicy split;     // ignored by the CPU backend and by a tuned arm
  std::string table{};   // a tuned arm's tuning table (a path); empty otherwise
  int cpu_threads = 0;   // CPU backend only; 0 = all hardware threads
  // Another mlalab build that runs this arm (a path to its binary, e.g. the previous commit's),
  // through `mlalab worker` (ab/worker.h); empty: this build.
  std::string build{};
  std::string python{};  // "module:function"; empty for the other kernel arms
  std::string params{};  // a Python arm's params: a JSON object, "{}" when none are given
  bool operator==(const KernelArm&) const = default;
};

inline constexpr const char* kCpuVariant = "cpu";

// Which process runs a kernel arm: "" for this one, another build's path (its `mlalab worker`),
// or kPythonWorker (`python -m mlalab.worker`).
inline constexpr const char* kPythonWorker = "python -m mlalab.worker";
inline std::string worker_of(const KernelArm& arm) {
  return arm.python.empty() ? arm.build : kPythonWorker;
}

// An external-command arm: a whole serving benchmark, say. The command runs once per sample
// through /bin/sh with the environment overrides (and MLALAB_CONCURRENCY set to the sweep
// point's concurrency); the first capture group of metric_regex on its stdout is the sample.
struct CommandArm {
  std::string command;
  std::map<std::string, std::string> env;
  std::string metric_regex;  // ECMAScript syntax (std::regex), ≥ 1 capture group
  Direction direction = Direction::kHigherIsBetter;
  double timeout_s = 600.0;
  bool operator==(const CommandArm&) const = default;
};

inline constexpr const char* kConcurrencyEnvVar = "MLALAB_CONCURRENCY";

struct Arm {
  std::string name;                        // unique; "baseline" for the baseline by default
  std::optional<double> prediction_pct;    // the hypothesis's expected change vs baseline
  std::variant<KernelArm, CommandArm> config;
  bool is_kernel() const { return std::holds_alternative<KernelArm>(config); }
};

// One line describing an arm's config, as reports print it: "h16_t16_w4_s2 target_ctas:512",
// "cpu threads=2" (threads=all for 0), " in /path/to/mlalab" after either for an arm of another
// build, "python mlalab.triton_decode:arm {"num_warps":8}" for a Python arm, or a command
// with its env overrides in front, "VLLM_MLA_WARPS=8 python3 bench.py".
std::string arm_config_text(const Arm& arm);

// Context length per request: one value for all, or a seeded distribution.
struct ContextSpec {
  enum class Kind { kFixed, kUniform, kLogNormal };
  Kind kind = Kind::kFixed;
  int length = 4096;        // kFixed; the median for kLogNormal
  int min_length = 0;       // kUniform and kLogNormal: lengths are clamped to [min, max]
  int max_length = 0;
  double sigma = 0.0;       // kLogNormal: σ of ln(length)
  std::uint64_t seed = 1;
};

inline constexpr int kMaxContextLength = 1 << 20;

// Limits of settings that the command line can override too (cli/option_checks.h), so that
// both accept the same values: measure.max_minutes in (0, kMaxRunMinutes], a week, beyond
// which a run is a mistake; seeds in [0, kMaxSeed], the non-negative TOML integers.
inline constexpr double kMaxRunMinutes = 7 * 24 * 60;
inline constexpr std::int64_t kMaxSeed = std::numeric_limits<std::int64_t>::max();

struct Sweep {
  Layout layout = Layout::kV4;
  int heads = 16;
  int page_size = 64;
  std::vector<int> concurrency;  // batch sizes, ascending, distinct
  ContextSpec context;
};

// The sweep's cache layout as reports name it: "v3 (rows of d_qk 576, d_v 512)".
std::string layout_text(const Sweep& sweep);

struct MeasureSettings {
  int launches_per_sample = 20;  // back-to-back graph launches whose median is one sample
  double max_minutes = 30.0;     // whole-run budget; the run ends cleanly, marked partial
  double throttle_fraction = 0.9;  // a sample whose SM clock is below this × the run's peak
                                   // reading is flagged throttled and excluded
  double heat_ms = 0.0;  // the arm's own discarded samples before each sample; 0: none
  int instances_per_arm = 1;     // graphs (with workspaces) per GPU kernel arm, in turn
};

inline constexpr double kMaxHeatMs = 60000.0;
inline constexpr int kMaxLaunchesPerSample = 100000;
inline constexpr int kMaxInstancesPerArm = 64;

// throttle_fraction where none is given: off with heat, whose lowered clock is what it
// measures, not a disturbance to exclude; else the default check.
inline double default_throttle_fraction(double heat_ms) {
  return heat_ms > 0 ? 0.0 : MeasureSettings{}.throttle_fraction;
}

struct Experiment {
  std::string name;        // [a-zA-Z0-9_.-]+, used in the results folder name
  std::string hypothesis;  // the why, with its premise
  Backend backend = Backend::kCuda;  // kCuda or kCpu for kernel arms (the CLI's --backend
                                     // overrides), kNone when the arms are commands
  Arm baseline;
  std::vector<Arm> variants;
  Sweep sweep;
  MeasureSettings measure;
  Settings stats;          // decision settings (min effect, alpha, budget per point, seed)
  std::string source_path;
  std::string source_text; // the file as read, for the report and the fingerprint
};

// A malformed or refused experiment file: where and what. what() reads like a compiler's
// message, "experiments/x.toml:23: variant[1].wraps: unknown key 'wraps' in ...", or with a
// column for TOML syntax errors, "experiments/x.toml:4:17: TOML syntax: ...".
class ExperimentError : public std::runtime_error {
 public:
  ExperimentError(std::string path, int line, std::string field, const std::string& message);
  ExperimentError(std::string path, int line, int column, std::string field,
                  const std::string& message);
  const std::string& path() const { return path_; }
  int line() const { return line_; }  // 0 when the problem is not on one line
  int column() const { return column_; }  // 0 unless a TOML syntax error
  const std::string& field() const { return field_; }  // e.g. "variant[1].split"; may be empty

 private:
  std::string path_;
  int line_;
  int column_ = 0;
  std::string field_;
};

// Whether a kernel variant may run at the experiment's layout: std::nullopt when it may,
// otherwise why not (tune's reason).
using FeasibilityCheck =
    std::function<std::optional<std::string>(const VariantShape& shape, Layout layout)>;

// The default check. With a GPU: the variant's resources on it (dispatch::query_usage) judged
// against its limits; a variant that cannot be queried there (its architecture was not built)
// is refused. Without a GPU: the shared-memory plan (dispatch::planned_usage) judged against the
// largest per-CTA shared memory of any GPU mlalab builds for, so only a variant that can run
// nowhere is refused. The GPU is queried once, at the first call.
FeasibilityCheck default_feasibility_check();

// What parse_experiment checks against; the defaults are this build and this machine. Tests
// inject both to exercise variants a build lacks and limits a machine does not have.
struct ParseOptions {
  // The variants kernel arms may name; std::nullopt: kernels::compiled_variants().
  std::optional<std::vector<std::string>> compiled_variants;
  // Judges every kernel arm's variant (cuda backend); empty: default_feasibility_check().
  FeasibilityCheck feasibility;
};

// What the parser itself checks arms against, given in full: it reads no build and no GPU.
struct ParseInputs {
  std::vector<std::string> compiled_variants;  // the variants kernel arms may name
  FeasibilityCheck feasibility;                // for cuda experiments; empty: not judged
};

// The parser: TOML text → Experiment, every field checked (names, ranges, arms against
// `inputs`). Needs no CUDA (experiment.cpp); what follows adds this build and machine
// (experiment_here.cpp). Throws ExperimentError.
Experiment parse_experiment_text(const std::string& text, const std::string& path_for_errors,
                                 const ParseInputs& inputs);

// The parser with this build's variants and this machine's feasibility check unless
// `options` gives its own. Kernel arms must name a variant compiled into this build whose
// shape is feasible (dispatch::judge on this GPU, or on the shared-memory plan without one);
// infeasible or unknown ones are refused with the reason. Throws ExperimentError.
Experiment load_experiment(const std::string& path, const ParseOptions& options = {});
Experiment parse_experiment(const std::string& text, const std::string& path_for_errors,
                            const ParseOptions& options = {});

}  // namespace mlalab::ab
