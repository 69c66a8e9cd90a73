#include "cli/ab_command.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

#include "ab/environment.h"
#include "ab/experiment.h"
#include "ab/plan.h"
#include "ab/run_record.h"
#include "ab/runner.h"
#include "cli/exit_status.h"
#include "cli/option_checks.h"
#include "cli/stop_signal.h"
#include "core/number_text.h"
#include "kernels/registry.h"
#include "report/report_writer.h"
#include "report/results_json.h"

namespace mlalab::cli {
namespace {

constexpr const char* kDefaultOut = "results";
// Folders of runs started in the same second get -2, -3, ...; past this many something is off.
constexpr int kMaxFolderSuffix = 1000;
struct AbOptions {
  std::string experiment_path;
  std::string out = kDefaultOut;
  std::optional<double> max_minutes;
  std::optional<std::uint64_t> seed;
  std::optional<double> heat_ms;
  std::optional<int> launches_per_sample;
  std::optional<std::string> backend;
  bool plan = false;        // only plan: a pilot of min_rounds rounds per point, then the plan
  std::string plan_from;    // only plan, from this earlier run's results.json
};

// The word as a shell reads it back: quoted unless it is plainly safe.
std::string shell_quoted(const std::string& word) {
  const bool plain = !word.empty() && word.find_first_not_of(
                                          "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                          "0123456789_./-=:,+@%") == std::string::npos;
  if (plain) return word;
  std::string quoted = "'";
  for (const char c : word) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

// How to reproduce the run: every setting that the command line can override made explicit
// (the seed especially), so that the line means the same whatever the defaults become.
std::string reproduce_line(const AbOptions& options, const ab::Experiment& experiment) {
  std::string line = "mlalab ab " + shell_quoted(options.experiment_path);
  // Command arms take no backend (--backend refuses them): the file says what runs.
  if (experiment.baseline.is_kernel()) {
    line += " --backend " + std::string(backend_name(experiment.backend));
  }
  line += fmt::format(" --seed {} --max-minutes {:g}", experiment.stats.seed,
                      experiment.measure.max_minutes);
  // Given on the command line (0 included: it may turn a file's heat off), or from the file.
  if (options.heat_ms || experiment.measure.heat_ms > 0) {
    line += fmt::format(" --heat-ms {:g}", experiment.measure.heat_ms);
  }
  if (options.launches_per_sample) {
    line += fmt::format(" --launches-per-sample {}", experiment.measure.launches_per_sample);
  }
  if (options.out != kDefaultOut) line += " --out " + shell_quoted(options.out);
  return line;
}

// How to build the binary that ran: the selection it was configured with, since the default
// build (every variant for three architectures) is far more than most runs need.
std::string build_line() {
  const kernels::BuildSelection selection = kernels::build_selection();
  return fmt::format("MLALAB_VARIANTS={} MLALAB_CUDA_ARCHS={} bash scripts/build.sh",
                     shell_quoted(std::string(selection.variants_regex)),
                     shell_quoted(std::string(selection.cuda_archs)));
}

// <out>/<name>-<start>/, created; a suffix when a run of the same second got there first.
std::filesystem::path create_results_folder(const std::filesystem::path& out,
                                            const std::string& name,
                                            std::chrono::system_clock::time_point started) {
  const std::string base = fmt::format("{}-{}", name, ab::compact_utc(started));
  // The --out check found its nearest existing folder writable; a file system can still refuse
  // (/proc, a full disk): said in the option's words, not as the library's exception.
  std::error_code error;
  std::filesystem::create_directories(out, error);
  if (error) {
    throw std::runtime_error(
        fmt::format("--out {}: cannot create the folder: {}", out.string(), error.message()));
  }
  for (int suffix = 1; suffix <= kMaxFolderSuffix; ++suffix) {
    const std::filesystem::path dir =
        out / (suffix == 1 ? base : fmt::format("{}-{}", base, suffix));
    if (std::filesystem::create_directory(dir, error)) return dir;
    if (error) {
      throw std::runtime_error(fmt::format("--out {}: cannot create the results folder {}: {}",
                                           out.string(), dir.string(), error.message()));
    }
  }
  throw std::runtime_error(
      fmt::format("cannot create a new results folder named {}* in {}", base, out.string()));
}

// What is about to run, where, and where its results go.
std::string start_text(const ab::RunRecord& record, const std::filesystem::path& dir) {
  const ab::Experiment& experiment = record.experiment;
  const ab::EnvironmentRecord& environment = record.environment;
  std::string machine = ab::ran_on_text(environment);
  if (environment.backend == Backend::kCuda && environment.max_sm_clock_mhz > 0) {
    machine += fmt::format(", max SM clock {} MHz, driver {}", environment.max_sm_clock_mhz,
                           environment.driver.empty() ? "unknown" : environment.driver);
  }
  std::string text = fmt::format(
      "mlalab ab: {}: {} arms (the baseline twice, as A and A′, and {}) at {} {}, at most {:g} "
      "minute{}\n"
      "host load at the start: {}\n",
      experiment.name, record.arms.size(),
      counted(static_cast<long long>(experiment.variants.size()), "variant"),
      counted(static_cast<long long>(record.points.size()), "sweep point"), machine, experiment.measure.max_minutes,
      experiment.measure.max_minutes == 1 ? "" : "s", ab::start_load_text(environment));
  if (const auto warning = ab::start_load_warning(environment)) {
    text += "warning: " + *warning + "\n";
  }
  return text + fmt::format("results go to {} after every finished point; Ctrl-C stops and "
                            "keeps what was measured\n",
                            dir.string());
}

// The plan (ab/plan.h) from a record: one line per point and variant on stdout.
void print_plan(const ab::RunRecord& record, const ab::Experiment& experiment,
                const std::string& source) {
  std::cout << fmt::format(
      "plan for {} ({}): at {:g} % minimum effect, α {:g}, {} to {} rounds per point, power "
      "{:g} %\n",
      experiment.name, source, experiment.stats.min_effect_pct, experiment.stats.alpha,
      experiment.stats.min_rounds, experiment.stats.max_rounds, ab::kPlanningPower * 100);
  for (const std::string& line : ab::plan_lines(ab::plan_sweep(record, experiment), experiment)) {
    std::cout << "  " << line << '\n';
  }
}

// Why an earlier run's noise may not be this experiment's: its samples were measured
// differently (heat moves the clock and widens the noise; longer samples average more).
std::optional<std::string> sample_mismatch(const ab::MeasureSettings& earlier,
                                           const ab::MeasureSettings& now) {
  std::vector<std::string> differences;
  if (earlier.heat_ms != now.heat_ms) {
    differences.push_back(fmt::format("heat_ms {:g} (this experiment: {:g})", earlier.heat_ms,
                                      now.heat_ms));
  }
  if (earlier.launches_per_sample != now.launches_per_sample) {
    differences.push_back(fmt::format("launches_per_sample {} (this experiment: {})",
                                      earlier.launches_per_sample, now.launches_per_sample));
  }
  if (differences.empty()) return std::nullopt;
  return fmt::format("its samples were measured with {}: the plan's noise is that run's, and "
                     "may not be this experiment's",
                     fmt::join(differences, " and "));
}

// --plan: a pilot of min_rounds rounds at every point (the first look's worth, nothing
// written), then the plan; --plan-from: the plan from an earlier run's samples.
int run_plan(const AbOptions& options, const ab::Experiment& experiment) {
  if (!options.plan_from.empty()) {
    try {
      const ab::RunRecord earlier = report::read_results_json(options.plan_from);
      if (const auto warning = sample_mismatch(earlier.experiment.measure, experiment.measure)) {
        std::cerr << "warning: --plan-from " << options.plan_from << ": " << *warning << '\n';
      }
      print_plan(earlier, experiment, options.plan_from);
    } catch (const std::exception& error) {
      std::cerr << "error: --plan-from " << options.plan_from << ": " << error.what() << '\n';
      return kExitError;
    }
    return kExitOk;
  }
  ab::Experiment pilot = experiment;
  pilot.stats.max_rounds = pilot.stats.min_rounds;
  ab::RunOutcome outcome;
  {
    StopSignalScope signals("mlalab ab", "the results folder holds every finished sweep point");
    std::cerr << fmt::format("mlalab ab --plan: a pilot of {} rounds at each of {} points\n",
                             pilot.stats.min_rounds, pilot.sweep.concurrency.size());
    ab::RunOptions run_options;
    run_options.stop_signal = &StopSignalScope::signal();
    run_options.progress = &std::cerr;
    run_options.progress_in_place = isatty(STDERR_FILENO) != 0;
    try {
      outcome = ab::run_experiment(pilot, run_options);
    } catch (const std::exception& error) {
      std::cerr << "error: " << error.what() << '\n';
      return kExitError;
    }
  }
  if (outcome.error) {
    std::cerr << "error: " << *outcome.error << '\n';
    return kExitError;
  }
  print_plan(outcome.record, experiment,
             fmt::format("a pilot of {} rounds per point", pilot.stats.min_rounds));
  return kExitOk;
}

int run_ab_command(const AbOptions& options) {
  ab::Experiment experiment;
  try {
    experiment = ab::with_overrides(ab::load_experiment(options.experiment_path),
                                    ab::Overrides{.backend = options.backend ? parse_backend(*options.backend) : std::nullopt,
                                                  .max_minutes = options.max_minutes,
                                                  .seed = options.seed,
                                                  .heat_ms = options.heat_ms,
                                                  .launches_per_sample =
                                                      options.launches_per_sample});
  } catch (const std::exception& error) {
    std::cerr << "error: " << error.what() << '\n';
    return kExitError;
  }
  if (options.plan || !options.plan_from.empty()) return run_plan(options, experiment);

  const auto started = std::chrono::system_clock::now();
  std::filesystem::path dir;  // created once the run is set up, so a refused run leaves none
  ab::RunOutcome outcome;
  {
    StopSignalScope signals("mlalab ab", "the results folder holds every finished sweep point");
    const ab::RunOptions run_options{
        .command_line = reproduce_line(options, experiment),
        .build_command = build_line(),
        .started = started,
        .stop_signal = &StopSignalScope::signal(),
        .progress = &std::cerr,
        .progress_in_place = isatty(STDERR_FILENO) != 0,
        .on_started =
            [&](const ab::RunRecord& record) {
              dir = create_results_folder(options.out, experiment.name, started);
              std::cerr << start_text(record, dir);
            },
        .on_checkpoint = [&dir](const ab::RunRecord& record) {
          report::write_report(record, dir);
        }};
    try {
      outcome = ab::run_experiment(experiment, run_options);
    } catch (const std::exception& error) {
      std::cerr << "error: " << error.what() << '\n';
      return kExitError;
    }
  }

  try {
    report::write_report(outcome.record, dir);
  } catch (const std::exception& error) {
    std::cerr << fmt::format("error: writing the report into {} failed: {}\n", dir.string(),
                             error.what());
    return kExitError;
  }
  if (outcome.error) std::cerr << "error: " << *outcome.error << '\n';

  std::cout << fmt::format("{}{}: {}\n", experiment.name,
                           outcome.record.partial ? " (partial)" : "", dir.string());
  for (const std::string& line : ab::conclusion_lines(outcome.record)) {
    std::cout << "  " << line << '\n';
  }
  return ab::exit_status(outcome);
}

}  // namespace

CLI::App* add_ab_command(CLI::App& app, int& exit_code) {
  CLI::App* command = app.add_subcommand(
      "ab", "A/B lab: interleaved, counterbalanced comparison of kernel configs (or commands) "
            "against a baseline and its A/A repeat, with verdicts and a report");
  // The callback owns the options, so they live as long as the command that writes them.
  auto options = std::make_shared<AbOptions>();
  command->add_option("experiment", options->experiment_path,
                      "The experiment file (TOML): hypothesis, arms, sweep, settings")
      ->required()
      ->type_name("EXPERIMENT.toml")
      ->check(CLI::ExistingFile);
  // Checked, given or not, when the command is run (below): CLI11 checks only given values.
  command->add_option("--out", options->out,
                      "Folder for the results, created when missing; each run writes to "
                      "DIR/<name>-<UTC start>/")
      ->type_name("DIR")
      ->default_str(kDefaultOut);
  add_checked_option(*command, "--max-minutes", options->max_minutes, run_minutes(),
                     fmt::format("Budget of the whole run, in (0, {:g}]; when spent the run "
                                 "stops cleanly, marked partial. Default: the file's "
                                 "measure.max_minutes",
                                 kMaxRunMinutes))
      ->type_name("M");
  add_checked_option(*command, "--seed", options->seed, integer_in(kSeedRange),
                     fmt::format("Seed of the arms' order in each round, in {}. "
                                 "Default: the file's decision.seed",
                                 range_text(kSeedRange)))
      ->type_name("S");
  add_checked_option(*command, "--heat-ms", options->heat_ms, heat_milliseconds(),
                     fmt::format("Before each sample, run the arm's own samples for this long, "
                                 "discarded, so that each arm is measured at the clock its "
                                 "sustained load holds (a GPU at its power cap), not a burst's; "
                                 "in [0, {:g}], 0 for none; above 0 the throttle check is off. "
                                 "Default: the file's measure.heat_ms",
                                 ab::kMaxHeatMs))
      ->type_name("MS");
  add_checked_option(*command, "--launches-per-sample", options->launches_per_sample,
                     launches_per_sample(),
                     fmt::format("Back-to-back kernel launches whose median is one sample, in "
                                 "[1, {}]; with heat give a sample ~40 ms or more (500 at 128 "
                                 "heads), since shorter ones each catch one step of the capped "
                                 "clock. Default: the file's measure.launches_per_sample",
                                 ab::kMaxLaunchesPerSample))
      ->type_name("N");
  command->add_flag("--plan", options->plan,
                    "Only plan: measure min_rounds rounds at every point (a pilot, nothing "
                    "written), then print per point and variant the noise, the rounds the "
                    "expected change (the prediction, else 2 × min_effect_pct) needs for 90 % "
                    "power, their time, and what max_rounds can detect");
  command->add_option("--plan-from", options->plan_from,
                      "Only plan, from the samples of an earlier run (its results.json) "
                      "instead of a pilot")
      ->type_name("RESULTS.json")
      ->check(CLI::ExistingFile);
  command->add_option("--backend", options->backend,
                      "Where kernel arms run, overriding the file's backend: cuda, or cpu (the "
                      "CPU backend: arms must then differ in threads, as in "
                      "experiments/cpu-demo.toml). Refused for command arms")
      ->check(CLI::IsMember({"cuda", "cpu"}));
  command->footer(
      "Every kernel arm is checked against the fp64 reference at every sweep point before it is\n"
      "timed; a wrong one is INVALID. Each round measures every arm once in a seeded random\n"
      "order; each point is analysed at a few looks and stops at one once every comparison is\n"
      "settled (beyond or within ±min_effect_pct) or its A/A check fails, else when its budget\n"
      "is spent.\n"
      "Arms: a compiled variant (variant, knobs, split, threads), a tuning table (table), the\n"
      "same in another build (build = \"path/to/mlalab\": its `mlalab worker`), a Python\n"
      "callable (python = \"module:function\", params: run by `python -m mlalab.worker` of\n"
      "$MLALAB_PYTHON or python3), or a shell command (command, metric): docs/experiments.md.\n"
      "Exit status (first match wins): 2 an error; 3 an arm INVALID (wrong results, or no\n"
      "valid sample); 4 a partial run (Ctrl-C, SIGTERM, or the time ran out before every\n"
      "point had min_rounds paired rounds); 1 a variant REJECTED; 0 otherwise.\n"
      "\n"
      "Examples:\n"
      "  mlalab ab experiments/cpu-demo.toml            the lab on the CPU, about a minute\n"
      "  mlalab ab experiments/occupancy.toml --plan    the noise, and the rounds a change needs\n"
      "  mlalab ab experiments/occupancy.toml --out lab --max-minutes 20\n"
      "  mlalab ab experiments/batch-aware-h128.toml --heat-ms 300 --launches-per-sample 500\n"
      "                                                 at the power cap\n"
      "  mlalab verify lab/occupancy-<UTC start>/fingerprint.json --experiment "
      "experiments/occupancy.toml");
  command->callback([options, &exit_code] {
    std::string error;
    if (!output_folder()("--out", options->out, &error)) throw CLI::ValidationError(error);
    exit_code = run_ab_command(*options);
  });
  return command;
}

}  // namespace mlalab::cli
